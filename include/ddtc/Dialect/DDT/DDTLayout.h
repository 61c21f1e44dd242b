//===- DDTLayout.h - Between ddt.layout ops and kernel plans ----*- C++ -*-===//

#ifndef DDTC_DIALECT_DDT_DDTLAYOUT_H
#define DDTC_DIALECT_DDT_DDTLAYOUT_H

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Dialect/DDT/DDTOps.h"

namespace ddtc::ddt {

/// How far planning has gone: which plan attributes a ddt.layout carries.
enum class PlanStage {
  Layout,  ///< only the canonical layout
  Aligned, ///< + width, needs_byte_path, units (pieces)
  Balanced ///< + family, unit_bytes, units (work units)
};

/// The canonical layout and the plan attributes of a ddt.layout op (absent
/// attributes keep makeInitialPlan's values), and the stage they show.
KernelPlan readPlan(LayoutOp op, PlanStage &stage);

/// The ddt.layout ending `define`; null, with an error on `define` saying
/// that `passName` needs ddt-normalize first, when it still holds
/// constructor ops.
LayoutOp getNormalizedLayout(DefineOp define, llvm::StringRef passName);

/// Replaces the body of `define` by a ddt.layout op for `plan`, with the plan
/// attributes of `stage`.
LayoutOp writePlan(DefineOp define, const KernelPlan &plan, PlanStage stage);

} // namespace ddtc::ddt

#endif // DDTC_DIALECT_DDT_DDTLAYOUT_H
