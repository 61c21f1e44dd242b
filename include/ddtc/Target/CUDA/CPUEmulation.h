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
// at an address a GPU would fault on. With DDTC_EMU_WATCH_READS defined
// first, the wide loads are also checked against the bytes a harness says a
// launch may read (ddtcEmuWatchReads).
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

#ifdef DDTC_EMU_WATCH_READS
/// A harness that defines DDTC_EMU_WATCH_READS before this header names the
/// bytes a launch may read inside a buffer it watches (ddtcEmuWatchReads);
/// every load of a vector type (the kernels' wide loads) that overlaps the
/// watched buffer but leaves the readable bytes is an over-read, and the
/// first one is kept for ddtcEmuStrayRead. Byte-exact, unlike a guard page:
/// an aligned 16-byte vector never crosses a page, so reading past the last
/// byte of a datatype inside its vector would not fault.
struct DdtcEmuReadWatch {
  unsigned long long watchLo = 0, watchHi = 0, readLo = 0, readHi = 0;
  unsigned long long strayAt = 0, strayBytes = 0;
};
inline thread_local DdtcEmuReadWatch ddtcEmuReads;

/// Watches [watchLo, watchHi), of which [readLo, readHi) may be read, and
/// forgets any earlier over-read.
inline void ddtcEmuWatchReads(const void *watchLo, const void *watchHi,
                              const void *readLo, const void *readHi) {
  DdtcEmuReadWatch &w = ddtcEmuReads;
  w.watchLo = reinterpret_cast<unsigned long long>(watchLo);
  w.watchHi = reinterpret_cast<unsigned long long>(watchHi);
  w.readLo = reinterpret_cast<unsigned long long>(readLo);
  w.readHi = reinterpret_cast<unsigned long long>(readHi);
  w.strayAt = w.strayBytes = 0;
}

/// The first over-read since ddtcEmuWatchReads: its address and size, or
/// false.
inline bool ddtcEmuStrayRead(const void *&at, unsigned long long &bytes) {
  const DdtcEmuReadWatch &w = ddtcEmuReads;
  at = reinterpret_cast<const void *>(w.strayAt);
  bytes = w.strayBytes;
  return w.strayBytes != 0;
}

inline void ddtcEmuNoteRead(const void *p, unsigned long long bytes) {
  DdtcEmuReadWatch &w = ddtcEmuReads;
  const unsigned long long a = reinterpret_cast<unsigned long long>(p);
  if (a + bytes <= w.watchLo || a >= w.watchHi ||
      (a >= w.readLo && a + bytes <= w.readHi) || w.strayBytes != 0)
    return;
  w.strayAt = a;
  w.strayBytes = bytes;
}

/// Copying a vector from memory is a load of it: the copy operations note
/// where they read (copies of locals lie outside the watched buffer).
#define DDTC_EMU_WATCHED_COPIES(T)                                             \
  T() = default;                                                               \
  T(const T &o) { copyFrom(o); }                                               \
  T &operator=(const T &o) {                                                   \
    copyFrom(o);                                                               \
    return *this;                                                              \
  }                                                                            \
  void copyFrom(const T &o) {                                                  \
    ddtcEmuNoteRead(&o, sizeof o);                                             \
    __builtin_memcpy(static_cast<void *>(this), &o, sizeof o);                 \
  }
#else
#define DDTC_EMU_WATCHED_COPIES(T)
#endif

struct alignas(16) uint4 {
  unsigned int x, y, z, w;
  DDTC_EMU_WATCHED_COPIES(uint4)
};
struct alignas(8) uint2 {
  unsigned int x, y;
  DDTC_EMU_WATCHED_COPIES(uint2)
};
struct alignas(16) ulonglong2 {
  unsigned long long x, y;
  DDTC_EMU_WATCHED_COPIES(ulonglong2)
};
#undef DDTC_EMU_WATCHED_COPIES

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
