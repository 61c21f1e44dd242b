//===- CPUEmulationTest.cpp - Barriers and shared memory on the CPU -------===//
//
// The emulation runs a block's threads as fibers once thread 0 reaches
// __syncthreads: a kernel that reads what other threads wrote to shared
// memory before a barrier must see it, in every round of a loop, and a
// kernel without barriers keeps running its threads as plain calls.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/CPUEmulation.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

// Each round: every thread writes its slot, then reads the slot of the
// thread mirrored in the block; without a real barrier the early threads
// would read slots nobody has written yet.
__global__ void mirror(const int *in, int *out, int rounds) {
  __shared__ int slot[1024];
  const unsigned t = threadIdx.x, n = blockDim.x;
  for (int r = 0; r < rounds; ++r) {
    const unsigned base = (blockIdx.x * rounds + r) * n;
    slot[t] = in[base + t];
    __syncthreads();
    out[base + t] = slot[n - 1 - t];
    // The next round overwrites the slots.
    __syncthreads();
  }
}

__global__ void plain(int *out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = (int)threadIdx.x;
}

__global__ void uneven() {
  if (threadIdx.x == 0)
    return;
  __syncthreads();
}

__global__ void unevenLater() {
  if (threadIdx.x == 5)
    return;
  __syncthreads();
}

TEST(CPUEmulation, BarriersOrderSharedMemory) {
  for (unsigned block : {32u, 96u, 256u}) {
    const unsigned grid = 3;
    const int rounds = 4;
    std::vector<int> in(grid * rounds * block), out(in.size(), -1);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<int>(i * 7 + 1);
    ddtcEmulateLaunch(mirror, grid, block, in.data(), out.data(), rounds);
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t row = i / block, t = i % block;
      ASSERT_EQ(out[i], in[row * block + block - 1 - t])
          << "block size " << block << ", element " << i;
    }
  }
}

TEST(CPUEmulation, KernelsWithoutBarriersRunEveryThread) {
  std::vector<int> out(5 * 64, -1);
  ddtcEmulateLaunch(plain, 5, 64, out.data());
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(out[i], static_cast<int>(i % 64));
}

TEST(CPUEmulationDeathTest, BarrierOfSomeThreadsOnlyStops) {
  EXPECT_DEATH(ddtcEmulateLaunch(uneven, 1, 64),
               "__syncthreads in a block whose thread 0 reached no barrier");
  EXPECT_DEATH(ddtcEmulateLaunch(unevenLater, 1, 64),
               "__syncthreads reached by some threads of a block only");
}

} // namespace
