//===- CUDADriver.cpp - The CUDA driver API, loaded at run time -----------===//
//
// Entry points are asked for with the ABI of CUDA 12.0 (cuGetProcAddress),
// whose signatures every driver since keeps; without cuGetProcAddress the
// versioned symbol names of cuda.h are looked up with dlsym.
//===----------------------------------------------------------------------===//

#include "CUDADriver.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>

namespace ddtc::cu {

namespace {

/// The ABI version entry points are requested for.
constexpr int kRequestedVersion = 12000;

struct EntryPoint {
  void **slot;
  const char *name;   ///< the name cuGetProcAddress takes
  const char *symbol; ///< the exported symbol of that ABI, for dlsym
  bool required;
};

struct Loaded {
  DriverAPI api{};
  std::string error;
  bool ok = false;
};

template <typename F> void **slot(F &f) {
  return reinterpret_cast<void **>(&f);
}

Loaded load() {
  Loaded l;
  const char *path = std::getenv("DDTC_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    l.error = std::string("the CUDA driver (") + path +
              ") cannot be loaded, so no GPU can be used: " +
              (why ? why : "dlopen failed");
    return l;
  }
  using GetProcV2 = CUresult (*)(const char *, void **, int, uint64_t, int *);
  using GetProcV1 = CUresult (*)(const char *, void **, int, uint64_t);
  auto getProcV2 =
      reinterpret_cast<GetProcV2>(dlsym(lib, "cuGetProcAddress_v2"));
  auto getProcV1 = reinterpret_cast<GetProcV1>(dlsym(lib, "cuGetProcAddress"));

  DriverAPI &a = l.api;
  const EntryPoint entries[] = {
      {slot(a.cuInit), "cuInit", "cuInit", true},
      {slot(a.cuDriverGetVersion), "cuDriverGetVersion", "cuDriverGetVersion",
       true},
      {slot(a.cuGetErrorString), "cuGetErrorString", "cuGetErrorString", true},
      {slot(a.cuGetErrorName), "cuGetErrorName", "cuGetErrorName", true},
      {slot(a.cuDeviceGet), "cuDeviceGet", "cuDeviceGet", true},
      {slot(a.cuDeviceGetCount), "cuDeviceGetCount", "cuDeviceGetCount", true},
      {slot(a.cuDeviceGetAttribute), "cuDeviceGetAttribute",
       "cuDeviceGetAttribute", true},
      {slot(a.cuDeviceGetName), "cuDeviceGetName", "cuDeviceGetName", true},
      {slot(a.cuDevicePrimaryCtxRetain), "cuDevicePrimaryCtxRetain",
       "cuDevicePrimaryCtxRetain", true},
      {slot(a.cuCtxGetCurrent), "cuCtxGetCurrent", "cuCtxGetCurrent", true},
      {slot(a.cuCtxSetCurrent), "cuCtxSetCurrent", "cuCtxSetCurrent", true},
      {slot(a.cuCtxPushCurrent), "cuCtxPushCurrent", "cuCtxPushCurrent_v2",
       true},
      {slot(a.cuCtxPopCurrent), "cuCtxPopCurrent", "cuCtxPopCurrent_v2", true},
      {slot(a.cuCtxGetDevice), "cuCtxGetDevice", "cuCtxGetDevice", true},
      {slot(a.cuCtxSynchronize), "cuCtxSynchronize", "cuCtxSynchronize", true},
      {slot(a.cuCtxGetId), "cuCtxGetId", "cuCtxGetId", false},
      {slot(a.cuModuleLoadData), "cuModuleLoadData", "cuModuleLoadData", true},
      {slot(a.cuModuleUnload), "cuModuleUnload", "cuModuleUnload", true},
      {slot(a.cuModuleGetFunction), "cuModuleGetFunction",
       "cuModuleGetFunction", true},
      {slot(a.cuLaunchKernel), "cuLaunchKernel", "cuLaunchKernel", true},
      {slot(a.cuMemAlloc), "cuMemAlloc", "cuMemAlloc_v2", true},
      {slot(a.cuMemFree), "cuMemFree", "cuMemFree_v2", true},
      {slot(a.cuMemAllocHost), "cuMemAllocHost", "cuMemAllocHost_v2", true},
      {slot(a.cuMemHostAlloc), "cuMemHostAlloc", "cuMemHostAlloc", true},
      {slot(a.cuMemFreeHost), "cuMemFreeHost", "cuMemFreeHost", true},
      {slot(a.cuMemHostGetDevicePointer), "cuMemHostGetDevicePointer",
       "cuMemHostGetDevicePointer_v2", true},
      {slot(a.cuMemcpyHtoD), "cuMemcpyHtoD", "cuMemcpyHtoD_v2", true},
      {slot(a.cuMemcpyDtoH), "cuMemcpyDtoH", "cuMemcpyDtoH_v2", true},
      {slot(a.cuMemcpyHtoDAsync), "cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2",
       true},
      {slot(a.cuMemcpyDtoHAsync), "cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2",
       true},
      {slot(a.cuMemcpyDtoDAsync), "cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2",
       true},
      {slot(a.cuMemcpy2DAsync), "cuMemcpy2DAsync", "cuMemcpy2DAsync_v2", false},
      {slot(a.cuMemcpy3DAsync), "cuMemcpy3DAsync", "cuMemcpy3DAsync_v2", false},
      {slot(a.cuMemsetD8), "cuMemsetD8", "cuMemsetD8_v2", true},
      {slot(a.cuPointerGetAttribute), "cuPointerGetAttribute",
       "cuPointerGetAttribute", true},
      {slot(a.cuStreamCreate), "cuStreamCreate", "cuStreamCreate", true},
      {slot(a.cuStreamDestroy), "cuStreamDestroy", "cuStreamDestroy_v2", true},
      {slot(a.cuStreamSynchronize), "cuStreamSynchronize",
       "cuStreamSynchronize", true},
      {slot(a.cuEventCreate), "cuEventCreate", "cuEventCreate", true},
      {slot(a.cuEventDestroy), "cuEventDestroy", "cuEventDestroy_v2", true},
      {slot(a.cuEventRecord), "cuEventRecord", "cuEventRecord", true},
      {slot(a.cuEventSynchronize), "cuEventSynchronize", "cuEventSynchronize",
       true},
      {slot(a.cuEventElapsedTime), "cuEventElapsedTime", "cuEventElapsedTime",
       true},
      {slot(a.cuEventQuery), "cuEventQuery", "cuEventQuery", true},
      {slot(a.cuStreamQuery), "cuStreamQuery", "cuStreamQuery", true},
      {slot(a.cuStreamWaitEvent), "cuStreamWaitEvent", "cuStreamWaitEvent",
       true},
      {slot(a.cuPointerGetAttributes), "cuPointerGetAttributes",
       "cuPointerGetAttributes", true},
      {slot(a.cuMemHostRegister), "cuMemHostRegister", "cuMemHostRegister_v2",
       true},
      {slot(a.cuMemHostUnregister), "cuMemHostUnregister",
       "cuMemHostUnregister", true},
      {slot(a.cuMemAllocManaged), "cuMemAllocManaged", "cuMemAllocManaged",
       true},
      {slot(a.cuDevicePrimaryCtxRelease), "cuDevicePrimaryCtxRelease",
       "cuDevicePrimaryCtxRelease_v2", true},
      {slot(a.cuIpcGetMemHandle), "cuIpcGetMemHandle", "cuIpcGetMemHandle",
       false},
      {slot(a.cuIpcOpenMemHandle), "cuIpcOpenMemHandle",
       "cuIpcOpenMemHandle_v2", false},
      {slot(a.cuIpcCloseMemHandle), "cuIpcCloseMemHandle",
       "cuIpcCloseMemHandle", false},
      {slot(a.cuStreamWaitValue64), "cuStreamWaitValue64",
       "cuStreamWaitValue64_v2", false},
      {slot(a.cuStreamWriteValue64), "cuStreamWriteValue64",
       "cuStreamWriteValue64_v2", false},
  };
  std::string missing;
  for (const EntryPoint &e : entries) {
    void *fn = nullptr;
    int status = 0;
    if (getProcV2) {
      if (getProcV2(e.name, &fn, kRequestedVersion, 0, &status) != CUDA_SUCCESS)
        fn = nullptr;
    } else if (getProcV1) {
      if (getProcV1(e.name, &fn, kRequestedVersion, 0) != CUDA_SUCCESS)
        fn = nullptr;
    }
    if (!fn)
      fn = dlsym(lib, e.symbol);
    *e.slot = fn;
    if (!fn && e.required)
      missing += std::string(missing.empty() ? "" : ", ") + e.name;
  }
  if (!missing.empty()) {
    l.error = std::string("the CUDA driver (") + path +
              ") is too old for ddtc: it lacks " + missing;
    return l;
  }
  CUresult rc = a.cuInit(0);
  if (rc != CUDA_SUCCESS) {
    l.error = "the CUDA driver cannot start (no usable GPU): " +
              describeError(a, "cuInit", rc);
    return l;
  }
  int devices = 0;
  rc = a.cuDeviceGetCount(&devices);
  if (rc != CUDA_SUCCESS || devices == 0) {
    l.error = rc != CUDA_SUCCESS
                  ? describeError(a, "cuDeviceGetCount", rc)
                  : std::string("the CUDA driver reports no GPU");
    return l;
  }
  l.ok = true;
  return l;
}

} // namespace

const DriverAPI *getDriver(std::string &error) {
  static const Loaded loaded = load();
  if (!loaded.ok) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.api;
}

std::string describeError(const DriverAPI &api, const char *call, CUresult rc) {
  const char *name = nullptr, *text = nullptr;
  if (api.cuGetErrorName(rc, &name) != CUDA_SUCCESS || !name)
    name = "unknown CUDA error";
  if (api.cuGetErrorString(rc, &text) != CUDA_SUCCESS || !text)
    text = "";
  std::string s =
      std::string(call) + " failed: " + name + " (" + std::to_string(rc) + ")";
  if (*text)
    s += ": " + std::string(text);
  return s;
}

} // namespace ddtc::cu
