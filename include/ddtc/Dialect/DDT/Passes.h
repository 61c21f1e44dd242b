//===- Passes.h - Passes of the ddt dialect ---------------------*- C++ -*-===//

#ifndef DDTC_DIALECT_DDT_PASSES_H
#define DDTC_DIALECT_DDT_PASSES_H

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Dialect/DDT/DDTOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace ddtc::ddt {

#define GEN_PASS_DECL
#include "ddtc/Dialect/DDT/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ddtc/Dialect/DDT/Passes.h.inc"

/// The last pass the planning pipeline runs.
enum class PlanningStop {
  Constructors, ///< none: the constructor ops
  Normalize,
  VectorDetection,
  AlignmentPrologues,
  StairBalancing,
  TransposeTiles
};

/// A stop of the planning pipeline as an option value: named after its last
/// pass's flag without "ddt-" ("none" for no pass).
struct PlanningStopInfo {
  PlanningStop stop;
  const char *name;
  const char *description;
};

/// Every stop, in pipeline order: the values of ddtc --stop-after and of
/// ddt-opt --ddt-plan=stop-after.
llvm::ArrayRef<PlanningStopInfo> getPlanningStops();

/// Adds the planning passes, in order, up to and including `last`, to `pm`,
/// a pass manager on a module. The one definition of the pipeline: ddtc
/// --stop-after and ddt-opt --ddt-plan run it, and a unit test checks that
/// it plans as ddtc::planKernel (which the runtime calls) does.
void buildPlanningPipeline(mlir::OpPassManager &pm,
                           PlanningStop last = PlanningStop::TransposeTiles);

/// Registers the pipeline as `ddt-plan`, with the option `stop-after`.
void registerPlanningPipeline();

} // namespace ddtc::ddt

#endif // DDTC_DIALECT_DDT_PASSES_H
