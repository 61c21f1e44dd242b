//===- PipelineModelTest.cpp - The time of a pipelined IPC message --------===//
//
// The model's formula against its terms worked out by hand: fragments bound
// by the hosts and by the link, the first pack, the GPUs' gap per fragment,
// a type whose pack or unpack is slower than the link, and the middle
// fragments summed at once agreeing with a sum fragment by fragment.
//===----------------------------------------------------------------------===//

#include "PipelineModel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

using ddtc::mpi::FragmentSchedule;
using ddtc::mpi::ModelFigures;
using ddtc::mpi::pipelineUs;
using ddtc::mpi::pullUs;

namespace {

ModelFigures figures() {
  ModelFigures m;
  m.startUs = 10;
  m.alphaUs = 8;
  m.gapUs = 2;
  m.linkGBps = 400;   // 400 bytes per ns: 1 MiB in 2.62 us
  m.localGBps = 1600; // 2 bytes moved per packed byte: 1600 GB/s of kernel
  return m;
}

constexpr int64_t MiB = int64_t(1) << 20;

TEST(PipelineModel, EmptyMessageTakesNoTime) {
  EXPECT_EQ(pipelineUs(figures(), FragmentSchedule(0, MiB, MiB), {}), 0.0);
}

TEST(PipelineModel, SmallFragmentsAreBoundByTheHosts) {
  // 16 fragments of 1 MiB: each moves in 2.62 us, less than the 8 us the
  // hosts spend on it.
  FragmentSchedule s(16 * MiB, MiB, MiB);
  double expected = 10 + 8 + MiB / 1600e3 + 16 * (8 + 2);
  EXPECT_NEAR(pipelineUs(figures(), s, {}), expected, 1e-9);
}

TEST(PipelineModel, LargeFragmentsAreBoundByTheLink) {
  // 4 fragments of 16 MiB: each moves in 41.9 us, more than 8 us.
  FragmentSchedule s(64 * MiB, 16 * MiB, 16 * MiB);
  double expected = 10 + 8 + 16 * MiB / 1600e3 + 64 * MiB / 400e3 + 4 * 2;
  EXPECT_NEAR(pipelineUs(figures(), s, {}), expected, 1e-9);
}

TEST(PipelineModel, SlowKernelsBoundThePipeline) {
  // A type reading 9 bytes per packed byte: its kernels move 1600 * 2 / 10
  // = 320 GB/s, slower than the link.
  FragmentSchedule s(64 * MiB, 16 * MiB, 16 * MiB);
  double kernel = 320e3;
  double expected = 10 + 8 + 16 * MiB / kernel + 64 * MiB / kernel + 4 * 2;
  EXPECT_NEAR(pipelineUs(figures(), s, {9.0, 1.0}), expected, 1e-6);
}

TEST(PipelineModel, SlowUnpacksBoundThePipeline) {
  // A type whose unpack moves 15 bytes per packed byte (doubles far apart,
  // each making the memory read a line): 1600 * 2 / 16 = 200 GB/s. Its pack
  // reads only its own bytes, so the first fragment packs at the full rate.
  FragmentSchedule s(64 * MiB, 16 * MiB, 16 * MiB);
  double expected = 10 + 8 + 16 * MiB / 1600e3 + 64 * MiB / 200e3 + 4 * 2;
  EXPECT_NEAR(pipelineUs(figures(), s, {1.0, 15.0}), expected, 1e-6);
  // The slower of the pack and the unpack bounds the fragments.
  double both = 10 + 8 + 16 * MiB / 320e3 + 64 * MiB / 200e3 + 4 * 2;
  EXPECT_NEAR(pipelineUs(figures(), s, {9.0, 15.0}), both, 1e-6);
}

TEST(PipelineModel, MiddleSummedAtOnceAgreesFragmentByFragment) {
  // Ramps of 64 KiB to 4 MiB around an uneven middle, fragments on both
  // sides of the hosts' bound (8 us: 3.2 MB at 400 GB/s).
  const ModelFigures m = figures();
  for (int64_t total :
       {int64_t(100) * MiB + 12345, int64_t(37) * MiB, int64_t(5) * MiB + 1}) {
    FragmentSchedule s(total, 4 * MiB, 64 << 10);
    double bytewise = m.startUs + m.alphaUs + s.length(0) / 1600e3;
    for (int64_t k = 0; k < s.count(); ++k)
      bytewise += std::max(m.alphaUs, s.length(k) / 400e3) + m.gapUs;
    EXPECT_NEAR(pipelineUs(m, s, {}), bytewise, 1e-6 * bytewise)
        << "total " << total;
  }
}

TEST(PipelineModel, PullsPayTheLinkForEverySectorRead) {
  // 4 fragments of 16 MiB pulled: one launch before the first byte moves,
  // no pack; a type reading 2 bytes per packed byte crosses the link at
  // half its rate.
  FragmentSchedule s(64 * MiB, 16 * MiB, 16 * MiB);
  EXPECT_NEAR(pullUs(figures(), s, {}), 10 + 8 + 64 * MiB / 400e3 + 4 * 2,
              1e-6);
  EXPECT_NEAR(pullUs(figures(), s, {2.0, 1.0}),
              10 + 8 + 64 * MiB / 200e3 + 4 * 2, 1e-6);
  // A receive type writing in part of its sectors: its writes bound it.
  EXPECT_NEAR(pullUs(figures(), s, {1.0, 15.0}),
              10 + 8 + 64 * MiB / 200e3 + 4 * 2, 1e-6);
  EXPECT_EQ(pullUs(figures(), FragmentSchedule(0, MiB, MiB), {}), 0.0);
}

TEST(PipelineModel, PullsWinSmallAndLoseWhenTheyReadMuchMore) {
  // 1 MiB of 16-byte blocks 32 bytes apart: the pull saves the pack and a
  // fragment's hosts; at 64 MiB the ring's dense bytes win.
  const ddtc::mpi::KernelTraffic sparse{2.0, 2.0};
  FragmentSchedule one(MiB, MiB, MiB);
  EXPECT_LT(pullUs(figures(), one, sparse), pipelineUs(figures(), one, sparse));
  FragmentSchedule ring(64 * MiB, 4 * MiB, 256 * 1024);
  FragmentSchedule pulled(64 * MiB, 16 * MiB, 16 * MiB);
  EXPECT_GT(pullUs(figures(), pulled, sparse),
            pipelineUs(figures(), ring, sparse));
  // Whole sectors: the pull is faster at every size.
  EXPECT_LT(pullUs(figures(), pulled, {}), pipelineUs(figures(), ring, {}));
}

} // namespace
