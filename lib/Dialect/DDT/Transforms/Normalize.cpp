//===- Normalize.cpp - Constructor ops to the canonical layout ------------===//

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
    // Every tree first: a later definition may refer to an earlier one, whose
    // constructor ops must still be there when it is resolved.
    DefinitionTrees trees;
    std::vector<std::pair<DefineOp, TypeRef>> lowered;
    for (auto define : getOperation().getOps<DefineOp>()) {
      if (!define.getYieldedType())
        continue; // already normalized
      std::string error;
      Operation *culprit = nullptr;
      TypeRef tree = trees.get(define, error, &culprit);
      if (!tree) {
        (culprit ? culprit : define.getOperation())->emitError(error);
        return signalPassFailure();
      }
      lowered.push_back({define, std::move(tree)});
    }
    std::vector<CanonicalLayout> layouts(lowered.size());
    for (size_t i = 0; i < lowered.size(); ++i) {
      std::string error;
      if (!lowerToCanonical(*lowered[i].second, layouts[i], error)) {
        lowered[i].first.emitError(error);
        return signalPassFailure();
      }
    }
    for (size_t i = 0; i < lowered.size(); ++i)
      writePlan(lowered[i].first, makeInitialPlan(layouts[i]),
                PlanStage::Layout);
  }
};
} // namespace
