//===- CPUEmulation.h - Run emitted CUDA kernels on the CPU -----*- C++ -*-===//
//
// Include this header before the source emitCUDA produces and the kernels
// compile with an ordinary C++ compiler and run on the host: every CUDA
// thread of the grid runs in turn, block after block. It supplies only what
// the emitted kernels use (the CUDA keywords, the thread and block indices,
// the vector types and __umul64hi). The kernels use no shared memory, no
// barrier and no warp operation, so running the threads one after another
// gives the same result as running them concurrently.
//
// CUDA's vector types keep their alignment (uint4 is 16-byte aligned), so a
// build with -fsanitize=alignment reports any wide access the kernels make
// at an address a GPU would fault on.
//
// The header is self-contained and needs no part of ddtc.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_CPUEMULATION_H
#define DDTC_TARGET_CUDA_CPUEMULATION_H

#define DDTC_CPU_EMULATION 1

#ifndef __global__
#define __global__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __host__
#define __host__
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif
#ifndef __restrict__
#define __restrict__ __restrict
#endif

struct ddtc_emu_uint3 {
  unsigned int x, y, z;
};

/// The built-in variables, one set per host thread, so that separate host
/// threads may emulate separate launches at the same time.
inline thread_local ddtc_emu_uint3 threadIdx = {0, 0, 0};
inline thread_local ddtc_emu_uint3 blockIdx = {0, 0, 0};
inline thread_local ddtc_emu_uint3 blockDim = {1, 1, 1};
inline thread_local ddtc_emu_uint3 gridDim = {1, 1, 1};

struct alignas(16) uint4 {
  unsigned int x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned int x, y;
};
struct alignas(16) ulonglong2 {
  unsigned long long x, y;
};

/// The high 64 bits of the 128-bit product, as CUDA's intrinsic.
inline unsigned long long __umul64hi(unsigned long long a,
                                     unsigned long long b) {
  return static_cast<unsigned long long>(
      (static_cast<unsigned __int128>(a) * b) >> 64);
}

/// Runs `kernel(args...)` for every thread of a one-dimensional grid of
/// `grid` blocks of `block` threads, sequentially.
template <typename... Params, typename... Args>
void ddtcEmulateLaunch(void (*kernel)(Params...), unsigned int grid,
                       unsigned int block, Args &&...args) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned int b = 0; b < grid; ++b) {
    blockIdx = {b, 0, 0};
    for (unsigned int t = 0; t < block; ++t) {
      threadIdx = {t, 0, 0};
      kernel(args...);
    }
  }
}

#endif // DDTC_TARGET_CUDA_CPUEMULATION_H
