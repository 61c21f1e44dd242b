//===- FakeCUDADriver.cpp - A CUDA driver that runs on the CPU, for tests ---===//
//
// A stand-in for libcuda.so.1 (load it with DDTC_CUDA_DRIVER=path) that
// lets the runtime's GPU path run where there is no GPU: one fake device
// (sm_90, or DDTC_FAKE_ARCH), "device" memory that is host memory (so
// pointers are unified, as on a real 64-bit system), mapped host memory,
// streams that run everything at once, and kernel launches of the generic
// work-unit kernels, whose source is compiled into this library through
// CPUEmulation.h. Modules load any image; only functions named like the
// generic kernels can be found in them (the specialized strided kernels
// cannot run here). Memory the fake did not allocate is "pageable": the
// pointer attribute query fails for it, as the real driver's does.
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ddtc/Target/CUDA/CPUEmulation.h"
#include "GenericKernelSources.inc"

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2,
                   kInvalidContext = 201, kInvalidHandle = 400,
                   kNotFound = 500;

struct FakeContext {
  unsigned long long id;
};
FakeContext primary{7};
thread_local FakeContext *current = nullptr;
thread_local std::vector<FakeContext *> stack;

struct Allocation {
  size_t size;
  bool host;
};
std::mutex memMutex;
std::map<uintptr_t, Allocation> allocations; // by base address

struct FakeFunction {
  bool pack;
  int width;
};
FakeFunction functions[2][17];
int moduleStorage;
int streamStorage[64];
int nextStream = 0;
int eventStorage[64];
int nextEvent = 0;

int fakeArch() {
  const char *a = std::getenv("DDTC_FAKE_ARCH");
  return a && *a ? std::atoi(a) : 90;
}

void *allocate(size_t size, bool host) {
  void *p = std::aligned_alloc(256, (size + 255) / 256 * 256 + 256);
  if (!p)
    return nullptr;
  std::lock_guard<std::mutex> lock(memMutex);
  allocations[reinterpret_cast<uintptr_t>(p)] = {size, host};
  return p;
}

bool release(void *p) {
  std::lock_guard<std::mutex> lock(memMutex);
  auto it = allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == allocations.end())
    return false;
  allocations.erase(it);
  std::free(p);
  return true;
}

const Allocation *find(uintptr_t p) {
  std::lock_guard<std::mutex> lock(memMutex);
  auto it = allocations.upper_bound(p);
  if (it == allocations.begin())
    return nullptr;
  --it;
  return p < it->first + it->second.size ? &it->second : nullptr;
}

template <typename P, typename O, typename K>
void run(void (*k)(O, K, P, const long long *), unsigned grid, unsigned block,
         void **params) {
  P p;
  std::memcpy(&p, params[2], sizeof p);
  ddtcEmulateLaunch(k, grid, block, *static_cast<O *>(params[0]),
                    *static_cast<K *>(params[1]), p,
                    *static_cast<const long long **>(params[3]));
}

} // namespace

extern "C" {

CUresult cuInit(unsigned) { return kSuccess; }
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return kSuccess;
}
CUresult cuGetErrorString(CUresult rc, const char **s) {
  *s = rc == kNotFound ? "named symbol not found (fake driver: only the "
                         "generic kernels run)"
                       : "fake driver error";
  return kSuccess;
}
CUresult cuGetErrorName(CUresult rc, const char **s) {
  switch (rc) {
  case kSuccess:
    *s = "CUDA_SUCCESS";
    break;
  case kInvalidValue:
    *s = "CUDA_ERROR_INVALID_VALUE";
    break;
  case kNotFound:
    *s = "CUDA_ERROR_NOT_FOUND";
    break;
  default:
    *s = "CUDA_ERROR_FAKE";
  }
  return kSuccess;
}
CUresult cuDeviceGet(int *d, int ordinal) {
  if (ordinal != 0)
    return kInvalidValue;
  *d = 0;
  return kSuccess;
}
CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int) {
  switch (attr) {
  case 75:
    *v = fakeArch() / 10;
    return kSuccess;
  case 76:
    *v = fakeArch() % 10;
    return kSuccess;
  case 16:
    *v = 4;
    return kSuccess;
  case 19:
  case 41:
    *v = 1;
    return kSuccess;
  }
  return kInvalidValue;
}
CUresult cuDeviceGetName(char *name, int len, int) {
  std::snprintf(name, static_cast<size_t>(len), "ddtc fake CPU device sm_%d",
                fakeArch());
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(FakeContext **c, int) {
  *c = &primary;
  return kSuccess;
}
CUresult cuCtxGetCurrent(FakeContext **c) {
  *c = current;
  return kSuccess;
}
CUresult cuCtxSetCurrent(FakeContext *c) {
  current = c;
  return kSuccess;
}
CUresult cuCtxPushCurrent_v2(FakeContext *c) {
  stack.push_back(current);
  current = c;
  return kSuccess;
}
CUresult cuCtxPopCurrent_v2(FakeContext **c) {
  if (stack.empty())
    return kInvalidContext;
  if (c)
    *c = current;
  current = stack.back();
  stack.pop_back();
  return kSuccess;
}
CUresult cuCtxGetDevice(int *d) {
  if (!current)
    return kInvalidContext;
  *d = 0;
  return kSuccess;
}
CUresult cuCtxSynchronize() { return current ? kSuccess : kInvalidContext; }
CUresult cuCtxGetId(FakeContext *c, unsigned long long *id) {
  *id = c->id;
  return kSuccess;
}
CUresult cuModuleLoadData(void **m, const void *image) {
  if (!current)
    return kInvalidContext;
  if (!image)
    return kInvalidValue;
  *m = &moduleStorage;
  return kSuccess;
}
CUresult cuModuleUnload(void *) { return kSuccess; }
CUresult cuModuleGetFunction(FakeFunction **f, void *, const char *name) {
  int width = 0;
  char dir[16] = "";
  if (std::sscanf(name, "ddtc_units_w%d_%15s", &width, dir) != 2 ||
      !(width == 1 || width == 2 || width == 4 || width == 8 || width == 16))
    return kNotFound;
  bool pack = std::strcmp(dir, "pack") == 0;
  if (!pack && std::strcmp(dir, "unpack") != 0)
    return kNotFound;
  *f = &functions[pack][width];
  (*f)->pack = pack;
  (*f)->width = width;
  return kSuccess;
}
CUresult cuLaunchKernel(FakeFunction *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *, void **params, void **extra) {
  if (!current)
    return kInvalidContext;
  if (!f || !params || extra || gx == 0 || gy != 1 || gz != 1 || bx == 0 ||
      bx % 32 != 0 || bx > 1024 || by != 1 || bz != 1 || shared != 0)
    return kInvalidValue;
  using CO = const unsigned char *;
  using MO = unsigned char *;
#define DDTC_FAKE_WIDTH(W)                                                     \
  case W:                                                                      \
    if (f->pack)                                                               \
      run<ddtc_units_w##W##_params, CO, MO>(ddtc_units_w##W##_pack, gx, bx,    \
                                            params);                           \
    else                                                                       \
      run<ddtc_units_w##W##_params, MO, CO>(ddtc_units_w##W##_unpack, gx, bx,  \
                                            params);                           \
    return kSuccess;
  switch (f->width) {
    DDTC_FAKE_WIDTH(1)
    DDTC_FAKE_WIDTH(2)
    DDTC_FAKE_WIDTH(4)
    DDTC_FAKE_WIDTH(8)
    DDTC_FAKE_WIDTH(16)
  }
#undef DDTC_FAKE_WIDTH
  return kInvalidHandle;
}
CUresult cuMemAlloc_v2(unsigned long long *p, size_t size) {
  void *q = allocate(size, false);
  if (!q)
    return kOutOfMemory;
  *p = reinterpret_cast<uintptr_t>(q);
  return kSuccess;
}
CUresult cuMemFree_v2(unsigned long long p) {
  return release(reinterpret_cast<void *>(p)) ? kSuccess : kInvalidValue;
}
CUresult cuMemAllocHost_v2(void **p, size_t size) {
  *p = allocate(size, true);
  return *p ? kSuccess : kOutOfMemory;
}
CUresult cuMemHostAlloc(void **p, size_t size, unsigned) {
  *p = allocate(size, true);
  return *p ? kSuccess : kOutOfMemory;
}
CUresult cuMemFreeHost(void *p) {
  return release(p) ? kSuccess : kInvalidValue;
}
CUresult cuMemHostGetDevicePointer_v2(unsigned long long *d, void *h,
                                      unsigned) {
  const Allocation *a = find(reinterpret_cast<uintptr_t>(h));
  if (!a || !a->host)
    return kInvalidValue;
  *d = reinterpret_cast<uintptr_t>(h);
  return kSuccess;
}
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *h, size_t n) {
  std::memcpy(reinterpret_cast<void *>(d), h, n);
  return kSuccess;
}
CUresult cuMemcpyDtoH_v2(void *h, unsigned long long d, size_t n) {
  std::memcpy(h, reinterpret_cast<const void *>(d), n);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(unsigned long long d, const void *h, size_t n,
                              void *) {
  return cuMemcpyHtoD_v2(d, h, n);
}
CUresult cuMemcpyDtoHAsync_v2(void *h, unsigned long long d, size_t n,
                              void *) {
  return cuMemcpyDtoH_v2(h, d, n);
}
CUresult cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s,
                              size_t n, void *) {
  std::memmove(reinterpret_cast<void *>(d), reinterpret_cast<const void *>(s),
               n);
  return kSuccess;
}
CUresult cuMemsetD8_v2(unsigned long long d, unsigned char v, size_t n) {
  std::memset(reinterpret_cast<void *>(d), v, n);
  return kSuccess;
}
CUresult cuPointerGetAttribute(void *data, int attr, unsigned long long p) {
  const Allocation *a = find(static_cast<uintptr_t>(p));
  if (!a)
    return kInvalidValue;
  switch (attr) {
  case 2: // memory type
    *static_cast<unsigned *>(data) = a->host ? 1 : 2;
    return kSuccess;
  case 9: // device ordinal
    *static_cast<int *>(data) = 0;
    return kSuccess;
  case 1: // context
    *static_cast<FakeContext **>(data) = &primary;
    return kSuccess;
  }
  return kInvalidValue;
}
CUresult cuStreamCreate(void **s, unsigned) {
  *s = &streamStorage[nextStream++ % 64];
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *) { return kSuccess; }
CUresult cuStreamSynchronize(void *) {
  return current ? kSuccess : kInvalidContext;
}
CUresult cuEventCreate(void **e, unsigned) {
  *e = &eventStorage[nextEvent++ % 64];
  return kSuccess;
}
CUresult cuEventDestroy_v2(void *) { return kSuccess; }
CUresult cuEventRecord(void *, void *) { return kSuccess; }
CUresult cuEventSynchronize(void *) { return kSuccess; }
CUresult cuEventElapsedTime(float *ms, void *, void *) {
  *ms = 0;
  return kSuccess;
}

} // extern "C"
