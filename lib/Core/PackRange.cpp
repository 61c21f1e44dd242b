//===- PackRange.cpp - The count and byte range of a pack call ------------===//

#include "ddtc/Core/PackRange.h"

namespace ddtc {

bool checkPackedBytes(int64_t size, int64_t count, int64_t &total,
                      std::string &error) {
  if (count < 0) {
    error = "count " + std::to_string(count) + " is negative";
    return false;
  }
  if (__builtin_mul_overflow(count, size, &total)) {
    error = std::to_string(count) + " instances of " + std::to_string(size) +
            " bytes overflow 64 bits";
    return false;
  }
  return true;
}

bool checkPackRange(int64_t size, int64_t count, int64_t lo, int64_t hi,
                    std::string &error) {
  int64_t total = 0;
  if (!checkPackedBytes(size, count, total, error))
    return false;
  if (lo < 0 || lo > hi || hi > total) {
    error = "the range [" + std::to_string(lo) + ", " + std::to_string(hi) +
            ") is not inside the " + std::to_string(total) +
            " packed bytes of " + std::to_string(count) + " instance(s)";
    return false;
  }
  return true;
}

} // namespace ddtc
