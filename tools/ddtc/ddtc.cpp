//===- ddtc.cpp - The ddtc compiler driver ----------------------------------===//
//
// ddtc FILE [-t NAME] [--count N] --emit=KIND [-o OUT]
// Reads a .ddt spec or a .mlir file of ddt.define ops and emits the chosen
// form of one datatype (or all, for --emit=mlir without -t).
//===----------------------------------------------------------------------===//

#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"
#include "ddtc/Dialect/DDT/DDTOps.h"
#include "ddtc/Dialect/DDT/DDTTree.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace ddtc;

namespace {
enum class EmitKind { Typemap, MLIR };

cl::OptionCategory category("ddtc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .ddt or .mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> typeName(
    "t", cl::desc("The datatype to emit (default: the last one defined; "
                  "--emit=mlir emits all)"),
    cl::value_desc("NAME"), cl::cat(category));
cl::opt<int64_t> instanceCount("count",
                       cl::desc("Number of consecutive instances (default 1)"),
                       cl::init(1), cl::value_desc("N"), cl::cat(category));
cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to emit"), cl::Required,
    cl::values(clEnumValN(EmitKind::Typemap, "typemap",
                          "the packed layout: one '<offset> <length>' line per "
                          "maximal contiguous run, in pack order"),
               clEnumValN(EmitKind::MLIR, "mlir", "the ddt dialect IR")),
    cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("OUT"), cl::init("-"),
                                cl::cat(category));

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
  for (auto define : module->getOps<ddt::DefineOp>()) {
    std::string error;
    mlir::Operation *culprit = nullptr;
    TypeRef t = ddt::buildTree(define.getYieldedType(), error, &culprit);
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
  for (const NamedType &nt : types)
    ddt::buildDefine(builder, loc, nt.name, *nt.type);
  if (failed(mlir::verify(*module)))
    return false;
  module->print(os);
  return true;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(
      [](raw_ostream &os) { os << "ddtc " << DDTC_VERSION << "\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "ddtc: compiles MPI derived datatypes to GPU pack/unpack code\n\n"
      "Reads a .ddt spec (one `name = constructor(...)` per line) or a .mlir "
      "file of ddt.define ops.\n");

  if (instanceCount < 0) {
    errs() << "ddtc: error: --count must be non-negative, got " << instanceCount
           << "\n";
    return 1;
  }
  mlir::MLIRContext context;
  context.getOrLoadDialect<ddt::DDTDialect>();
  std::vector<NamedType> types;
  if (!readInput(context, types))
    return 1;
  if (types.empty()) {
    errs() << "ddtc: error: '" << inputFile << "' defines no datatype\n";
    return 1;
  }
  if (!typeName.empty()) {
    auto it = std::find_if(types.begin(), types.end(),
                           [](const NamedType &t) { return t.name == typeName; });
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
  if (emitKind == EmitKind::Typemap) {
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
  else if (!emitMLIR(context, types, output->os()))
    return 1;
  output->keep();
  return 0;
}
