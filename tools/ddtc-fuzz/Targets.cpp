//===- Targets.cpp - What the fuzzer runs on one input --------------------===//

#include "Targets.h"

#include "EmulatedKernels.h"

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/PackRange.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"
#include "ddtc/Dialect/DDT/DDTDialect.h"
#include "ddtc/Dialect/DDT/DDTOps.h"
#include "ddtc/Dialect/DDT/DDTTree.h"
#include "ddtc/Dialect/DDT/Passes.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"
#include "ddtc/ddtc.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <unistd.h>

namespace ddtc::fuzz {

namespace {

/// Bindings of one spec that are taken through planning and the passes.
constexpr size_t kMaxBindings = 12;
/// Types with at most this many packed bytes and runs per instance are also
/// compared with the reference (flatten), which walks every run.
constexpr int64_t kReferenceBytes = int64_t(1) << 16;
/// Bindings whose plan lists more runs than this are planned but not built
/// into IR (the passes' cost grows with the runs: correct, but slow enough
/// to pass the time limit with no bug to find).
constexpr int64_t kMaxRunsInIR = int64_t(1) << 16;

[[noreturn]] void wrong(const std::string &why) {
  std::fprintf(stderr, "ddtc-fuzz: wrong result: %s\n", why.c_str());
  std::fflush(stderr);
  _exit(3);
}

/// A generator seeded by the input, so a saved input replays the same way.
std::mt19937_64 rngFor(const std::string &text) {
  return std::mt19937_64(std::hash<std::string>()(text));
}

/// A context with the ddt dialect whose diagnostics go nowhere: an input's
/// errors are expected, only crashes, hangs and wrong results count.
struct QuietContext {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  mlir::ScopedDiagnosticHandler quiet{
      &context, [](mlir::Diagnostic &) { return mlir::success(); }};
  QuietContext() { context.loadDialect<ddt::DDTDialect>(); }
};

/// Runs the planning passes (all, then each alone) on copies of `module`.
void runPasses(mlir::MLIRContext &context, mlir::ModuleOp module) {
  {
    // The whole pipeline, as ddtc and ddt-opt --ddt-plan run it.
    mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
    mlir::PassManager pm(&context);
    ddt::buildPlanningPipeline(pm);
    if (mlir::succeeded(pm.run(*copy))) {
      std::string text;
      llvm::raw_string_ostream os(text);
      copy->print(os);
    }
  }
  // Each pass alone, on whatever IR it gets (it must check its stage).
  using Factory = std::unique_ptr<mlir::Pass> (*)();
  const Factory perDefinition[] = {ddt::createVectorDetection,
                                   ddt::createAlignmentPrologues,
                                   ddt::createStairBalancing,
                                   ddt::createTransposeTiles};
  {
    mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
    mlir::PassManager pm(&context);
    pm.addPass(ddt::createNormalize());
    (void)pm.run(*copy);
  }
  for (Factory f : perDefinition) {
    mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
    mlir::PassManager pm(&context);
    pm.nest<ddt::DefineOp>().addPass(f());
    (void)pm.run(*copy);
  }
}

/// Plans, emits and launches `type`; compares its layout's runs with the
/// reference when that is cheap. Returns the number of runs of its plan's
/// layout (countRuns), 0 when it cannot be planned.
int64_t planAndEmit(const Datatype &type, std::mt19937_64 &rng) {
  KernelPlan plan;
  std::string error;
  if (!planKernel(type, plan, error))
    return 0;
  orderUnpackUnits(plan);
  EmittedKernels k = emitCUDA(plan, "k");
  (void)kernelShapeKey(plan);
  (void)describeParams(plan);
  std::vector<int64_t> table = encodeUnitTable(plan);
  const int64_t size = plan.layout.size;
  if (plan.family == KernelFamily::Units) {
    int64_t at = 0;
    for (const WorkUnit &u : plan.units) {
      if (u.packed != at || u.length <= 0 || u.length > plan.unitBytes)
        wrong("the work units do not tile the instance: " +
              printSpecExpr(type));
      at += u.length;
    }
    if (at != size)
      wrong("the work units cover " + std::to_string(at) + " of " +
            std::to_string(size) + " bytes: " + printSpecExpr(type));
    // The unpack's table in destination order: the same units, by origin
    // offset, tiling the instance in that order.
    if (!plan.unpackUnits.empty()) {
      std::vector<WorkUnit> a(plan.units.begin(), plan.units.end()), b;
      int64_t place = 0;
      for (const WorkUnit &u : plan.unpackUnits) {
        if (u.packed != place || (!b.empty() && b.back().src > u.src))
          wrong("the unpack's units are not in origin order: " +
                printSpecExpr(type));
        place += u.length;
        b.push_back({u.wide, u.src, u.length, 0});
      }
      for (WorkUnit &u : a)
        u.wide = 0;
      auto byPacked = [](const WorkUnit &x, const WorkUnit &y) {
        return x.packed < y.packed;
      };
      std::sort(b.begin(), b.end(), byPacked);
      if (a != b)
        wrong("the unpack's units are not the units: " + printSpecExpr(type));
    }
  }
  const int64_t count = static_cast<int64_t>(rng() % 4);
  int64_t total = 0;
  if (checkPackedBytes(size, count, total, error) && total > 0) {
    int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(total + 1));
    int64_t b = static_cast<int64_t>(rng() % static_cast<uint64_t>(total + 1));
    LaunchConfig cfg =
        computeLaunch(plan, count, std::min(a, b), std::max(a, b),
                      static_cast<int64_t>(rng() % 3));
    if (!cfg.error.empty())
      wrong("computeLaunch refused a valid range: " + cfg.error);
  }
  if (size > 0 && size <= kReferenceBytes &&
      countRuns(plan.layout) <= kReferenceBytes) {
    if (flattenLayout(plan.layout, 2) != flatten(type, 2))
      wrong("the planned layout's runs differ from the reference: " +
            printSpecExpr(type));
    for (int64_t n : {int64_t(1), 2 + count}) {
      std::string why = checkGenericKernels(type, n, rng);
      if (!why.empty())
        wrong(why + ": " + printSpecExpr(type));
    }
  }
  return countRuns(plan.layout);
}

bool runSpec(const std::string &text) {
  SpecFile spec;
  std::string error;
  if (!parseSpec(text, "fuzz.ddt", spec, error))
    return false;
  std::mt19937_64 rng = rngFor(text);
  QuietContext q;
  mlir::OpBuilder builder(&q.context);
  mlir::Location loc = mlir::UnknownLoc::get(&q.context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  size_t n = 0;
  for (const SpecBinding &b : spec.bindings) {
    if (n++ == kMaxBindings)
      break;
    std::string expr = printSpecExpr(*b.type);
    SpecFile back;
    if (!parseSpec("t = " + expr + "\n", "printed.ddt", back, error))
      wrong("the printed spec '" + expr + "' does not parse back: " + error);
    // The passes copy a plan's tables into IR attributes, once per pass:
    // types with long tables (planned above) are left out of the IR.
    if (planAndEmit(*b.type, rng) <= kMaxRunsInIR)
      ddt::buildDefine(builder, loc, b.name, *b.type);
  }
  if (mlir::succeeded(mlir::verify(*module)))
    runPasses(q.context, *module);
  return true;
}

bool runIR(const std::string &text) {
  QuietContext q;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &q.context);
  if (!module)
    return false;
  std::mt19937_64 rng = rngFor(text);
  size_t n = 0;
  ddt::DefinitionTrees trees;
  for (ddt::DefineOp define : module->getOps<ddt::DefineOp>()) {
    if (n++ == kMaxBindings)
      break;
    if (!define.getYieldedType())
      continue;
    std::string error;
    if (TypeRef t = trees.get(define, error))
      planAndEmit(*t, rng);
  }
  runPasses(q.context, *module);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  return true;
}

/// Splits a C API input into its header figures and its spec text.
void readCapiInput(const std::string &text, int64_t (&figures)[4],
                   std::string &spec) {
  const std::string tag = "# ddtc-fuzz capi ";
  spec = text;
  if (text.compare(0, tag.size(), tag) == 0) {
    size_t eol = text.find('\n');
    std::istringstream in(text.substr(tag.size(), eol - tag.size()));
    for (int64_t &f : figures)
      in >> f;
    spec = eol == std::string::npos ? "" : text.substr(eol + 1);
  }
}

bool runCAPI(const std::string &text) {
  int64_t f[4] = {1, 0, 0, 0};
  std::string spec;
  readCapiInput(text, f, spec);
  const int64_t count = f[0], lo = f[1], hi = f[2];
  const int maxCtas = static_cast<int>(f[3]);
  // No GPU, no compiler, no disk cache: the calls run their checks and the
  // planning, then stop where they would need a device or NVRTC.
  setenv("DDTC_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  setenv("DDTC_NVRTC_PATH", "/nonexistent/libnvrtc.so", 1);
  setenv("DDTC_DISABLE_CACHE", "1", 1);
  setenv("DDTC_JIT", "generic", 1);
  ddtc_type t = nullptr;
  if (ddtc_type_from_spec(spec.c_str(), nullptr, &t) != DDTC_SUCCESS)
    return false;
  int64_t size = 0, extent = 0, lb = 0, trueLb = 0, trueExtent = 0, bytes = 0;
  ddtc_type_size(t, &size);
  ddtc_type_extent(t, &extent);
  ddtc_type_lb(t, &lb);
  ddtc_type_true_extent(t, &trueLb, &trueExtent);
  std::string error;
  const bool countOk = checkPackedBytes(size, count, bytes, error);
  int64_t got = -1;
  if ((ddtc_type_packed_size(t, count, &got) == DDTC_SUCCESS) != countOk ||
      (countOk && got != bytes))
    wrong("ddtc_type_packed_size disagrees with the count " +
          std::to_string(count));
  ddtc_status commit = ddtc_type_commit(t);
  ddtc_kernel_info info;
  ddtc_type_kernel_info(t, &info);
  unsigned char buffer[64] = {0};
  const bool rangeOk = checkPackRange(size, count, lo, hi, error);
  ddtc_status pack =
      ddtc_pack(t, buffer, count, lo, hi, buffer + 32, nullptr, maxCtas);
  ddtc_unpack(t, buffer, count, lo, hi, buffer + 32, nullptr, maxCtas);
  if (commit == DDTC_SUCCESS && !rangeOk && pack != DDTC_ERROR_INVALID_ARGUMENT)
    wrong(std::string("ddtc_pack of a bad range returned ") +
          ddtc_status_name(pack));
  if (commit == DDTC_SUCCESS && rangeOk && maxCtas >= 0 &&
      pack == DDTC_ERROR_INVALID_ARGUMENT)
    wrong(std::string("ddtc_pack refused a valid call: ") + ddtc_last_error());
  // The type copied onto itself: refused for a type that is neither one
  // stream nest nor a type map of long work units (the units copy), and
  // otherwise checked as the pack is.
  const ddtc_status supported = ddtc_copy_supported(t, t);
  const ddtc_status copy = ddtc_copy(t, buffer, count, t, buffer + 32, count,
                                     lo, hi, nullptr, maxCtas);
  if (commit == DDTC_SUCCESS) {
    if (supported != DDTC_SUCCESS && copy != supported)
      wrong(std::string("ddtc_copy of a type ddtc_copy_supported refuses "
                        "returned ") +
            ddtc_status_name(copy));
    if (supported == DDTC_SUCCESS && maxCtas >= 0 &&
        (copy == DDTC_ERROR_INVALID_ARGUMENT) == rangeOk)
      wrong(std::string("ddtc_copy of the range [") + std::to_string(lo) +
            ", " + std::to_string(hi) + ") returned " + ddtc_status_name(copy) +
            ": " + ddtc_last_error());
  }
  ddtc_type_free(&t);
  return true;
}

} // namespace

const char *kindName(InputKind kind) {
  switch (kind) {
  case InputKind::Spec:
    return "spec";
  case InputKind::IR:
    return "ir";
  case InputKind::CAPI:
    return "capi";
  }
  return "?";
}

const char *kindExtension(InputKind kind) {
  switch (kind) {
  case InputKind::Spec:
    return "ddt";
  case InputKind::IR:
    return "mlir";
  case InputKind::CAPI:
    return "capi";
  }
  return "txt";
}

std::string capiHeader(int64_t count, int64_t lo, int64_t hi, int64_t maxCtas) {
  return "# ddtc-fuzz capi " + std::to_string(count) + " " +
         std::to_string(lo) + " " + std::to_string(hi) + " " +
         std::to_string(maxCtas) + "\n";
}

bool hasSelfReference(const std::string &text) {
  std::set<std::string> defined;
  std::istringstream in(text);
  std::string line;
  auto names = [](const std::string &s) {
    std::vector<std::string> out;
    for (size_t i = s.find('%'); i != std::string::npos; i = s.find('%', i)) {
      size_t e = i + 1;
      while (e < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_'))
        ++e;
      out.push_back(s.substr(i, e - i));
      i = e;
    }
    return out;
  };
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    std::string lhs = eq == std::string::npos ? "" : line.substr(0, eq);
    if (lhs.find_first_not_of(" \t%0-9a-zA-Z_#,") != std::string::npos)
      lhs.clear(); // not a result list
    std::vector<std::string> results = names(lhs);
    for (const std::string &use :
         names(lhs.empty() ? line : line.substr(eq + 1)))
      if (!defined.count(use))
        return true;
    defined.insert(results.begin(), results.end());
  }
  return false;
}

bool runInput(InputKind kind, const std::string &text) {
  switch (kind) {
  case InputKind::Spec:
    return runSpec(text);
  case InputKind::IR:
    return runIR(text);
  case InputKind::CAPI:
    return runCAPI(text);
  }
  return false;
}

} // namespace ddtc::fuzz
