//===- PlanningPipeline.cpp - The planning passes, in order ---------------===//

#include "ddtc/Dialect/DDT/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace ddtc::ddt;

llvm::ArrayRef<PlanningStopInfo> ddtc::ddt::getPlanningStops() {
  static const PlanningStopInfo stops[] = {
      {PlanningStop::Constructors, "none", "no pass: the constructor ops"},
      {PlanningStop::Normalize, "normalize",
       "the canonical layout (ddt-normalize)"},
      {PlanningStop::VectorDetection, "vector-detection",
       "+ ddt-vector-detection"},
      {PlanningStop::AlignmentPrologues, "alignment-prologues",
       "+ ddt-alignment-prologues (access width)"},
      {PlanningStop::StairBalancing, "stair-balancing",
       "+ ddt-stair-balancing (kernel family, work units)"},
      {PlanningStop::TransposeTiles, "transpose-tiles",
       "+ ddt-transpose-tiles: the full kernel plan"},
  };
  return stops;
}

void ddtc::ddt::buildPlanningPipeline(OpPassManager &pm, PlanningStop last) {
  if (last == PlanningStop::Constructors)
    return;
  pm.addPass(createNormalize());
  // The other passes look at one definition each, so they run in parallel.
  OpPassManager &perType = pm.nest<DefineOp>();
  if (last >= PlanningStop::VectorDetection)
    perType.addPass(createVectorDetection());
  if (last >= PlanningStop::AlignmentPrologues)
    perType.addPass(createAlignmentPrologues());
  if (last >= PlanningStop::StairBalancing)
    perType.addPass(createStairBalancing());
  if (last >= PlanningStop::TransposeTiles)
    perType.addPass(createTransposeTiles());
}

namespace {
struct PlanningPipelineOptions
    : public PassPipelineOptions<PlanningPipelineOptions> {
  Option<PlanningStop> stopAfter{*this, "stop-after",
                                 llvm::cl::desc("The last pass to run"),
                                 llvm::cl::init(PlanningStop::TransposeTiles)};
  PlanningPipelineOptions() {
    for (const PlanningStopInfo &s : getPlanningStops())
      stopAfter.getParser().addLiteralOption(s.name, s.stop, s.description);
  }
};
} // namespace

void ddtc::ddt::registerPlanningPipeline() {
  PassPipelineRegistration<PlanningPipelineOptions>(
      "ddt-plan",
      "The planning passes in order: the kernel plan of every definition",
      [](OpPassManager &pm, const PlanningPipelineOptions &options) {
        buildPlanningPipeline(pm, options.stopAfter);
      });
}
