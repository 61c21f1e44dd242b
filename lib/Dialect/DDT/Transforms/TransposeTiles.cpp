//===- TransposeTiles.cpp - Shared-memory tiles for transposing nests -----===//

#include "ddtc/Dialect/DDT/DDTLayout.h"
#include "ddtc/Dialect/DDT/Passes.h"

namespace ddtc::ddt {
#define GEN_PASS_DEF_TRANSPOSETILES
#include "ddtc/Dialect/DDT/Passes.h.inc"
} // namespace ddtc::ddt

using namespace mlir;
using namespace ddtc;
using namespace ddtc::ddt;

namespace {
struct TransposeTilesPass
    : public ddt::impl::TransposeTilesBase<TransposeTilesPass> {
  void runOnOperation() override {
    DefineOp define = getOperation();
    LayoutOp layout = getNormalizedLayout(define, "ddt-transpose-tiles");
    if (!layout)
      return signalPassFailure();
    PlanStage stage;
    KernelPlan plan = readPlan(layout, stage);
    if (stage != PlanStage::Balanced) {
      layout.emitError("ddt-transpose-tiles needs the kernel family: run "
                       "ddt-stair-balancing first");
      return signalPassFailure();
    }
    if (detectTransposeTiles(plan))
      writePlan(define, plan, PlanStage::Balanced);
  }
};
} // namespace
