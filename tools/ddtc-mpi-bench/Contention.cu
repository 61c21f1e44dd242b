//===- Contention.cu - A kernel that holds part of the GPU while timing ---===//

#include "Contention.h"

#include "BenchSupport.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace bench {

namespace {

struct BusyHost {
  int stop;    // set by the host: leave now
  int started; // set by the last block to arrive: all blocks run
  int expired; // set by a block that left by the time limit
};

struct BusyDevice {
  unsigned arrived; // blocks running
  int quit;         // block 0 relays the host's stop to the other blocks
  unsigned long long sink;
};

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess)                                                   \
      die("%s failed: %s (%s:%d)", #call, cudaGetErrorString(err_), __FILE__,  \
          __LINE__);                                                           \
  } while (0)

__device__ unsigned long long globalTimerNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// One block per SM (it asks for most of the shared memory) of 1024 threads
/// doing dependent integer arithmetic. Only thread 0 of each block looks at
/// the flags, every few microseconds: block 0 reads the host's stop flag
/// (one read of mapped memory) and relays it in device memory, so the busy
/// blocks put almost no traffic on the bus the transfers use.
__global__ void __launch_bounds__(1024, 1)
    busyKernel(volatile BusyHost *host, BusyDevice *dev,
               unsigned long long limitNs) {
  extern __shared__ unsigned char smem[];
  __shared__ int leave;
  const unsigned long long t0 = globalTimerNs();
  if (threadIdx.x == 0) {
    leave = 0;
    if (atomicAdd(&dev->arrived, 1u) + 1 == gridDim.x) {
      host->started = 1;
      __threadfence_system();
    }
  }
  __syncthreads();
  unsigned long long x = threadIdx.x + 1;
  for (;;) {
    for (int i = 0; i < 256; ++i)
      x = x * 6364136223846793005ull + 1442695040888963407ull;
    smem[threadIdx.x] = (unsigned char)x;
    if (threadIdx.x == 0) {
      volatile int *quit = &dev->quit;
      bool stop = *quit != 0;
      if (!stop && blockIdx.x == 0 && host->stop) {
        *quit = 1;
        stop = true;
      }
      if (!stop && globalTimerNs() - t0 > limitNs) {
        host->expired = 1;
        __threadfence_system();
        stop = true;
      }
      leave = stop;
    }
    __syncthreads();
    if (leave)
      break;
    __syncthreads();
  }
  if (x == 42)
    dev->sink = x;
}

} // namespace

void Contention::setUp(double fraction, int dev, bool launches) {
  launching = launches;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
  nSms = prop.multiProcessorCount;
  nBlocks = std::max(1, (int)std::lround(fraction * nSms));
  if (!launching)
    return;
  // Most of an SM's shared memory, so that no two busy blocks share one; at
  // least 1024 bytes, one per thread.
  sharedBytes =
      (unsigned)std::max<size_t>(1024, prop.sharedMemPerBlockOptin - 1024);
  CHECK_CUDA(cudaFuncSetAttribute(busyKernel,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)sharedBytes));
  CHECK_CUDA(cudaHostAlloc(&host, sizeof(BusyHost), cudaHostAllocMapped));
  *(BusyHost *)host = BusyHost{0, 0, 0};
  CHECK_CUDA(cudaHostGetDevicePointer(&hostOnDevice, host, 0));
  CHECK_CUDA(cudaMalloc(&device, sizeof(BusyDevice)));
  cudaStream_t s = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  stream = s;
}

void Contention::begin(double limitUs) {
  if (!launching)
    return;
  volatile BusyHost *h = (volatile BusyHost *)host;
  h->stop = 0;
  h->started = 0;
  h->expired = 0;
  cudaStream_t s = (cudaStream_t)stream;
  CHECK_CUDA(cudaMemsetAsync(device, 0, sizeof(BusyDevice), s));
  auto limitNs = (unsigned long long)std::max(1.0, limitUs * 1e3);
  busyKernel<<<nBlocks, 1024, sharedBytes, s>>>(
      (volatile BusyHost *)hostOnDevice, (BusyDevice *)device, limitNs);
  CHECK_CUDA(cudaGetLastError());
  running = true;
  auto t0 = std::chrono::steady_clock::now();
  while (!h->started) {
    if (h->expired || cudaStreamQuery(s) != cudaErrorNotReady)
      break; // ended (or failed) before all its blocks ran together
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10)) {
      h->stop = 1;
      die("--contend: the busy kernel's %d blocks were not all running "
          "after 10 s",
          nBlocks);
    }
    std::this_thread::yield();
  }
  if (!h->started) {
    cudaError_t err = cudaStreamSynchronize(s);
    running = false;
    if (err != cudaSuccess)
      die("--contend: the busy kernel failed: %s", cudaGetErrorString(err));
    die("--contend: the busy kernel ended before all its %d blocks ran "
        "(time limit %.0f us)",
        nBlocks, limitUs);
  }
}

bool Contention::end() {
  if (!launching || !running)
    return true;
  volatile BusyHost *h = (volatile BusyHost *)host;
  h->stop = 1;
  // Safe to wait for: the kernel leaves within microseconds of the flag, or
  // at its time limit.
  CHECK_CUDA(cudaStreamSynchronize((cudaStream_t)stream));
  running = false;
  return h->expired == 0;
}

void Contention::tearDown() {
  if (!launching)
    return;
  end();
  if (stream)
    CHECK_CUDA(cudaStreamDestroy((cudaStream_t)stream));
  if (device)
    CHECK_CUDA(cudaFree(device));
  if (host)
    CHECK_CUDA(cudaFreeHost(host));
  stream = nullptr;
  device = nullptr;
  host = nullptr;
  launching = false;
}

} // namespace bench
