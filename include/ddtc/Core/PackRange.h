//===- PackRange.h - The count and byte range of a pack call ----*- C++ -*-===//
//
// Every pack and unpack call names `count` instances and a byte range
// [lo, hi) of their packed stream. The checks of those figures (a negative
// count, a packed size past 64 bits, a range outside the stream) live here
// once: the C API, the runtime's kernel calls and computeLaunch use them.
//===----------------------------------------------------------------------===//

#ifndef DDTC_CORE_PACKRANGE_H
#define DDTC_CORE_PACKRANGE_H

#include <cstdint>
#include <string>

namespace ddtc {

/// Sets `total` to the packed bytes of `count` instances of `size` bytes.
/// Fails with `error` set when count is negative or the product overflows
/// 64 bits.
bool checkPackedBytes(int64_t size, int64_t count, int64_t &total,
                      std::string &error);

/// Whether [lo, hi) is a range of the packed stream of `count` instances of
/// `size` bytes: checkPackedBytes, then 0 <= lo <= hi <= count * size.
/// Fails with `error` set, naming the figure that is out of range.
bool checkPackRange(int64_t size, int64_t count, int64_t lo, int64_t hi,
                    std::string &error);

} // namespace ddtc

#endif // DDTC_CORE_PACKRANGE_H
