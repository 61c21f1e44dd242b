//===- FragmentSchedule.cpp - Where each fragment of a message lies -------===//

#include "FragmentSchedule.h"

#include <algorithm>
#include <cstdint>

namespace ddtc::mpi {
namespace {

int64_t roundDown(int64_t x, int64_t a) { return x - x % a; }

} // namespace

FragmentSchedule::FragmentSchedule(int64_t total, int64_t largestFragment,
                                   int64_t firstFragment)
    : bytes(std::max<int64_t>(total, 0)),
      largest(std::max<int64_t>(largestFragment, 1)) {
  first = firstFragment > 0 ? std::min(firstFragment, largest) : largest;
  // Each ramp step doubles while it stays below the largest fragment and
  // both ramps fit in the message: 2 * (rampBytes + step) <= bytes, written
  // so that nothing overflows (a step is at most bytes / 2, so doubling it
  // cannot either).
  for (int64_t step = first; step < largest && step <= bytes / 2 - rampBytes;
       step *= 2) {
    rampBytes += step;
    ++rampCount;
  }
  aligned = rampCount > 0 && first % kAlign == 0 && largest % kAlign == 0;
  // Aligned: the closing ramp starts on a multiple of kAlign, its first
  // fragment taking the bytes that a total not a multiple of kAlign adds.
  tailStart = rampCount == 0 ? bytes
              : aligned      ? roundDown(bytes - rampBytes, kAlign)
                             : bytes - rampBytes;
  middleBytes = tailStart - rampBytes;
  middleCount = middleBytes / largest + (middleBytes % largest != 0);
  if (aligned && middleCount > 0) {
    // Shared as evenly as multiples of kAlign allow (no short fragment
    // between two long ones), the last one taking the rest; unaligned,
    // begin() shares them evenly to the byte.
    share = middleBytes / middleCount + (middleBytes % middleCount != 0);
    share = std::min(largest, roundUp(share));
    middleCount = middleBytes / share + (middleBytes % share != 0);
  }
}

int64_t FragmentSchedule::begin(int64_t k) const {
  if (k < rampCount)
    return (first << k) - first;
  int64_t j = k - rampCount;
  if (j < middleCount) {
    if (rampCount == 0)
      return j * largest;
    if (aligned)
      return rampBytes + j * share;
    int64_t even = middleBytes / middleCount,
            extra = middleBytes % middleCount;
    return rampBytes + j * even + std::min(j, extra);
  }
  int64_t i = j - middleCount; // 0: the longest of the closing ramp
  if (i == 0)
    return tailStart;
  int64_t nominal = bytes - ((first << (rampCount - i)) - first);
  return aligned ? roundDown(nominal, kAlign) : nominal;
}

int64_t FragmentSchedule::length(int64_t k) const {
  int64_t next = k + 1 < count() ? begin(k + 1) : bytes;
  return next - begin(k);
}

int64_t FragmentSchedule::longest() const {
  int64_t most = 0;
  if (rampCount > 0)
    most = first << (rampCount - 1);
  if (middleCount > 0)
    most = std::max(most, length(rampCount)); // the first is the longest
  // The closing ramp (at most 63 fragments): aligned, its fragments may
  // be up to kAlign - 1 bytes longer than the opening ones.
  for (int64_t i = 0; aligned && i < rampCount; ++i)
    most = std::max(most, length(rampCount + middleCount + i));
  return most;
}

} // namespace ddtc::mpi
