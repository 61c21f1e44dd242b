//===- PipelineModel.cpp - The time of a pipelined IPC message ------------===//
//
// A pipelined message of M packed bytes in n fragments of len_k bytes
// (FragmentSchedule.h: the first of `first` bytes, doubling up to the
// largest and shrinking again to the last) costs, as the pipeline runs (the
// max-rate model of the seeds: each fragment takes its slowest stage):
//
//   T = start + alpha + first / pack
//         + sum over k of (max(alpha, len_k / min(link, pack, unpack)) + gap)
//
// start: the note, the answer and the closing message;
// alpha: what one fragment costs the hosts (a kernel launch on each side,
//        events, the ready and return messages); the first one's is not
//        hidden, the others overlap the moves of the fragments before;
// link:  the rate of the move between the GPUs (or within one);
// gap:   what a fragment costs the GPUs beside its bytes (a kernel reading
//        over the link waits for its last loads before the next one);
// local: the rate of a pack or unpack kernel in local memory: the first
//        fragment's pack does not overlap anything;
// pack, unpack: the rates of the message type's kernels, local scaled to
//        what they move: the pack reads `read` bytes of memory per packed
//        byte where the calibration's kernel reads one
//        (estimateReadAmplification of its layout: 8.9 for doubles 4 KiB
//        apart, 1.0 for long runs): pack = local * 2 / (read + 1); the
//        unpack moves `write` bytes per packed byte
//        (estimateWriteAmplification: 16 for doubles 128 bytes or more
//        apart, each making the memory read a line before the write):
//        unpack = local * 2 / (write + 1), the receiver's type taken to be
//        the sender's. The pipeline moves no faster than the slowest of the
//        link and the two kernels.
//
// The unpack's term came from the cube's x face on two H200s
// (bench/results/2026-11-29-NVIDIA-H200-x2-launch-and-faces): its unpack in
// local memory takes 132.5 us at 16 MiB, where the link would move the
// bytes in 46 us, and the model without it predicted the face 26-41% fast.
//
// On two H200s this form, fitted to the calibration's five points, put 18
// held-out fixed schedules within 16% (median 4%), where the sum
// start + n * alpha + M / link + (first + last) / kernel, with each
// fragment's host cost in series with the link, was off by up to 23% and
// fitted a link twice as fast as the SMs read the peer
// (bench/results/2026-11-29-NVIDIA-H200-x2-fragments).
//===----------------------------------------------------------------------===//

#include "PipelineModel.h"

#include <algorithm>

namespace ddtc::mpi {

double pipelineUs(const ModelFigures &m, const FragmentSchedule &schedule,
                  const KernelTraffic &traffic) {
  const int64_t n = schedule.count();
  if (n == 0)
    return 0;
  // The type's kernels: the calibrated rate moves one byte read and one
  // written per packed byte; this type's pack reads traffic.read, its
  // unpack writes traffic.write. The pipeline runs no faster than its
  // slowest stage, the link or a kernel. GB/s = 1e3 bytes per microsecond.
  const double pack =
      m.localGBps * 1e3 * 2.0 / (std::max(traffic.read, 1.0) + 1.0);
  const double unpack =
      m.localGBps * 1e3 * 2.0 / (std::max(traffic.write, 1.0) + 1.0);
  const double rate = std::min({m.linkGBps * 1e3, pack, unpack});
  auto stage = [&](double bytes) {
    return std::max(m.alphaUs, bytes / rate) + m.gapUs;
  };
  double us =
      m.startUs + m.alphaUs + static_cast<double>(schedule.length(0)) / pack;
  // The ramps fragment by fragment; the middle ones, of nearly equal
  // length (there may be thousands), at once.
  const int64_t ramp = schedule.rampFragments(),
                middle = schedule.middleFragments();
  for (int64_t k = 0; k < ramp; ++k)
    us += stage(static_cast<double>(schedule.length(k)));
  if (middle > 0) {
    const int64_t end =
        ramp + middle < n ? schedule.begin(ramp + middle) : schedule.total();
    const double bytes = static_cast<double>(end - schedule.begin(ramp));
    us += static_cast<double>(middle) *
          stage(bytes / static_cast<double>(middle));
  }
  for (int64_t k = ramp + middle; k < n; ++k)
    us += stage(static_cast<double>(schedule.length(k)));
  return us;
}

// A pulled message (the receiver's kernel reads the sender's buffer with the
// sender's type and writes the receive buffer, ddtc_copy) costs
//
//   T = start + alpha + M / min(link / read, unpack) + n * gap
//
// start: the note, the answer and the closing message, as above;
// alpha: the receiver's launch of the first fragment: nothing is packed and
//        no ready message is waited for; later launches are queued while
//        the fragments before move (pulled fragments are long);
// link / read: the kernel reads `read` bytes of the sender's memory per
//        packed byte (the sectors its type touches), all of them over the
//        link: a type of 16-byte blocks 32 bytes apart moves at half the
//        link's rate, where the ring sends its packed bytes at the full
//        rate after a local pack;
// unpack: the receive side's writes, as for the ring (the receiver's type
//        taken to be the sender's);
// gap:   per fragment, as above.
double pullUs(const ModelFigures &m, const FragmentSchedule &schedule,
              const KernelTraffic &traffic) {
  const int64_t n = schedule.count();
  if (n == 0)
    return 0;
  const double unpack =
      m.localGBps * 1e3 * 2.0 / (std::max(traffic.write, 1.0) + 1.0);
  const double rate =
      std::min(m.linkGBps * 1e3 / std::max(traffic.read, 1.0), unpack);
  return m.startUs + m.alphaUs + static_cast<double>(schedule.total()) / rate +
         static_cast<double>(n) * m.gapUs;
}

} // namespace ddtc::mpi
