//===- PlanCache.h - Kernel plans kept on disk ------------------*- C++ -*-===//
//
// A type's plan (its canonical layout, family, width and work units, whose
// encoding is the unit table the kernels read) written beside the kernels,
// keyed by the hash of the type's tree, so that a new process finds it
// without running the planning passes. An entry is used only after the disk
// cache's own checks (owner, mode, key, content hash) and a check of the
// plan against the type: a bad entry is planned again and rewritten.
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_PLANCACHE_H
#define DDTC_RUNTIME_PLANCACHE_H

#include "DiskCache.h"
#include "ddtc/Core/Hash.h"

#include "ddtc/Core/Datatype.h"
#include "ddtc/Core/KernelPlan.h"

#include <string>

namespace ddtc::rt {

/// Bump when the encoding or the planning passes' output changes.
constexpr int64_t kPlanFormatVersion = 3;

/// The disk cache key of the plan of a tree of hash `tree`.
Hash128 planCacheKey(const Hash128 &tree);

/// The plan as bytes (without its notes, which only --emit=explain prints).
std::string encodePlan(const KernelPlan &plan);

/// Reads a plan encodePlan wrote, and checks that it is one the planning
/// passes could have made for `type`: the same size, lb and extent, every
/// source byte within the type's true bounds, work units that tile the
/// instance in order. Fails with `why` set, leaving `out` alone.
bool decodePlan(const std::string &bytes, const Datatype &type, KernelPlan &out,
                std::string &why);

/// Looks the plan of `type` (tree hash `tree`) up in `disk`; false when
/// there is none or it is not trusted (then a verbose line says why).
bool loadPlan(const DiskCache &disk, const Hash128 &tree, const Datatype &type,
              const std::string &name, KernelPlan &out);

/// Writes the plan of `type` into `disk`; a failure is only reported in
/// verbose mode (the next process plans again).
bool storePlan(const DiskCache &disk, const Hash128 &tree,
               const std::string &name, const KernelPlan &plan);

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_PLANCACHE_H
