//===- ddtc.cpp - The ddtc compiler driver --------------------------------===//
//
// ddtc FILE [-t NAME] [--count N] --emit=KIND [-o OUT] [--prefix NAME]
//      [--arch sm_XX]
// Reads a .ddt spec or a .mlir file of ddt.define ops and emits the chosen
// form of one datatype (or all, for --emit=mlir and --emit=header without
// -t): its typemap, its IR, its pack/unpack kernels as CUDA C++, PTX or a
// cubin, a self-contained C header embedding them, or an explanation of how
// they were planned.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"
#include "ddtc/Dialect/DDT/DDTOps.h"
#include "ddtc/Dialect/DDT/DDTTree.h"
#include "ddtc/Dialect/DDT/Passes.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/Explain.h"
#include "ddtc/Target/CUDA/HeaderEmitter.h"
#include "ddtc/Target/CUDA/NVRTCCompiler.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>

using namespace llvm;
using namespace ddtc;

namespace {
enum class EmitKind { Typemap, MLIR, CUDA, PTX, Cubin, Header, Explain };

cl::OptionCategory category("ddtc options");

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<input .ddt or .mlir>"), cl::Required,
                               cl::cat(category));
cl::opt<std::string>
    typeName("t",
             cl::desc("The datatype to emit (default: the last one defined; "
                      "--emit=mlir and --emit=header emit all)"),
             cl::value_desc("NAME"), cl::cat(category));
cl::opt<int64_t>
    instanceCount("count",
                  cl::desc("Number of consecutive instances (default 1)"),
                  cl::init(1), cl::value_desc("N"), cl::cat(category));
cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to emit"), cl::Required,
    cl::values(clEnumValN(EmitKind::Typemap, "typemap",
                          "the packed layout: one '<offset> <length>' line per "
                          "maximal contiguous run, in pack order"),
               clEnumValN(EmitKind::MLIR, "mlir", "the ddt dialect IR"),
               clEnumValN(EmitKind::CUDA, "cuda",
                          "the pack and unpack kernels as CUDA C++"),
               clEnumValN(EmitKind::PTX, "ptx",
                          "the kernels compiled by NVRTC to PTX (--arch)"),
               clEnumValN(EmitKind::Cubin, "cubin",
                          "the kernels compiled by NVRTC to a cubin (--arch; "
                          "binary, needs -o when stdout is a terminal)"),
               clEnumValN(EmitKind::Header, "header",
                          "a C header embedding the kernels (cubin for "
                          "--arch and PTX) and host functions that launch "
                          "them through the CUDA driver API"),
               clEnumValN(EmitKind::Explain, "explain",
                          "how the kernels were planned: layout, passes, "
                          "family, width, threads and memory traffic for "
                          "--count instances")),
    cl::cat(category));
// Its values, the stops of the planning pipeline, are added in main.
cl::opt<ddt::PlanningStop>
    stopAfter("stop-after",
              cl::desc("With --emit=mlir: the last pass to run before printing "
                       "(default: none, the constructor ops)"),
              cl::init(ddt::PlanningStop::Constructors), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("OUT"), cl::init("-"),
                                cl::cat(category));

cl::opt<std::string> symbolPrefix(
    "prefix",
    cl::desc("Prefix of the kernels' names, <prefix>_pack and <prefix>_unpack "
             "(default: ddtc_ and the type's name; in a header of several "
             "types, <prefix>_ and each type's name)"),
    cl::value_desc("NAME"), cl::cat(category));
cl::opt<std::string> gpuArch(
    "arch",
    cl::desc("GPU architecture for --emit=ptx, cubin and header (default "
             "sm_90)"),
    cl::value_desc("sm_XX"), cl::init("sm_90"), cl::cat(category));

struct NamedType {
  std::string name;
  TypeRef type;
};

/// Reads every named datatype of the input, in definition order.
bool readInput(mlir::MLIRContext &context, std::vector<NamedType> &types) {
  auto buffer = MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer) {
    errs() << "ddtc: error: cannot read '" << inputFile
           << "': " << buffer.getError().message() << "\n";
    return false;
  }
  if (!StringRef(inputFile).ends_with(".mlir")) {
    SpecFile spec;
    std::string error;
    if (!parseSpec((*buffer)->getBuffer(), inputFile, spec, error)) {
      errs() << error << "\n";
      return false;
    }
    for (const SpecBinding &b : spec.bindings)
      types.push_back({b.name, b.type});
    return true;
  }
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return false;
  ddt::DefinitionTrees trees;
  for (auto define : module->getOps<ddt::DefineOp>()) {
    if (!define.getYieldedType()) {
      define.emitError("ddtc reads definitions made of constructor ops; @")
          << define.getSymName()
          << " is already normalized (run the passes on it with ddt-opt)";
      return false;
    }
    std::string error;
    mlir::Operation *culprit = nullptr;
    TypeRef t = trees.get(define, error, &culprit);
    if (!t) {
      (culprit ? culprit : define.getOperation())->emitError(error);
      return false;
    }
    types.push_back({define.getSymName().str(), t});
  }
  return true;
}

void emitTypemap(const NamedType &nt, raw_ostream &os) {
  const LayoutInfo &l = nt.type->layout();
  std::vector<Run> runs = flatten(*nt.type, instanceCount);
  os << "# type: " << nt.name << "\n"
     << "# count: " << instanceCount << "\n"
     << "# size: " << l.size << "\n"
     << "# extent: " << l.extent << "\n"
     << "# lb: " << l.lb << "\n"
     << "# true_lb: " << l.trueLb << "\n"
     << "# true_extent: " << l.trueExtent << "\n"
     << "# runs: " << runs.size() << "\n";
  for (const Run &r : runs)
    os << r.offset << " " << r.length << "\n";
}

bool emitMLIR(mlir::MLIRContext &context, const std::vector<NamedType> &types,
              raw_ostream &os) {
  mlir::OpBuilder builder(&context);
  mlir::Location loc = mlir::FileLineColLoc::get(&context, inputFile, 0, 0);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  // A type that an earlier binding names is referred to, not copied, so
  // the IR grows with the spec, not with the depth of its bindings.
  ddt::NamedTypes named;
  for (const NamedType &nt : types) {
    ddt::buildDefine(builder, loc, nt.name, *nt.type, named);
    named.try_emplace(nt.type.get(), nt.name);
  }
  if (failed(mlir::verify(*module)))
    return false;
  mlir::PassManager pm(&context);
  ddt::buildPlanningPipeline(pm, stopAfter);
  if (failed(pm.run(*module)))
    return false;
  module->print(os);
  return true;
}

/// The type's name with every character that cannot appear in a C
/// identifier replaced by '_'.
std::string identifierPart(const NamedType &nt) {
  std::string p;
  for (char c : nt.name)
    p += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return p;
}

/// The kernels' symbol prefix: --prefix, or ddtc_ and the type's name with
/// every character that cannot appear in a C identifier replaced by '_'.
std::string kernelPrefix(const NamedType &nt) {
  if (!symbolPrefix.empty())
    return symbolPrefix;
  return "ddtc_" + identifierPart(nt);
}

bool isIdentifier(StringRef s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  return llvm::all_of(s, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// The NVRTC compile of the kernels `k` of `nt`, as --emit=ptx and
/// --emit=cubin do it. Prints the error and returns false when it fails.
bool compileKernels(const NamedType &nt, const EmittedKernels &k,
                    NVRTCOutput output, std::string &binary) {
  std::string error;
  const NVRTCCompiler *nvrtc = NVRTCCompiler::get(error);
  if (!nvrtc) {
    errs() << "ddtc: error: " << error << "\n";
    return false;
  }
  NVRTCResult r = nvrtc->compile(k.text(), nt.name + ".cu", output, gpuArch);
  if (!r.ok) {
    errs() << "ddtc: error: " << r.error << "\n";
    return false;
  }
  if (!r.log.empty())
    errs() << r.log;
  binary = std::move(r.binary);
  return true;
}

/// `s` in upper case with every character that cannot appear in a C
/// identifier replaced by '_'.
std::string macroName(StringRef s) {
  std::string m;
  for (char c : s)
    m += std::isalnum(static_cast<unsigned char>(c))
             ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
             : '_';
  return m;
}

/// The C header of the kernels of `types`, each compiled to a cubin for
/// --arch and to PTX for the matching virtual architecture.
bool emitHeaderFile(const std::vector<NamedType> &types, raw_ostream &os) {
  std::string digits = gpuArch;
  for (StringRef p : {"sm_", "compute_"})
    if (StringRef(digits).starts_with(p))
      digits = digits.substr(p.size());
  std::vector<HeaderType> headerTypes;
  for (const NamedType &nt : types) {
    HeaderType h;
    h.name = nt.name;
    h.description = printSpecExpr(*nt.type);
    // One type: the prefix of --emit=cuda; several: <prefix>_<name>.
    h.prefix = types.size() == 1 || symbolPrefix.empty()
                   ? kernelPrefix(nt)
                   : symbolPrefix + "_" + identifierPart(nt);
    std::string error;
    if (!planKernel(*nt.type, h.plan, error)) {
      errs() << "ddtc: error: type " << nt.name << ": " << error << "\n";
      return false;
    }
    const LayoutInfo &l = nt.type->layout();
    h.trueLb = l.trueLb;
    h.trueExtent = l.trueExtent;
    EmittedKernels k = emitCUDA(h.plan, h.prefix);
    if (!compileKernels(nt, k, NVRTCOutput::Cubin, h.cubin) ||
        !compileKernels(nt, k, NVRTCOutput::PTX, h.ptx))
      return false;
    headerTypes.push_back(std::move(h));
  }
  HeaderOptions options;
  // The guard names the output file, else the input file.
  StringRef file =
      outputFile == "-" ? StringRef(inputFile) : StringRef(outputFile);
  options.guard = "DDTC_GENERATED_" + macroName(sys::path::stem(file)) + "_H";
  options.version = DDTC_VERSION;
  options.sourceName = sys::path::filename(inputFile).str();
  options.arch = "sm_" + digits;
  options.ptxArch = "compute_" + digits;
  std::string text, error;
  if (!emitHeader(headerTypes, options, text, error)) {
    errs() << "ddtc: error: " << error << "\n";
    return false;
  }
  os << text;
  return true;
}

/// Emits the kernels as CUDA C++, PTX or a cubin, or explains them.
bool emitKernels(const NamedType &nt, raw_ostream &os) {
  KernelPlan plan;
  std::string error;
  if (!planKernel(*nt.type, plan, error)) {
    errs() << "ddtc: error: type " << nt.name << ": " << error << "\n";
    return false;
  }
  if (emitKind == EmitKind::Explain) {
    // What libddtc adds to the plan at commit (a header keeps packed order).
    orderUnpackUnits(plan);
    os << explainKernels(nt.name, *nt.type, plan, instanceCount);
    return true;
  }
  EmittedKernels k = emitCUDA(plan, kernelPrefix(nt));
  if (emitKind == EmitKind::CUDA) {
    os << k.text();
    return true;
  }
  std::string binary;
  if (!compileKernels(nt, k,
                      emitKind == EmitKind::PTX ? NVRTCOutput::PTX
                                                : NVRTCOutput::Cubin,
                      binary))
    return false;
  os << binary;
  return true;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  for (const ddt::PlanningStopInfo &s : ddt::getPlanningStops())
    stopAfter.getParser().addLiteralOption(s.name, s.stop, s.description);
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "ddtc " << DDTC_VERSION << "\n";
    // The line tests look for to know whether ptx and cubin work here.
    std::string error;
    if (const NVRTCCompiler *nvrtc = NVRTCCompiler::get(error))
      os << "NVRTC " << nvrtc->versionString() << " (" << nvrtc->libraryPath()
         << ")\n";
    else
      os << "NVRTC not available (see DDTC_NVRTC_PATH in --help): "
            "--emit=ptx and --emit=cubin will fail\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "ddtc: compiles MPI derived datatypes to GPU pack/unpack code\n\n"
      "Reads a .ddt spec (one `name = constructor(...)` per line) or a .mlir "
      "file of ddt.define ops.\n\n"
      "--emit=ptx and --emit=cubin load NVRTC at run time: $DDTC_NVRTC_PATH "
      "(the library or its folder), else libnvrtc.so.13, .so.12 or .so from "
      "the loader's path, $CUDA_HOME/lib64 or /usr/local/cuda/lib64. "
      "`ddtc --version` says which was found. With DDTC_DUMP_SOURCE=1 a "
      "failed compile prints the numbered source.\n");

  if (instanceCount < 0) {
    errs() << "ddtc: error: --count must be non-negative, got " << instanceCount
           << "\n";
    return 1;
  }
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  context.getOrLoadDialect<ddt::DDTDialect>();
  std::vector<NamedType> types;
  if (!readInput(context, types))
    return 1;
  if (types.empty()) {
    errs() << "ddtc: error: '" << inputFile << "' defines no datatype\n";
    return 1;
  }
  if (!typeName.empty()) {
    auto it = std::find_if(types.begin(), types.end(), [](const NamedType &t) {
      return t.name == typeName;
    });
    if (it == types.end()) {
      errs() << "ddtc: error: '" << inputFile << "' defines no datatype named '"
             << typeName << "'; it defines:";
      for (const NamedType &t : types)
        errs() << " " << t.name;
      errs() << "\n";
      return 1;
    }
    types = {*it};
  }
  if (!symbolPrefix.empty() && !isIdentifier(symbolPrefix)) {
    errs() << "ddtc: error: --prefix must be a C identifier, got '"
           << symbolPrefix << "'\n";
    return 1;
  }
  if (emitKind == EmitKind::Cubin && outputFile == "-" &&
      sys::Process::StandardOutIsDisplayed()) {
    errs() << "ddtc: error: a cubin is binary; refusing to write it to a "
              "terminal (use -o FILE)\n";
    return 1;
  }
  if (emitKind == EmitKind::Typemap || emitKind == EmitKind::Explain) {
    int64_t lo, hi;
    std::string error;
    if (packedSize(*types.back().type, instanceCount) < 0 ||
        !touchedSpan(*types.back().type, instanceCount, lo, hi, error)) {
      errs() << "ddtc: error: " << instanceCount << " instances of '"
             << types.back().name << "' overflow 64-bit byte offsets\n";
      return 1;
    }
  }

  std::string openError;
  auto output = mlir::openOutputFile(outputFile, &openError);
  if (!output) {
    errs() << "ddtc: error: " << openError << "\n";
    return 1;
  }
  if (emitKind == EmitKind::Typemap)
    emitTypemap(types.back(), output->os());
  else if (emitKind == EmitKind::MLIR) {
    if (!emitMLIR(context, types, output->os()))
      return 1;
  } else if (emitKind == EmitKind::Header) {
    if (!emitHeaderFile(types, output->os()))
      return 1;
  } else if (!emitKernels(types.back(), output->os()))
    return 1;
  output->keep();
  return 0;
}
