//===- VectorDetection.cpp - Regular tables to strided dimensions ---------===//

#include "ddtc/Dialect/DDT/DDTLayout.h"
#include "ddtc/Dialect/DDT/Passes.h"

namespace ddtc::ddt {
#define GEN_PASS_DEF_VECTORDETECTION
#include "ddtc/Dialect/DDT/Passes.h.inc"
} // namespace ddtc::ddt

using namespace mlir;
using namespace ddtc;
using namespace ddtc::ddt;

namespace {
struct VectorDetectionPass
    : public ddt::impl::VectorDetectionBase<VectorDetectionPass> {
  void runOnOperation() override {
    DefineOp define = getOperation();
    LayoutOp layout = getNormalizedLayout(define, "ddt-vector-detection");
    if (!layout)
      return signalPassFailure();
    PlanStage stage;
    KernelPlan plan = readPlan(layout, stage);
    if (stage != PlanStage::Layout) {
      layout.emitError("ddt-vector-detection runs before kernel planning; "
                       "this layout already has plan attributes");
      return signalPassFailure();
    }
    if (detectVectors(plan.layout))
      writePlan(define, plan, stage);
  }
};
} // namespace
