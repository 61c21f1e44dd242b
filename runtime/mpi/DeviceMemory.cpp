//===- DeviceMemory.cpp - Buffer classification, streams, the pinned pool -===//
//
// The CUDA driver is the runtime's (loaded at run time, DDTC_CUDA_DRIVER
// honoured): without one every buffer is host memory and the layer only
// forwards. One stream per thread and context keeps threads from waiting on
// each other's work.
//===----------------------------------------------------------------------===//

#include "DeviceDriver.h"
#include "Profile.h"

#include <map>
#include <vector>

namespace ddtc::mpi {

const cu::DriverAPI *driver() {
  static const cu::DriverAPI *api = [] {
    std::string error;
    const cu::DriverAPI *a = cu::getDriver(error);
    if (!a)
      note(2, "no CUDA driver (%s): every buffer is host memory",
           error.c_str());
    return a;
  }();
  return api;
}

namespace {

/// Makes a context current on this thread: the primary context of the
/// device holding `address` (else device 0), as the CUDA runtime would.
cu::CUcontext ensureContext(const cu::DriverAPI &api, const void *address) {
  cu::CUcontext ctx = nullptr;
  api.cuCtxGetCurrent(&ctx);
  if (ctx)
    return ctx;
  int ordinal = 0;
  if (address &&
      api.cuPointerGetAttribute(
          &ordinal, cu::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
          reinterpret_cast<cu::CUdeviceptr>(address)) != cu::CUDA_SUCCESS)
    ordinal = 0;
  cu::CUdevice dev = 0;
  if (api.cuDeviceGet(&dev, ordinal) != cu::CUDA_SUCCESS ||
      api.cuDevicePrimaryCtxRetain(&ctx, dev) != cu::CUDA_SUCCESS)
    return nullptr;
  api.cuCtxSetCurrent(ctx);
  return ctx;
}

struct ContextStreams {
  cu::CUcontext ctx = nullptr;
  cu::CUstream main = nullptr, copy = nullptr;
  cu::CUstream read[kReadStreams] = {};
};
struct ThreadStreams {
  std::vector<ContextStreams> streams;
  ~ThreadStreams() {
    // Streams of exiting threads are left to the context: destroying them
    // here could race with the driver's own teardown at process exit.
  }
};
thread_local ThreadStreams threadStreams;

std::mutex poolMutex;
std::map<size_t, std::vector<void *>> pool; // by rounded size

} // namespace

size_t roundSize(size_t bytes) {
  size_t s = 4096;
  while (s < bytes)
    s <<= 1;
  return s;
}

bool makeContextCurrent(const void *address) {
  const cu::DriverAPI *api = driver();
  return api && ensureContext(*api, address);
}

bool haveDriver() { return driver() != nullptr; }

void *currentContextHandle() {
  const cu::DriverAPI *api = driver();
  cu::CUcontext ctx = nullptr;
  if (api)
    api->cuCtxGetCurrent(&ctx);
  return ctx;
}

void makeContextCurrentHandle(void *context) {
  const cu::DriverAPI *api = driver();
  if (api && context)
    api->cuCtxSetCurrent(static_cast<cu::CUcontext>(context));
}

bool isDeviceBuffer(const void *address) {
  const cu::DriverAPI *api = driver();
  if (!api || !address)
    return false;
  unsigned memType = 0;
  unsigned managed = 0;
  int attrs[2] = {cu::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                  cu::CU_POINTER_ATTRIBUTE_IS_MANAGED};
  void *data[2] = {&memType, &managed};
  if (api->cuPointerGetAttributes(2, attrs, data,
                                  reinterpret_cast<cu::CUdeviceptr>(address)) !=
      cu::CUDA_SUCCESS)
    return false;
  return memType == cu::CU_MEMORYTYPE_DEVICE && !managed;
}

/// The streams of the calling thread in the current context (made current
/// from `address`); null without a driver or context.
static ContextStreams *contextStreams(const void *address) {
  const cu::DriverAPI *api = driver();
  if (!api)
    return nullptr;
  cu::CUcontext ctx = ensureContext(*api, address);
  if (!ctx)
    return nullptr;
  for (ContextStreams &c : threadStreams.streams)
    if (c.ctx == ctx)
      return &c;
  threadStreams.streams.push_back({});
  threadStreams.streams.back().ctx = ctx;
  return &threadStreams.streams.back();
}

/// `slot`, a stream of the calling thread, made on first use. Blocking, all
/// of them: their work is ordered after what the application queued on the
/// legacy default stream before the MPI call (a cudaMemcpy from pageable
/// memory may return before its copy has landed), as an MPI call on a
/// device buffer must see the buffer as of the call.
static void *madeStream(cu::CUstream &slot) {
  if (!slot && driver()->cuStreamCreate(&slot, 0) != cu::CUDA_SUCCESS)
    slot = nullptr;
  return slot;
}

void *threadStream(const void *address) {
  ContextStreams *c = contextStreams(address);
  return c ? madeStream(c->main) : nullptr;
}

void *threadReadStream(const void *address, int i) {
  if (i <= 0 || i >= kReadStreams)
    return threadStream(address);
  ContextStreams *c = contextStreams(address);
  return c ? madeStream(c->read[i]) : nullptr;
}

void *threadCopyStream(const void *address) {
  ContextStreams *c = contextStreams(address);
  return c ? madeStream(c->copy) : nullptr;
}

namespace {

/// An event of the pool, with the context it was made in (an event can be
/// recorded only on a stream of its own context).
struct PooledEvent {
  cu::CUevent event = nullptr;
  cu::CUcontext ctx = nullptr;
};
std::mutex eventMutex; // guards freeEvents
std::vector<PooledEvent *> freeEvents;
/// Beyond this many idle events, released ones are destroyed.
constexpr size_t kPooledEvents = 256;

cu::CUevent rawEvent(void *event) {
  return static_cast<PooledEvent *>(event)->event;
}

/// An idle event of `ctx`, or a new one; null when none can be made.
PooledEvent *takeEvent(const cu::DriverAPI &api, cu::CUcontext ctx) {
  {
    std::lock_guard<std::mutex> lock(eventMutex);
    for (size_t i = freeEvents.size(); i-- > 0;)
      if (freeEvents[i]->ctx == ctx) {
        PooledEvent *e = freeEvents[i];
        freeEvents[i] = freeEvents.back();
        freeEvents.pop_back();
        return e;
      }
  }
  cu::CUevent e = nullptr;
  if (api.cuEventCreate(&e, cu::CU_EVENT_DISABLE_TIMING) != cu::CUDA_SUCCESS)
    return nullptr;
  return new PooledEvent{e, ctx};
}

void destroyEvent(const cu::DriverAPI &api, PooledEvent *e) {
  api.cuEventDestroy(e->event);
  delete e;
}

} // namespace

bool streamWait(void *stream, void *event) {
  const cu::DriverAPI *api = driver();
  return api && event &&
         api->cuStreamWaitEvent(static_cast<cu::CUstream>(stream),
                                rawEvent(event), 0) == cu::CUDA_SUCCESS;
}

bool copyDeviceAsync(void *dst, const void *src, size_t bytes, void *stream) {
  const cu::DriverAPI *api = driver();
  return api && (bytes == 0 ||
                 api->cuMemcpyDtoDAsync(
                     reinterpret_cast<cu::CUdeviceptr>(dst),
                     reinterpret_cast<cu::CUdeviceptr>(src), bytes,
                     static_cast<cu::CUstream>(stream)) == cu::CUDA_SUCCESS);
}

bool syncStream(void *stream, std::string &error) {
  const cu::DriverAPI *api = driver();
  if (!api)
    return false;
  cu::CUresult rc = api->cuStreamSynchronize(static_cast<cu::CUstream>(stream));
  if (rc != cu::CUDA_SUCCESS) {
    error = cu::describeError(*api, "cuStreamSynchronize", rc);
    return false;
  }
  return true;
}

bool fence(void *stream) {
  const cu::DriverAPI *api = driver();
  void *e = recordEvent(stream);
  if (!api || !e)
    return false;
  bool ok = api->cuEventSynchronize(rawEvent(e)) == cu::CUDA_SUCCESS;
  releaseEvent(e);
  return ok;
}

void *recordEvent(void *stream) {
  CostScope cost(Cost::Event);
  const cu::DriverAPI *api = driver();
  if (!api)
    return nullptr;
  cu::CUcontext ctx = nullptr;
  api->cuCtxGetCurrent(&ctx);
  PooledEvent *e = takeEvent(*api, ctx);
  if (!e)
    return nullptr;
  if (api->cuEventRecord(e->event, static_cast<cu::CUstream>(stream)) !=
      cu::CUDA_SUCCESS) {
    destroyEvent(*api, e);
    return nullptr;
  }
  return e;
}

bool eventDone(void *event) {
  CostScope cost(Cost::Query);
  const cu::DriverAPI *api = driver();
  return !event || !api ||
         api->cuEventQuery(rawEvent(event)) != cu::CUDA_ERROR_NOT_READY;
}

void releaseEvent(void *event) {
  const cu::DriverAPI *api = driver();
  if (!api || !event)
    return;
  // A record still pending is harmless: the next user records it again,
  // and queries and waits see only the latest record.
  auto *e = static_cast<PooledEvent *>(event);
  {
    std::lock_guard<std::mutex> lock(eventMutex);
    if (freeEvents.size() < kPooledEvents) {
      freeEvents.push_back(e);
      return;
    }
  }
  destroyEvent(*api, e);
}

void trimEvents() {
  const cu::DriverAPI *api = driver();
  std::lock_guard<std::mutex> lock(eventMutex);
  for (PooledEvent *e : freeEvents)
    if (api)
      destroyEvent(*api, e);
  freeEvents.clear();
}

bool copyToHostAsync(void *host, const void *device, size_t bytes,
                     void *stream) {
  const cu::DriverAPI *api = driver();
  return api && (bytes == 0 ||
                 api->cuMemcpyDtoHAsync(
                     host, reinterpret_cast<cu::CUdeviceptr>(device), bytes,
                     static_cast<cu::CUstream>(stream)) == cu::CUDA_SUCCESS);
}

bool copyToDeviceAsync(void *device, const void *host, size_t bytes,
                       void *stream) {
  const cu::DriverAPI *api = driver();
  return api && (bytes == 0 ||
                 api->cuMemcpyHtoDAsync(
                     reinterpret_cast<cu::CUdeviceptr>(device), host, bytes,
                     static_cast<cu::CUstream>(stream)) == cu::CUDA_SUCCESS);
}

bool copyToHost(void *host, const void *device, size_t bytes) {
  const cu::DriverAPI *api = driver();
  if (!api || !ensureContext(*api, device))
    return false;
  return bytes == 0 ||
         api->cuMemcpyDtoH(host, reinterpret_cast<cu::CUdeviceptr>(device),
                           bytes) == cu::CUDA_SUCCESS;
}

bool copyToDevice(void *device, const void *host, size_t bytes) {
  const cu::DriverAPI *api = driver();
  if (!api || !ensureContext(*api, device))
    return false;
  return bytes == 0 ||
         api->cuMemcpyHtoD(reinterpret_cast<cu::CUdeviceptr>(device), host,
                           bytes) == cu::CUDA_SUCCESS;
}

void *pinnedAcquire(size_t bytes) {
  size_t size = roundSize(bytes);
  {
    std::lock_guard<std::mutex> lock(poolMutex);
    auto &list = pool[size];
    if (!list.empty()) {
      void *p = list.back();
      list.pop_back();
      return p;
    }
  }
  const cu::DriverAPI *api = driver();
  if (!api || !ensureContext(*api, nullptr))
    return nullptr;
  void *p = nullptr;
  if (api->cuMemHostAlloc(&p, size,
                          cu::CU_MEMHOSTALLOC_PORTABLE |
                              cu::CU_MEMHOSTALLOC_DEVICEMAP) !=
      cu::CUDA_SUCCESS)
    return nullptr;
  note(2, "pinned pool: %zu bytes allocated", size);
  return p;
}

void pinnedRelease(void *p, size_t bytes) {
  if (!p)
    return;
  std::lock_guard<std::mutex> lock(poolMutex);
  pool[roundSize(bytes)].push_back(p);
}

void pinnedTrim() {
  const cu::DriverAPI *api = driver();
  std::lock_guard<std::mutex> lock(poolMutex);
  for (auto &[size, list] : pool)
    for (void *p : list)
      if (api)
        api->cuMemFreeHost(p);
  pool.clear();
}

} // namespace ddtc::mpi
