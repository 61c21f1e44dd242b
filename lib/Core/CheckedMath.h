//===- CheckedMath.h - 64-bit arithmetic that reports overflow --*- C++ -*-===//
//
// Layout figures (sizes, extents, displacements) are MPI_Aint/MPI_Count, 64-bit
// signed. Every product and sum on them goes through these helpers so an
// overflow becomes a diagnostic instead of a wrong layout.
//===----------------------------------------------------------------------===//

#ifndef DDTC_LIB_CORE_CHECKEDMATH_H
#define DDTC_LIB_CORE_CHECKEDMATH_H

#include <cstdint>

namespace ddtc {

/// Accumulates checked operations; `overflowed` sticks once set.
struct Checked {
  bool overflowed = false;
  int64_t mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
      overflowed = true;
      return 0;
    }
    return r;
  }
  int64_t add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
      overflowed = true;
      return 0;
    }
    return r;
  }
  int64_t sub(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) {
      overflowed = true;
      return 0;
    }
    return r;
  }
};

} // namespace ddtc

#endif // DDTC_LIB_CORE_CHECKEDMATH_H
