//===- FragmentSchedule.h - Where each fragment of a message lies -*- C++
//-*-===//
//
// The byte ranges of a pipelined message's fragments. The sender, the
// receiver and the model each compute them from what the note carries (the
// packed size, the largest fragment and the first one), so that all three
// agree without sending the ranges.
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_FRAGMENTSCHEDULE_H
#define DDTC_MPI_FRAGMENTSCHEDULE_H

#include <cstdint>

namespace ddtc::mpi {

/// Fragments of `total` bytes, none longer than `largest`. They start
/// small: `first`, 2 x first, 4 x first, ... (each below `largest`), so that
/// the first pack is short and the next stage starts early; the same sizes
/// close the message in reverse, so that the last unpack is short too. The
/// bytes between go in fragments of `largest`: shared evenly after a ramp
/// (no short fragment between two long ones), and the last one taking the
/// rest without one, which is the fixed schedule (`first` >= `largest`).
/// The ramps are as long as they fit in the message (both together at most
/// `total` bytes). Every range is computed in O(1).
///
/// When `first` and `largest` are multiples of kAlign (the defaults and
/// every power of two from 256 up), every fragment starts on a multiple of
/// kAlign: the middle fragments are shared in multiples of kAlign, and the
/// first fragment of the closing ramp takes the up to kAlign - 1 bytes a
/// total off that multiple adds. A fragment that starts off it makes every
/// pack and unpack of it misaligned against its slot: on an H200 a 1 MB
/// pack into mapped host memory took 1.8 ms instead of 30 us.
class FragmentSchedule {
public:
  static constexpr int64_t kAlign = 256;
  /// `bytes` rounded up to a multiple of kAlign.
  static constexpr int64_t roundUp(int64_t bytes) {
    return (bytes + kAlign - 1) / kAlign * kAlign;
  }

  FragmentSchedule() = default;
  FragmentSchedule(int64_t total, int64_t largest, int64_t first);

  int64_t total() const { return bytes; }
  /// Number of fragments (0 for an empty message).
  int64_t count() const { return 2 * rampCount + middleCount; }
  /// Offset of fragment k (0 <= k < count()) in the packed message.
  int64_t begin(int64_t k) const;
  /// Bytes of fragment k.
  int64_t length(int64_t k) const;
  int64_t end(int64_t k) const { return begin(k) + length(k); }
  /// The longest fragment (the size of a ring's slot).
  int64_t longest() const;
  /// The settings it was made from (after clamping): the largest fragment
  /// and the first one (equal without a ramp).
  int64_t largestFragment() const { return largest; }
  int64_t firstFragment() const { return first; }
  /// Fragments of each ramp (opening and closing), and between them: the
  /// middle fragments, of nearly equal length, are fragments
  /// [rampFragments(), rampFragments() + middleFragments()).
  int64_t rampFragments() const { return rampCount; }
  int64_t middleFragments() const { return middleCount; }

private:
  int64_t bytes = 0, largest = 1, first = 1;
  int64_t rampCount = 0;   ///< fragments of each ramp
  int64_t rampBytes = 0;   ///< bytes of each ramp
  int64_t middleCount = 0; ///< fragments between the ramps
  int64_t middleBytes = 0;
  int64_t share = 0;       ///< aligned: the middle fragments' length
  int64_t tailStart = 0;   ///< where the closing ramp starts
  bool aligned = false;    ///< fragments start on multiples of kAlign
};

} // namespace ddtc::mpi

#endif // DDTC_MPI_FRAGMENTSCHEDULE_H
