// Latency probe: GPU op round trips as the eager path uses them.
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <chrono>
__global__ void empty() {}
__global__ void copyk(const unsigned *s, unsigned *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = s[i];
}
static double now() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
template <class F> double med(F f, int reps = 2000) {
  std::vector<double> t;
  for (int i = 0; i < 100; ++i) f();
  for (int i = 0; i < reps; ++i) { double a = now(); f(); t.push_back(now() - a); }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
int main() {
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t ev; cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  unsigned *d, *d2, *h; cudaMalloc(&d, 1 << 20); cudaMalloc(&d2, 1 << 20);
  cudaHostAlloc(&h, 1 << 20, cudaHostAllocMapped);
  unsigned *hd; cudaHostGetDevicePointer(&hd, h, 0);
  auto spin = [&]() { while (cudaEventQuery(ev) == cudaErrorNotReady) {} };
  printf("empty kernel + stream sync       %.2f us\n", med([&] { empty<<<1, 32, 0, s>>>(); cudaStreamSynchronize(s); }));
  printf("empty kernel + event spin        %.2f us\n", med([&] { empty<<<1, 32, 0, s>>>(); cudaEventRecord(ev, s); spin(); }));
  printf("D2H 1 KiB pinned + event spin    %.2f us\n", med([&] { cudaMemcpyAsync(h, d, 1024, cudaMemcpyDeviceToHost, s); cudaEventRecord(ev, s); spin(); }));
  printf("H2D 1 KiB pinned + event spin    %.2f us\n", med([&] { cudaMemcpyAsync(d, h, 1024, cudaMemcpyHostToDevice, s); cudaEventRecord(ev, s); spin(); }));
  printf("kernel 1 KiB dev->mapped + spin  %.2f us\n", med([&] { copyk<<<1, 256, 0, s>>>(d, hd, 256); cudaEventRecord(ev, s); spin(); }));
  printf("kernel 1 KiB mapped->dev + spin  %.2f us\n", med([&] { copyk<<<1, 256, 0, s>>>(hd, d, 256); cudaEventRecord(ev, s); spin(); }));
  printf("kernel 1 KiB dev->dev + spin     %.2f us\n", med([&] { copyk<<<1, 256, 0, s>>>(d, d2, 256); cudaEventRecord(ev, s); spin(); }));
  printf("launch only (no wait)            %.2f us\n", med([&] { empty<<<1, 32, 0, s>>>(); }, 500));
  cudaStreamSynchronize(s);
  return 0;
}
