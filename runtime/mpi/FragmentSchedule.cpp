//===- FragmentSchedule.cpp - Where each fragment of a message lies -------===//

#include "FragmentSchedule.h"

#include <algorithm>
#include <cstdint>

namespace ddtc::mpi {

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
  middleBytes = bytes - 2 * rampBytes;
  middleCount = middleBytes / largest + (middleBytes % largest != 0);
}

int64_t FragmentSchedule::begin(int64_t k) const {
  if (k < rampCount)
    return (first << k) - first;
  int64_t j = k - rampCount;
  if (j < middleCount) {
    if (rampCount == 0)
      return j * largest;
    int64_t share = middleBytes / middleCount,
            extra = middleBytes % middleCount;
    return rampBytes + j * share + std::min(j, extra);
  }
  return bytes - ((first << (count() - k)) - first);
}

int64_t FragmentSchedule::length(int64_t k) const {
  if (k < rampCount)
    return first << k;
  int64_t j = k - rampCount;
  if (j < middleCount) {
    if (rampCount == 0)
      return std::min(largest, middleBytes - j * largest);
    int64_t share = middleBytes / middleCount,
            extra = middleBytes % middleCount;
    return share + (j < extra);
  }
  return first << (count() - 1 - k);
}

int64_t FragmentSchedule::longest() const {
  int64_t ramp = rampCount ? first << (rampCount - 1) : 0;
  int64_t middle = middleCount ? length(rampCount) : 0;
  return std::max(ramp, middle);
}

} // namespace ddtc::mpi
