//===- DeviceContext.cpp - What ddtc keeps per CUDA context ---------------===//

#include "DeviceContext.h"

#include "KernelCache.h"

#include <atomic>
#include <cstdio>
#include <memory>

namespace ddtc::rt {

using namespace cu;

namespace {

struct Registry {
  std::mutex m;
  std::vector<std::unique_ptr<DeviceContext>> contexts; // never removed
};

Registry &registry() {
  static Registry *r = new Registry; // outlives every caller, even at exit
  return *r;
}

Status driverError(const DriverAPI &api, const char *call, CUresult rc) {
  ddtc_status code = rc == CUDA_ERROR_OUT_OF_MEMORY ? DDTC_ERROR_OUT_OF_MEMORY
                                                    : DDTC_ERROR_CUDA;
  return Status::error(code, describeError(api, call, rc));
}

/// The arch (major * 10 + minor) and SM count of `dev`.
Status describeDevice(const DriverAPI &api, CUdevice dev, int &arch,
                      int &sms) {
  int major = 0, minor = 0;
  CUresult rc = api.cuDeviceGetAttribute(
      &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  if (rc == CUDA_SUCCESS)
    rc = api.cuDeviceGetAttribute(
        &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  if (rc == CUDA_SUCCESS)
    rc = api.cuDeviceGetAttribute(
        &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  if (rc != CUDA_SUCCESS)
    return driverError(api, "cuDeviceGetAttribute", rc);
  arch = major * 10 + minor;
  return Status::success();
}

/// Makes the current context `dc`'s for the scope (for calls from threads
/// where another context, or none, is current).
class ScopedContext {
public:
  ScopedContext(const DriverAPI &api, CUcontext ctx) : api_(api) {
    CUcontext cur = nullptr;
    if (api_.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx)
      return;
    pushed_ = api_.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
  }
  ~ScopedContext() {
    CUcontext popped;
    if (pushed_)
      api_.cuCtxPopCurrent(&popped);
  }

private:
  const DriverAPI &api_;
  bool pushed_ = false;
};

} // namespace

Status requireDriver(const DriverAPI *&api) {
  std::string error;
  api = getDriver(error);
  if (!api)
    return Status::error(DDTC_ERROR_NO_DEVICE, error);
  return Status::success();
}

Status currentContext(const DriverAPI &api, const void *hint,
                      DeviceContext *&out) {
  CUcontext ctx = nullptr;
  CUresult rc = api.cuCtxGetCurrent(&ctx);
  if (rc != CUDA_SUCCESS)
    return driverError(api, "cuCtxGetCurrent", rc);
  if (!ctx) {
    int ordinal = 0;
    if (!hint || api.cuPointerGetAttribute(
                     &ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                     reinterpret_cast<CUdeviceptr>(hint)) != CUDA_SUCCESS)
      ordinal = 0;
    CUdevice dev = 0;
    rc = api.cuDeviceGet(&dev, ordinal);
    if (rc != CUDA_SUCCESS)
      return driverError(api, "cuDeviceGet", rc);
    rc = api.cuDevicePrimaryCtxRetain(&ctx, dev);
    if (rc != CUDA_SUCCESS)
      return driverError(api, "cuDevicePrimaryCtxRetain", rc);
    rc = api.cuCtxSetCurrent(ctx);
    if (rc != CUDA_SUCCESS)
      return driverError(api, "cuCtxSetCurrent", rc);
  }
  unsigned long long id = 0;
  if (api.cuCtxGetId)
    api.cuCtxGetId(ctx, &id);

  // The last context this thread used, to skip the registry's lock.
  thread_local DeviceContext *last = nullptr;
  if (last && last->ctx == ctx && last->id == id) {
    out = last;
    return Status::success();
  }
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.m);
  for (const std::unique_ptr<DeviceContext> &dc : r.contexts) {
    if (dc->ctx == ctx && dc->id == id) {
      out = last = dc.get();
      return Status::success();
    }
  }
  auto dc = std::make_unique<DeviceContext>();
  dc->ctx = ctx;
  dc->id = id;
  rc = api.cuCtxGetDevice(&dc->device);
  if (rc != CUDA_SUCCESS)
    return driverError(api, "cuCtxGetDevice", rc);
  Status s = describeDevice(api, dc->device, dc->arch, dc->multiprocessors);
  if (!s.ok())
    return s;
  out = last = dc.get();
  r.contexts.push_back(std::move(dc));
  return Status::success();
}

int deviceArch() {
  std::string error;
  const DriverAPI *api = getDriver(error);
  if (!api)
    return 0;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (api->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx) {
    if (api->cuCtxGetDevice(&dev) != CUDA_SUCCESS)
      return 0;
  } else if (api->cuDeviceGet(&dev, 0) != CUDA_SUCCESS) {
    return 0;
  }
  // A device's architecture does not change: asked of the driver once per
  // device, since every commit needs it (three attribute queries cost a
  // cache hit of a type more than the rest of it).
  constexpr int kKnownDevices = 64;
  static std::atomic<int> known[kKnownDevices] = {};
  const bool cacheable = dev >= 0 && dev < kKnownDevices;
  if (cacheable)
    if (int arch = known[dev].load(std::memory_order_relaxed))
      return arch;
  int arch = 0, sms = 0;
  if (!describeDevice(*api, dev, arch, sms).ok())
    return 0;
  if (cacheable)
    known[dev].store(arch, std::memory_order_relaxed);
  return arch;
}

Status loadModule(const DriverAPI &api, DeviceContext &dc, uint64_t id,
                  const void *image, const void *unpackImage,
                  const std::string &packName, const std::string &unpackName,
                  const LoadedModule *&out, const std::string &copyName) {
  std::lock_guard<std::mutex> lock(dc.m);
  auto it = dc.modules.find(id);
  if (it != dc.modules.end()) {
    out = &it->second;
    return Status::success();
  }
  ScopedContext scope(api, dc.ctx);
  LoadedModule m;
  CUresult rc = api.cuModuleLoadData(&m.module, image);
  if (rc != CUDA_SUCCESS)
    return driverError(api, "cuModuleLoadData", rc);
  ++stats().moduleLoads;
  m.unpackModule = m.module;
  if (unpackImage) {
    rc = api.cuModuleLoadData(&m.unpackModule, unpackImage);
    if (rc != CUDA_SUCCESS) {
      api.cuModuleUnload(m.module);
      return driverError(api, "cuModuleLoadData", rc);
    }
    ++stats().moduleLoads;
  }
  const std::string *missing = &packName;
  rc = api.cuModuleGetFunction(&m.pack, m.module, packName.c_str());
  if (rc == CUDA_SUCCESS) {
    missing = &unpackName;
    rc = api.cuModuleGetFunction(&m.unpack, m.unpackModule, unpackName.c_str());
  }
  if (rc != CUDA_SUCCESS) {
    api.cuModuleUnload(m.module);
    if (m.unpackModule != m.module)
      api.cuModuleUnload(m.unpackModule);
    return Status::error(DDTC_ERROR_INTERNAL,
                         describeError(api, "cuModuleGetFunction", rc) +
                             " (kernel " + *missing + ")");
  }
  if (!copyName.empty() &&
      api.cuModuleGetFunction(&m.copy, m.module, copyName.c_str()) !=
          CUDA_SUCCESS)
    m.copy = nullptr;
  out = &dc.modules.emplace(id, m).first->second;
  return Status::success();
}

Status uploadTable(const DriverAPI &api, DeviceContext &dc,
                   const KernelPlan &plan, CUdeviceptr &out) {
  const UnitTable &units = plan.units, &after = plan.unpackUnits;
  std::lock_guard<std::mutex> lock(dc.m);
  ScopedContext scope(api, dc.ctx);
  CUresult rc;
  if (!dc.uploadStream) {
    rc = api.cuStreamCreate(&dc.uploadStream, CU_STREAM_NON_BLOCKING);
    if (rc != CUDA_SUCCESS)
      return driverError(api, "cuStreamCreate", rc);
  }
  size_t bytes = units.size() * sizeof(WorkUnit);
  const size_t afterBytes = after.size() * sizeof(WorkUnit);
  CUdeviceptr p = 0;
  rc = api.cuMemAlloc(&p, bytes + afterBytes ? bytes + afterBytes : 1);
  if (rc != CUDA_SUCCESS)
    return driverError(api, "cuMemAlloc", rc);
  // A copy on a private stream, waited for: kernels on any stream of the
  // context see the table, and no stream of the application is blocked.
  // The unpack's units in destination order follow the units.
  rc = api.cuMemcpyHtoDAsync(p, units.data(), bytes, dc.uploadStream);
  if (rc == CUDA_SUCCESS && afterBytes)
    rc = api.cuMemcpyHtoDAsync(p + bytes, after.data(), afterBytes,
                               dc.uploadStream);
  if (rc == CUDA_SUCCESS)
    rc = api.cuStreamSynchronize(dc.uploadStream);
  if (rc != CUDA_SUCCESS) {
    api.cuMemFree(p);
    return driverError(api, "cuMemcpyHtoDAsync", rc);
  }
  ++stats().tableUploads;
  out = p;
  return Status::success();
}

void freeDeviceMemory(const DriverAPI &api, DeviceContext &dc, CUdeviceptr p) {
  if (!p)
    return;
  ScopedContext scope(api, dc.ctx);
  api.cuMemFree(p);
}

Status checkDevicePointer(const DriverAPI &api, const void *p, const char *what,
                          unsigned *memoryType) {
  unsigned type = 0;
  CUresult rc = api.cuPointerGetAttribute(
      &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p));
  if (memoryType)
    *memoryType = rc == CUDA_SUCCESS ? type : 0;
  if (rc == CUDA_SUCCESS)
    return Status::success();
  char addr[32];
  std::snprintf(addr, sizeof addr, "%p", p);
  return Status::error(
      DDTC_ERROR_INVALID_POINTER,
      std::string("the ") + what + " buffer (" + addr +
          ") is not memory the GPU can access: pass device, managed or "
          "mapped pinned host memory (" +
          describeError(api, "cuPointerGetAttribute", rc) +
          "; DDTC_CHECK_POINTERS=0 skips this check)");
}

} // namespace ddtc::rt
