//===- BenchCuda.h - Error checks and event timing -------------*- C++ -*-===//
//
// Shared by the layout benchmark, its Yaksa peer and the traffic calibration,
// so all time the same way: CUDA events on the default stream, warm-up,
// median.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_BENCH_BENCHCUDA_H
#define DDTC_TOOLS_DDTC_BENCH_BENCHCUDA_H

#include "ddtc/ddtc.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "ddtc-bench: %s failed: %s (%s:%d)\n", #call,       \
                   cudaGetErrorString(err_), __FILE__, __LINE__);              \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#define CHECK_DDTC(call)                                                       \
  do {                                                                         \
    ddtc_status st_ = (call);                                                  \
    if (st_ != DDTC_SUCCESS) {                                                 \
      std::fprintf(stderr, "ddtc-bench: %s failed: %s: %s\n", #call,           \
                   ddtc_status_name(st_), ddtc_last_error());                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace ddtc {

/// The median of `t` (the upper one of an even count); `t` is not empty.
inline double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Median microseconds of `reps` runs of fn on the default stream, timed
/// with events, after `warmup` runs.
template <typename Fn> double timeUs(Fn fn, int reps, int warmup = 3) {
  for (int i = 0; i < warmup; ++i)
    fn();
  CHECK_CUDA(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    CHECK_CUDA(cudaEventRecord(a));
    fn();
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaEventSynchronize(b));
    CHECK_CUDA(cudaGetLastError());
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.0);
  }
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  return median(std::move(t));
}

} // namespace ddtc

#endif // DDTC_TOOLS_DDTC_BENCH_BENCHCUDA_H
