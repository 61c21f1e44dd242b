//===- Layout.h - Layout figures of one constructor call --------*- C++ -*-===//

#ifndef DDTC_LIB_CORE_LAYOUT_H
#define DDTC_LIB_CORE_LAYOUT_H

#include "ddtc/Core/Datatype.h"

namespace ddtc {

/// Computes size, bounds and true bounds of a constructor call whose
/// arguments passed checkArguments and whose children are built. Returns
/// false with `error` set when a figure overflows 64 bits.
bool computeLayout(const TypeArgs &args, LayoutInfo &out, std::string &error);

/// A block of consecutive global indices of an array dimension.
struct IndexBlock {
  int64_t start, length;
};

/// `count` blocks of `length` consecutive indices, `step` apart, from
/// `start`.
struct IndexBlockRun {
  int64_t start, length, count, step;
};

/// The indices one process owns along one darray dimension, in ascending
/// order: at most two runs (all full blocks, then a shorter last one), so a
/// cyclic distribution of a long dimension costs no more to describe than a
/// block distribution.
std::vector<IndexBlockRun> darrayOwnedRuns(const TypeArgs &args, unsigned dim);

/// The process coordinate of the darray's rank along `dim` (the process grid
/// is row-major whatever the array order).
int64_t darrayCoord(const TypeArgs &args, unsigned dim);

} // namespace ddtc

#endif // DDTC_LIB_CORE_LAYOUT_H
