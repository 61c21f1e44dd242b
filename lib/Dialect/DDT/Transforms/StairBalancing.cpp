//===- StairBalancing.cpp - Kernel family and equal work units ------------===//

#include "ddtc/Dialect/DDT/DDTLayout.h"
#include "ddtc/Dialect/DDT/Passes.h"

namespace ddtc::ddt {
#define GEN_PASS_DEF_STAIRBALANCING
#include "ddtc/Dialect/DDT/Passes.h.inc"
} // namespace ddtc::ddt

using namespace mlir;
using namespace ddtc;
using namespace ddtc::ddt;

namespace {
struct StairBalancingPass
    : public ddt::impl::StairBalancingBase<StairBalancingPass> {
  void runOnOperation() override {
    DefineOp define = getOperation();
    LayoutOp layout = getNormalizedLayout(define, "ddt-stair-balancing");
    if (!layout)
      return signalPassFailure();
    PlanStage stage;
    KernelPlan plan = readPlan(layout, stage);
    if (stage == PlanStage::Layout) {
      layout.emitError("ddt-stair-balancing needs the access width: run "
                       "ddt-alignment-prologues first");
      return signalPassFailure();
    }
    balanceWorkUnits(plan);
    writePlan(define, plan, PlanStage::Balanced);
  }
};
} // namespace
