//===- CPUEmulation.h - Run emitted CUDA kernels on the CPU -----*- C++ -*-===//
//
// Include this header before the source emitCUDA produces and the kernels
// compile with an ordinary C++ compiler and run on the host: block after
// block, the threads of a block run in turn. It supplies only what the
// emitted kernels use (the CUDA keywords, the thread and block indices, the
// vector types, __umul64hi, __shared__, __constant__ tables and
// __syncthreads). No kernel uses a
// warp operation.
//
// Barriers: each block's thread 0 runs first as a fiber (ucontext). When it
// finishes without reaching __syncthreads, the kernel has no barrier in this
// block, so the other threads run one after another as plain calls, which
// gives the same result as running them concurrently. When it reaches one,
// every thread of the block runs as a fiber: each runs up to its next
// barrier (or its end) in turn, and all continue only when all have arrived,
// as on a GPU. A barrier that some threads of a block reach and others do
// not (undefined on a GPU) stops the program with a message. __shared__
// variables are static thread_local: one copy that the fibers of a block
// share, one per host thread.
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

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <ucontext.h>

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
#ifndef __shared__
#define __shared__ static thread_local
#endif
#ifndef __constant__
#define __constant__ static const
#endif
#ifndef __launch_bounds__
#define __launch_bounds__(...)
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

/// The threads of the block being emulated, as fibers.
struct DdtcEmuBlock {
  /// Runs the kernel for the current threadIdx.
  void (*run)(void *) = nullptr;
  void *kernel = nullptr;
  ucontext_t scheduler;
  std::unique_ptr<ucontext_t[]> fibers;
  std::unique_ptr<char[]> stacks;
  std::unique_ptr<unsigned char[]> state; ///< per thread: 0 runs, 1 at a
                                          ///< barrier, 2 done
  unsigned int threads = 0;
  unsigned int current = 0;
  bool inFiber = false;
  static constexpr size_t kStackBytes = 64 * 1024;
};
inline thread_local DdtcEmuBlock *ddtcEmuCurrentBlock = nullptr;

[[noreturn]] inline void ddtcEmuFail(const char *what) {
  std::fprintf(stderr, "CPU emulation: %s (block %u, thread %u)\n", what,
               blockIdx.x, threadIdx.x);
  std::abort();
}

/// Waits until every thread of the block has arrived.
inline void __syncthreads() {
  DdtcEmuBlock *b = ddtcEmuCurrentBlock;
  if (!b || !b->inFiber)
    ddtcEmuFail("__syncthreads in a block whose thread 0 reached no barrier");
  b->state[b->current] = 1;
  swapcontext(&b->fibers[b->current], &b->scheduler);
}

inline void ddtcEmuFiberMain() {
  DdtcEmuBlock *b = ddtcEmuCurrentBlock;
  b->run(b->kernel);
  b->state[b->current] = 2;
  // Returning resumes uc_link, the scheduler.
}

/// Starts thread t's fiber (it runs until its first barrier or its end).
inline void ddtcEmuStartFiber(DdtcEmuBlock &b, unsigned int t) {
  ucontext_t &f = b.fibers[t];
  getcontext(&f);
  f.uc_stack.ss_sp = b.stacks.get() + size_t(t) * DdtcEmuBlock::kStackBytes;
  f.uc_stack.ss_size = DdtcEmuBlock::kStackBytes;
  f.uc_link = &b.scheduler;
  makecontext(&f, ddtcEmuFiberMain, 0);
  b.state[t] = 0;
  b.current = t;
  threadIdx = {t, 0, 0};
  b.inFiber = true;
  swapcontext(&b.scheduler, &f);
  b.inFiber = false;
}

/// Runs one block (blockIdx set): see the header's comment.
inline void ddtcEmuRunBlock(DdtcEmuBlock &b) {
  ddtcEmuStartFiber(b, 0);
  if (b.state[0] == 2) {
    for (unsigned int t = 1; t < b.threads; ++t) {
      threadIdx = {t, 0, 0};
      b.run(b.kernel);
    }
    return;
  }
  for (unsigned int t = 1; t < b.threads; ++t)
    ddtcEmuStartFiber(b, t);
  for (;;) {
    // Every thread has run up to a barrier or its end.
    unsigned int waiting = 0;
    for (unsigned int t = 0; t < b.threads; ++t)
      waiting += b.state[t] == 1;
    if (waiting == 0)
      return;
    if (waiting != b.threads) {
      threadIdx = {0, 0, 0};
      ddtcEmuFail("__syncthreads reached by some threads of a block only");
    }
    for (unsigned int t = 0; t < b.threads; ++t) {
      b.state[t] = 0;
      b.current = t;
      threadIdx = {t, 0, 0};
      b.inFiber = true;
      swapcontext(&b.scheduler, &b.fibers[t]);
      b.inFiber = false;
    }
  }
}

/// Runs `kernel(args...)` for every thread of a one-dimensional grid of
/// `grid` blocks of `block` threads, block after block.
template <typename... Params, typename... Args>
void ddtcEmulateLaunch(void (*kernel)(Params...), unsigned int grid,
                       unsigned int block, Args &&...args) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  auto call = [&]() { kernel(args...); };
  using Call = decltype(call);
  DdtcEmuBlock b;
  b.run = [](void *c) { (*static_cast<Call *>(c))(); };
  b.kernel = &call;
  b.threads = block;
  b.fibers.reset(new ucontext_t[block]);
  b.stacks.reset(new char[size_t(block) * DdtcEmuBlock::kStackBytes]);
  b.state.reset(new unsigned char[block]);
  DdtcEmuBlock *outer = ddtcEmuCurrentBlock;
  ddtcEmuCurrentBlock = &b;
  for (unsigned int i = 0; i < grid; ++i) {
    blockIdx = {i, 0, 0};
    ddtcEmuRunBlock(b);
  }
  ddtcEmuCurrentBlock = outer;
}

#endif // DDTC_TARGET_CUDA_CPUEMULATION_H
