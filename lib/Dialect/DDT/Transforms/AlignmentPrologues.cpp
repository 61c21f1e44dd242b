//===- AlignmentPrologues.cpp - Access width and prologue splits ----------===//

#include "ddtc/Dialect/DDT/DDTLayout.h"
#include "ddtc/Dialect/DDT/Passes.h"

namespace ddtc::ddt {
#define GEN_PASS_DEF_ALIGNMENTPROLOGUES
#include "ddtc/Dialect/DDT/Passes.h.inc"
} // namespace ddtc::ddt

using namespace mlir;
using namespace ddtc;
using namespace ddtc::ddt;

namespace {
struct AlignmentProloguesPass
    : public ddt::impl::AlignmentProloguesBase<AlignmentProloguesPass> {
  using AlignmentProloguesBase::AlignmentProloguesBase;
  void runOnOperation() override {
    DefineOp define = getOperation();
    LayoutOp layout = getNormalizedLayout(define, "ddt-alignment-prologues");
    if (!layout)
      return signalPassFailure();
    PlanStage stage;
    KernelPlan plan = readPlan(layout, stage);
    // Once only: a second run would rewrite the plan at the Aligned stage
    // and drop what stair balancing added (the kernel family).
    if (stage != PlanStage::Layout) {
      layout.emitError("ddt-alignment-prologues runs once, on a layout "
                       "without plan attributes; this layout already has "
                       "them");
      return signalPassFailure();
    }
    std::string error;
    if (maxPointRuns < 1 || maxPointRuns > kMaxPointRuns) {
      layout.emitError("ddt-alignment-prologues: max-point-runs must be 1 to " +
                       std::to_string(kMaxPointRuns) + ", not " +
                       std::to_string(maxPointRuns));
      return signalPassFailure();
    }
    if (!alignAccesses(plan, error, maxPointRuns)) {
      layout.emitError(error);
      return signalPassFailure();
    }
    writePlan(define, plan, PlanStage::Aligned);
  }
};
} // namespace
