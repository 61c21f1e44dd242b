// How long a receiver's unpack takes from the moment the packed bytes are in
// pinned host memory until the host knows they are in device memory:
//   launch  the unpack launched then, its event polled (what the layer does)
//   ahead   the unpack queued before, behind a stream wait on a flag word in
//           pinned host memory; the host writes the word, polls the event
//   ahead+word  the same, the stream writing a done word to pinned host
//           memory after the kernel, the host polling that word
//   launch+word the launch, done word polled
//   d2h     a 1 KiB device-to-pinned copy and its event (the sender's side)
// Each: median and 10th/90th percentile of --iters repetitions, in us.
//   nvcc -O2 -arch=sm_90 probe.cu -lcuda -o probe && ./probe [iters]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    if ((x) != 0) {                                                            \
      std::fprintf(stderr, "%s failed at line %d\n", #x, __LINE__);            \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// 1 KiB of 8-byte elements scattered with a stride of 16 bytes.
__global__ void unpack(const unsigned long long *src,
                       unsigned long long *dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    dst[2 * i] = src[i];
}

using Clock = std::chrono::steady_clock;
static double us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

static void report(const char *name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%-12s median %7.2f us  p10 %7.2f  p90 %7.2f  (n=%zu)\n", name,
              v[v.size() / 2], v[v.size() / 10], v[v.size() * 9 / 10],
              v.size());
}

static void spinFor(double micros) {
  auto t0 = Clock::now();
  while (us(t0, Clock::now()) < micros) {
  }
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int n = 128; // 1 KiB packed
  CK(cudaSetDevice(0));
  CK(cudaFree(0));
  unsigned long long *src, *srcDev, *dst, *words, *wordsDev;
  CK(cudaHostAlloc(&src, n * 8, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(&srcDev, src, 0));
  CK(cudaMalloc(&dst, 2 * n * 8));
  CK(cudaHostAlloc(&words, 128, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(&wordsDev, words, 0));
  volatile unsigned long long *flag = words, *done = words + 8;
  *flag = 0;
  *done = 0;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t ev;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  std::vector<double> launch, ahead, aheadWord, launchWord, d2h;
  char *hostBuf;
  CK(cudaHostAlloc(&hostBuf, 1024, 0));
  for (int warm = 0; warm < 2; ++warm) {
    int reps = warm ? iters : 50;
    for (int i = 0; i < reps; ++i) {
      unsigned long long k = (unsigned long long)(warm * 100000 + i + 1);
      // launch
      auto t0 = Clock::now();
      unpack<<<1, n, 0, s>>>(srcDev, dst, n);
      CK(cudaEventRecord(ev, s));
      while (cudaEventQuery(ev) == cudaErrorNotReady) {
      }
      auto t1 = Clock::now();
      if (warm)
        launch.push_back(us(t0, t1));
      // ahead
      CK(cuStreamWaitValue64((CUstream)s, (CUdeviceptr)wordsDev, 2 * k,
                             CU_STREAM_WAIT_VALUE_GEQ));
      unpack<<<1, n, 0, s>>>(srcDev, dst, n);
      CK(cudaEventRecord(ev, s));
      spinFor(30);
      t0 = Clock::now();
      __atomic_store_n(&words[0], 2 * k, __ATOMIC_SEQ_CST);
      while (cudaEventQuery(ev) == cudaErrorNotReady) {
      }
      t1 = Clock::now();
      if (warm)
        ahead.push_back(us(t0, t1));
      // ahead+word
      CK(cuStreamWaitValue64((CUstream)s, (CUdeviceptr)wordsDev, 2 * k + 1,
                             CU_STREAM_WAIT_VALUE_GEQ));
      unpack<<<1, n, 0, s>>>(srcDev, dst, n);
      CK(cuStreamWriteValue64((CUstream)s, (CUdeviceptr)(wordsDev + 8), 2 * k,
                              CU_STREAM_WRITE_VALUE_DEFAULT));
      spinFor(30);
      t0 = Clock::now();
      __atomic_store_n(&words[0], 2 * k + 1, __ATOMIC_SEQ_CST);
      while (*done < 2 * k) {
      }
      t1 = Clock::now();
      if (warm)
        aheadWord.push_back(us(t0, t1));
      // launch+word
      t0 = Clock::now();
      unpack<<<1, n, 0, s>>>(srcDev, dst, n);
      CK(cuStreamWriteValue64((CUstream)s, (CUdeviceptr)(wordsDev + 8),
                              2 * k + 1, CU_STREAM_WRITE_VALUE_DEFAULT));
      while (*done < 2 * k + 1) {
      }
      t1 = Clock::now();
      if (warm)
        launchWord.push_back(us(t0, t1));
      // d2h
      t0 = Clock::now();
      CK(cudaMemcpyAsync(hostBuf, dst, 1024, cudaMemcpyDeviceToHost, s));
      CK(cudaEventRecord(ev, s));
      while (cudaEventQuery(ev) == cudaErrorNotReady) {
      }
      t1 = Clock::now();
      if (warm)
        d2h.push_back(us(t0, t1));
    }
  }
  CK(cudaStreamSynchronize(s));
  report("launch", launch);
  report("ahead", ahead);
  report("ahead+word", aheadWord);
  report("launch+word", launchWord);
  report("d2h", d2h);
  return 0;
}
