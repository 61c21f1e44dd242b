//===- Normalize.cpp - Constructor ops to the canonical layout --------------===//

#include "ddtc/Dialect/DDT/DDTLayout.h"
#include "ddtc/Dialect/DDT/DDTTree.h"
#include "ddtc/Dialect/DDT/Passes.h"

namespace ddtc::ddt {
#define GEN_PASS_DEF_NORMALIZE
#include "ddtc/Dialect/DDT/Passes.h.inc"
} // namespace ddtc::ddt

using namespace mlir;
using namespace ddtc;
using namespace ddtc::ddt;

namespace {
struct NormalizePass : public ddt::impl::NormalizeBase<NormalizePass> {
  void runOnOperation() override {
    DefineOp define = getOperation();
    auto yield = dyn_cast<YieldOp>(define.getBody().front().getTerminator());
    if (!yield)
      return; // already normalized
    std::string error;
    Operation *culprit = nullptr;
    TypeRef tree = buildTree(yield.getDatatype(), error, &culprit);
    if (!tree) {
      (culprit ? culprit : define.getOperation())->emitError(error);
      return signalPassFailure();
    }
    CanonicalLayout layout;
    if (!lowerToCanonical(*tree, layout, error)) {
      define.emitError(error);
      return signalPassFailure();
    }
    writePlan(define, makeInitialPlan(layout), PlanStage::Layout);
  }
};
} // namespace
