//===- FakeCUDADriver.cpp - A CUDA driver that runs on the CPU, for tests -===//
//
// A stand-in for libcuda.so.1 (load it with DDTC_CUDA_DRIVER=path) that
// lets the runtime's GPU path run where there is no GPU: one fake device
// (sm_90, or DDTC_FAKE_ARCH), "device" memory that is host memory (so
// pointers are unified, as on a real 64-bit system), mapped, registered and
// managed host memory, and kernel launches of the generic kernels (work-unit
// and nest),
// whose source is compiled into this library through CPUEmulation.h.
// Modules load any image; only functions named like the generic kernels can
// be found in them (the specialized strided kernels cannot run here). Memory
// the fake did not allocate or register is "pageable": cuPointerGetAttribute
// fails for it, as the real driver's does.
//
// Streams are asynchronous, so that a missing synchronization shows: each
// stream has a worker thread that runs its operations (launches, async
// copies, event records and waits) in order, each after a random delay of
// up to DDTC_FAKE_DELAY_US microseconds (default 0; the delays come from
// DDTC_FAKE_SEED, or from the time and the process id). The legacy stream
// (null, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD: one and the same here) is
// a worker of its own too, but, more loosely than the real one, it neither
// waits for the other streams' earlier work nor makes them wait for its
// own. The synchronous calls (cuMemcpyHtoD, cuMemcpyDtoH, cuMemsetD8,
// cuCtxSynchronize, and the frees, which synchronize on the real driver
// too) first wait until every stream has run what was queued before them.
// As with the real driver, an async copy from pageable memory reads its
// source before it returns, and one to pageable memory returns once it has
// run.
//
// Device memory is shared memory (a memfd per allocation), so that CUDA IPC
// works between processes of one host as on the real driver: a handle names
// the owner's process and file descriptor, and cuIpcOpenMemHandle maps the
// same pages at another address in the opening process, after a delay of
// DDTC_FAKE_IPC_OPEN_US (closing: DDTC_FAKE_IPC_CLOSE_US) that stands for
// the real driver's cost. DDTC_FAKE_IPC=0 makes every open fail, as it does
// between containers; DDTC_FAKE_IPC_FAIL_EVERY=N makes every Nth fail, and
// DDTC_FAKE_IPC_FAIL_RANK=R every one in the MPI process of world rank R
// (OMPI_COMM_WORLD_RANK or PMI_RANK). Opening a handle in the process that made
// it fails, as on the real driver, and so does opening one of an allocation at
// an address of the owner's while a mapping of an earlier allocation there is
// still open (the real driver says CUDA_ERROR_ALREADY_MAPPED then).
//
// The 64-bit stream memory operations (a wait for a word to reach a value,
// a write of one) run on the stream's worker like any other operation, on
// shared memory, so a wait in one process sees a write from another;
// DDTC_FAKE_STREAM_MEMOPS=0 takes them away (DDTC_FAKE_STREAM_MEMOPS_RANK=R:
// from the MPI process of world rank R only).
//
// Every entry point may be called from many threads at once.
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ddtc/Target/CUDA/CPUEmulation.h"

// The generic kernels' source, compiled for the CPU: after the emulation
// header, which defines what CUDA C++ needs.
#include "GenericKernelSources.inc"

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2,
                   kInvalidContext = 201, kInvalidHandle = 400, kNotFound = 500,
                   kNotReady = 600, kAlreadyRegistered = 712,
                   kNotRegistered = 713;
constexpr unsigned kEventDisableTiming = 2;
constexpr unsigned kAttachGlobal = 1, kAttachHost = 2;

using Clock = std::chrono::steady_clock;

struct FakeContext {
  unsigned long long id;
};
FakeContext primary{7};
thread_local FakeContext *current = nullptr;
thread_local std::vector<FakeContext *> stack;

int fakeArch() {
  const char *a = std::getenv("DDTC_FAKE_ARCH");
  return a && *a ? std::atoi(a) : 90;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Imported: a peer's device memory mapped by cuIpcOpenMemHandle.
enum class MemKind { Device, Host, Registered, Managed, Imported };

struct Allocation {
  uintptr_t base;
  size_t size;
  MemKind kind;
  unsigned long long bufferId;
  int fd = -1;       ///< the memfd of device memory (-1: heap memory)
  size_t mapped = 0; ///< bytes mapped (device and imported memory)
};
std::mutex memMutex;
std::map<uintptr_t, Allocation> allocations; // by base address
unsigned long long nextBufferId = 1;

size_t pageRound(size_t size) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (std::max<size_t>(size, 1) + page - 1) / page * page;
}

void *allocate(size_t size, MemKind kind) {
  void *p = nullptr;
  int fd = -1;
  size_t mapped = 0;
  if (kind == MemKind::Device) {
    fd = memfd_create("ddtc-fake-device", MFD_CLOEXEC);
    mapped = pageRound(size);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(mapped)) != 0) {
      if (fd >= 0)
        close(fd);
      return nullptr;
    }
    p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      close(fd);
      return nullptr;
    }
  } else {
    p = std::aligned_alloc(256, (size + 255) / 256 * 256 + 256);
    if (!p)
      return nullptr;
  }
  std::lock_guard<std::mutex> lock(memMutex);
  uintptr_t base = reinterpret_cast<uintptr_t>(p);
  allocations[base] = {base, size, kind, nextBufferId++, fd, mapped};
  return p;
}

/// Gives the memory of an allocation back (memMutex held).
void unmap(const Allocation &a) {
  if (a.mapped) {
    munmap(reinterpret_cast<void *>(a.base), a.mapped);
    if (a.fd >= 0)
      close(a.fd);
  } else {
    std::free(reinterpret_cast<void *>(a.base));
  }
}

/// A copy, not a reference: another thread may free the allocation.
std::optional<Allocation> find(uintptr_t p) {
  std::lock_guard<std::mutex> lock(memMutex);
  auto it = allocations.upper_bound(p);
  if (it == allocations.begin())
    return std::nullopt;
  --it;
  if (p >= it->first + it->second.size)
    return std::nullopt;
  return it->second;
}

void drainAll();
void drainStreams(bool legacyOrder);

/// Frees an allocation of kind `a` or `b` (device and managed memory go
/// through cuMemFree, pinned host memory through cuMemFreeHost). Waits for
/// all queued work first, as the real frees do, so that no queued operation
/// touches freed memory.
CUresult release(uintptr_t p, MemKind a, MemKind b) {
  drainAll();
  std::lock_guard<std::mutex> lock(memMutex);
  auto it = allocations.find(p);
  if (it == allocations.end() || (it->second.kind != a && it->second.kind != b))
    return kInvalidValue;
  unmap(it->second);
  allocations.erase(it);
  return kSuccess;
}

/// Writes attribute `attr` of `p` (null for memory the fake does not know);
/// false for an attribute the fake does not support.
bool pointerAttribute(void *data, int attr, uintptr_t p,
                      const std::optional<Allocation> &a) {
  switch (attr) {
  case 1: // context
    *static_cast<FakeContext **>(data) = a ? &primary : nullptr;
    return true;
  case 2: // memory type; managed memory reads as device memory
    *static_cast<unsigned *>(data) =
        !a                                                           ? 0
        : a->kind == MemKind::Host || a->kind == MemKind::Registered ? 1
                                                                     : 2;
    return true;
  case 3: // device pointer (addresses are unified)
  case 4: // host pointer
    *static_cast<unsigned long long *>(data) = a ? p : 0;
    return true;
  case 7: // buffer id
    *static_cast<unsigned long long *>(data) = a ? a->bufferId : 0;
    return true;
  case 8: // is managed
    *static_cast<unsigned *>(data) = a && a->kind == MemKind::Managed;
    return true;
  case 9: // device ordinal
    *static_cast<int *>(data) = a ? 0 : -2;
    return true;
  case 11: // range start
    *static_cast<unsigned long long *>(data) = a ? a->base : 0;
    return true;
  case 12: // range size
    *static_cast<size_t *>(data) = a ? a->size : 0;
    return true;
  }
  return false;
}

/// Memory an async copy may reach without a staging copy on the host.
bool pinned(const void *p) {
  return find(reinterpret_cast<uintptr_t>(p)).has_value();
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

struct Config {
  unsigned delayUs = 0;
  uint64_t seed = 0;
};

const Config &config() {
  static const Config c = [] {
    Config c;
    if (const char *d = std::getenv("DDTC_FAKE_DELAY_US"))
      c.delayUs = static_cast<unsigned>(std::strtoul(d, nullptr, 10));
    const char *s = std::getenv("DDTC_FAKE_SEED");
    c.seed =
        s && *s
            ? std::strtoull(s, nullptr, 10)
            : static_cast<uint64_t>(Clock::now().time_since_epoch().count()) ^
                  (static_cast<uint64_t>(getpid()) << 32);
    return c;
  }();
  return c;
}

/// Whether the 64-bit stream memory operations are offered: not with
/// DDTC_FAKE_STREAM_MEMOPS=0, as on a driver without them, nor in the MPI
/// process of world rank DDTC_FAKE_STREAM_MEMOPS_RANK.
bool streamMemOps() {
  static const bool on = [] {
    const char *e = std::getenv("DDTC_FAKE_STREAM_MEMOPS");
    if (e && std::strcmp(e, "0") == 0)
      return false;
    const char *r = std::getenv("DDTC_FAKE_STREAM_MEMOPS_RANK");
    const char *mine = std::getenv("OMPI_COMM_WORLD_RANK");
    if (!mine)
      mine = std::getenv("PMI_RANK");
    return !(r && mine && std::strcmp(r, mine) == 0);
  }();
  return on;
}

/// A FIFO of operations that one worker thread runs in order.
class Stream {
public:
  /// Created with CU_STREAM_NON_BLOCKING: the synchronous copies, which run
  /// in the legacy stream's order, do not wait for it.
  bool nonBlocking = false;

public:
  explicit Stream(uint64_t seed) : rng_(seed), worker_([this] { work(); }) {}
  ~Stream() { shutdown(); }

  /// Queues `op`; returns its ticket, which `waitFor` takes.
  uint64_t enqueue(std::function<void()> op) {
    std::lock_guard<std::mutex> lock(m_);
    queue_.push_back(std::move(op));
    workCv_.notify_one();
    return ++submitted_;
  }
  /// The ticket of the last operation queued so far.
  uint64_t submitted() {
    std::lock_guard<std::mutex> lock(m_);
    return submitted_;
  }
  /// Blocks until the operations up to `ticket` have run.
  void waitFor(uint64_t ticket) {
    std::unique_lock<std::mutex> lock(m_);
    doneCv_.wait(lock, [&] { return done_ >= ticket; });
  }
  void drain() { waitFor(submitted()); }
  bool idle() {
    std::lock_guard<std::mutex> lock(m_);
    return done_ == submitted_;
  }
  /// Runs what is queued, then ends the worker.
  void shutdown() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stopping_ = true;
      workCv_.notify_one();
    }
    if (worker_.joinable())
      worker_.join();
  }

private:
  void work() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      workCv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      std::function<void()> op = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      // The delay stands for the GPU being busy: the host sees the work
      // finish at a time it cannot predict.
      if (unsigned d = config().delayUs)
        std::this_thread::sleep_for(std::chrono::microseconds(
            std::uniform_int_distribution<unsigned>(0, d)(rng_)));
      op();
      op = nullptr; // what it holds (an event) goes before it counts as run
      lock.lock();
      ++done_;
      doneCv_.notify_all();
    }
  }

  std::mutex m_;
  std::condition_variable workCv_, doneCv_;
  std::deque<std::function<void()>> queue_;
  uint64_t submitted_ = 0, done_ = 0;
  bool stopping_ = false;
  std::mt19937_64 rng_; // only the worker uses it
  std::thread worker_;  // last: it starts running in the constructor
};

/// An event: each record gets the next generation; a record is complete
/// once its marker has run on its stream. Queries and waits look at the
/// latest record, as the real driver's do.
struct Event {
  explicit Event(unsigned flags) : flags(flags) {}
  const unsigned flags;
  std::mutex m;
  std::condition_variable cv;
  uint64_t recorded = 0;           // the latest generation recorded
  std::set<uint64_t> pending;      // generations whose marker has not run
  Clock::time_point completedAt{}; // when the latest record completed

  bool completeLocked(uint64_t gen) const { return !pending.count(gen); }
};

/// The streams and events. Never destroyed: the workers of the streams
/// nobody destroyed (the legacy one among them) run until the process ends,
/// past the destruction of static objects.
struct Registry {
  std::mutex m;
  std::map<Stream *, std::shared_ptr<Stream>> streams;
  std::shared_ptr<Stream> legacy;
  std::map<Event *, std::shared_ptr<Event>> events;
  uint64_t created = 0;

  std::shared_ptr<Stream> makeStreamLocked() {
    // Each stream its own sequence of delays, reproducible from the seed.
    auto s = std::make_shared<Stream>(config().seed +
                                      0x9E3779B97F4A7C15ull * ++created);
    streams[s.get()] = s;
    return s;
  }
};

Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}

bool isLegacy(void *s) {
  uintptr_t v = reinterpret_cast<uintptr_t>(s);
  return v == 0 || v == 1 || v == 2;
}

/// The stream a handle names (the legacy one for null, CU_STREAM_LEGACY and
/// CU_STREAM_PER_THREAD), or null with `rc` set.
std::shared_ptr<Stream> lookupStream(void *handle, CUresult &rc) {
  if (isLegacy(handle) && !current) {
    // The legacy stream is the current context's.
    rc = kInvalidContext;
    return nullptr;
  }
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.m);
  if (isLegacy(handle)) {
    if (!r.legacy)
      r.legacy = r.makeStreamLocked();
    return r.legacy;
  }
  auto it = r.streams.find(static_cast<Stream *>(handle));
  if (it == r.streams.end() || it->second == r.legacy) {
    rc = kInvalidHandle;
    return nullptr;
  }
  return it->second;
}

std::shared_ptr<Event> lookupEvent(void *handle) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.m);
  auto it = r.events.find(static_cast<Event *>(handle));
  return it == r.events.end() ? nullptr : it->second;
}

/// Waits until every stream (or, with `legacyOrder`, every stream the
/// legacy stream synchronizes with: all but the non-blocking ones) has run
/// what was queued on it before the call; what other threads queue
/// meanwhile is not waited for.
void drainStreams(bool legacyOrder) {
  std::vector<std::pair<std::shared_ptr<Stream>, uint64_t>> tickets;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.m);
    for (auto &[raw, s] : r.streams)
      if (!legacyOrder || !s->nonBlocking)
        tickets.emplace_back(s, s->submitted());
  }
  for (auto &[s, ticket] : tickets)
    s->waitFor(ticket);
}

void drainAll() { drainStreams(false); }

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

struct FakeFunction {
  bool pack;
  int width;
  bool nest;
  /// A units kernel of short units (shape units.w<width>.chunks).
  bool chunks;
  /// A copy between two layouts (<prefix>_copy): the nest kernels' or,
  /// with `nest` false, the units kernels' between buffers of one type map.
  bool copy;
};
int moduleStorage;

/// Queues a launch of `k`. The argument values are copied now, as the real
/// driver copies them: the caller's `params` may be gone when it runs.
template <typename P, typename O, typename K>
void enqueueRun(Stream &s, void (*k)(O, K, P, const long long *), unsigned grid,
                unsigned block, void **params) {
  O o;
  K q;
  P p;
  const long long *table;
  std::memcpy(&o, params[0], sizeof o);
  std::memcpy(&q, params[1], sizeof q);
  std::memcpy(&p, params[2], sizeof p);
  std::memcpy(&table, params[3], sizeof table);
  s.enqueue([=] { ddtcEmulateLaunch(k, grid, block, o, q, p, table); });
}

} // namespace

extern "C" {

CUresult cuInit(unsigned) { return kSuccess; }
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return kSuccess;
}
CUresult cuGetErrorString(CUresult rc, const char **s) {
  switch (rc) {
  case kNotFound:
    *s = "named symbol not found (fake driver: only the generic kernels run)";
    break;
  case kNotReady:
    *s = "device not ready";
    break;
  default:
    *s = "fake driver error";
  }
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
  case kInvalidContext:
    *s = "CUDA_ERROR_INVALID_CONTEXT";
    break;
  case kInvalidHandle:
    *s = "CUDA_ERROR_INVALID_HANDLE";
    break;
  case kNotFound:
    *s = "CUDA_ERROR_NOT_FOUND";
    break;
  case kNotReady:
    *s = "CUDA_ERROR_NOT_READY";
    break;
  case kAlreadyRegistered:
    *s = "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
    break;
  case kNotRegistered:
    *s = "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED";
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
/// The fake device's PCI bus: 1, or with DDTC_FAKE_GPU_PER_RANK=1 one per
/// MPI rank (as if each rank had a GPU of its own).
int fakePciBus() {
  static const int bus = [] {
    const char *own = std::getenv("DDTC_FAKE_GPU_PER_RANK");
    if (!own || std::strcmp(own, "1") != 0)
      return 1;
    for (const char *v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
      if (const char *r = std::getenv(v))
        return 2 + std::atoi(r);
    return 2 + static_cast<int>(getpid() % 200);
  }();
  return bus;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int) {
  switch (attr) {
  case 33: // PCI bus
    *v = fakePciBus();
    return kSuccess;
  case 34: // PCI device
  case 50: // PCI domain
    *v = 0;
    return kSuccess;
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
  case 122: // 64-bit stream memory operations
    *v = streamMemOps() ? 1 : 0;
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
// The primary context lives as long as the process: nothing to release.
CUresult cuDevicePrimaryCtxRelease_v2(int d) {
  return d == 0 ? kSuccess : kInvalidValue;
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
CUresult cuCtxSynchronize() {
  if (!current)
    return kInvalidContext;
  drainAll();
  return kSuccess;
}
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
  // Filled once, so that threads looking up functions write nothing shared.
  static struct Functions {
    FakeFunction f[2][2][2][17];
    FakeFunction copy[2][17];
    Functions() {
      for (int nest = 0; nest < 2; ++nest)
        for (int chunks = 0; chunks < 2; ++chunks)
          for (int pack = 0; pack < 2; ++pack)
            for (int w = 0; w < 17; ++w)
              f[nest][chunks][pack][w] = {pack == 1, w, nest == 1, chunks == 1,
                                          false};
      for (int nest = 0; nest < 2; ++nest)
        for (int w = 0; w < 17; ++w)
          copy[nest][w] = {false, w, nest == 1, false, true};
    }
  } functions;
  int width = 0;
  char kind[8] = "", tail[24] = "";
  if (std::sscanf(name, "ddtc_%7[a-z]_w%d_%23s", kind, &width, tail) != 3 ||
      !(width == 1 || width == 2 || width == 4 || width == 8 || width == 16))
    return kNotFound;
  const bool nest = std::strcmp(kind, "nest") == 0;
  if ((nest || std::strcmp(kind, "units") == 0) &&
      std::strcmp(tail, "copy") == 0) {
    *f = &functions.copy[nest][width];
    return kSuccess;
  }
  const char *dir = tail;
  const bool chunks = !nest && std::strncmp(tail, "chunks_", 7) == 0;
  if (chunks)
    dir += 7;
  bool pack = std::strcmp(dir, "pack") == 0;
  if ((!nest && std::strcmp(kind, "units") != 0) ||
      (!pack && std::strcmp(dir, "unpack") != 0))
    return kNotFound;
  *f = &functions.f[nest][chunks][pack][width];
  return kSuccess;
}
CUresult cuLaunchKernel(FakeFunction *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  if (!current)
    return kInvalidContext;
  if (!f || !params || extra || gx == 0 || gy != 1 || gz != 1 || bx == 0 ||
      bx % 32 != 0 || bx > 1024 || by != 1 || bz != 1 || shared != 0)
    return kInvalidValue;
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = lookupStream(stream, rc);
  if (!s)
    return rc;
  using CO = const unsigned char *;
  using MO = unsigned char *;
#define DDTC_FAKE_WIDTH(W)                                                     \
  case W:                                                                      \
    if (f->copy && f->nest)                                                    \
      enqueueRun<ddtc_nest_w##W##_copy_params, CO, MO>(                        \
          *s, ddtc_nest_w##W##_copy, gx, bx, params);                          \
    else if (f->copy)                                                          \
      enqueueRun<ddtc_units_w##W##_params, CO, MO>(*s, ddtc_units_w##W##_copy, \
                                                   gx, bx, params);            \
    else if (f->nest && f->pack)                                               \
      enqueueRun<ddtc_nest_w##W##_params, CO, MO>(*s, ddtc_nest_w##W##_pack,   \
                                                  gx, bx, params);             \
    else if (f->nest)                                                          \
      enqueueRun<ddtc_nest_w##W##_params, MO, CO>(*s, ddtc_nest_w##W##_unpack, \
                                                  gx, bx, params);             \
    else if (f->chunks && f->pack)                                             \
      enqueueRun<ddtc_units_w##W##_chunks_params, CO, MO>(                     \
          *s, ddtc_units_w##W##_chunks_pack, gx, bx, params);                  \
    else if (f->chunks)                                                        \
      enqueueRun<ddtc_units_w##W##_chunks_params, MO, CO>(                     \
          *s, ddtc_units_w##W##_chunks_unpack, gx, bx, params);                \
    else if (f->pack)                                                          \
      enqueueRun<ddtc_units_w##W##_params, CO, MO>(*s, ddtc_units_w##W##_pack, \
                                                   gx, bx, params);            \
    else                                                                       \
      enqueueRun<ddtc_units_w##W##_params, MO, CO>(                            \
          *s, ddtc_units_w##W##_unpack, gx, bx, params);                       \
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

// Memory.
CUresult cuMemAlloc_v2(unsigned long long *p, size_t size) {
  void *q = allocate(size, MemKind::Device);
  if (!q)
    return kOutOfMemory;
  *p = reinterpret_cast<uintptr_t>(q);
  return kSuccess;
}
CUresult cuMemAllocManaged(unsigned long long *p, size_t size, unsigned flags) {
  if (size == 0 || (flags != kAttachGlobal && flags != kAttachHost))
    return kInvalidValue;
  void *q = allocate(size, MemKind::Managed);
  if (!q)
    return kOutOfMemory;
  *p = reinterpret_cast<uintptr_t>(q);
  return kSuccess;
}
CUresult cuMemAllocHost_v2(void **p, size_t size) {
  *p = allocate(size, MemKind::Host);
  return *p ? kSuccess : kOutOfMemory;
}
CUresult cuMemHostAlloc(void **p, size_t size, unsigned) {
  *p = allocate(size, MemKind::Host);
  return *p ? kSuccess : kOutOfMemory;
}

CUresult cuMemFree_v2(unsigned long long p) {
  return release(static_cast<uintptr_t>(p), MemKind::Device, MemKind::Managed);
}
CUresult cuMemFreeHost(void *p) {
  return release(reinterpret_cast<uintptr_t>(p), MemKind::Host, MemKind::Host);
}
CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned) {
  if (!p || size == 0)
    return kInvalidValue;
  uintptr_t base = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(memMutex);
  // No overlap with anything known: registered twice, or pinned already.
  auto it = allocations.lower_bound(base + size);
  if (it != allocations.begin() &&
      std::prev(it)->first + std::prev(it)->second.size > base)
    return kAlreadyRegistered;
  allocations[base] = {base, size, MemKind::Registered, nextBufferId++};
  return kSuccess;
}
CUresult cuMemHostUnregister(void *p) {
  drainAll();
  std::lock_guard<std::mutex> lock(memMutex);
  auto it = allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == allocations.end() || it->second.kind != MemKind::Registered)
    return kNotRegistered;
  allocations.erase(it);
  return kSuccess;
}
CUresult cuMemHostGetDevicePointer_v2(unsigned long long *d, void *h,
                                      unsigned) {
  std::optional<Allocation> a = find(reinterpret_cast<uintptr_t>(h));
  if (!a || (a->kind != MemKind::Host && a->kind != MemKind::Registered))
    return kInvalidValue;
  *d = reinterpret_cast<uintptr_t>(h);
  return kSuccess;
}

// Copies. The synchronous ones run in the legacy stream's order: they wait
// for the work queued on every stream but the non-blocking ones.
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *h, size_t n) {
  drainStreams(/*legacyOrder=*/true);
  std::memcpy(reinterpret_cast<void *>(d), h, n);
  return kSuccess;
}
CUresult cuMemcpyDtoH_v2(void *h, unsigned long long d, size_t n) {
  drainStreams(/*legacyOrder=*/true);
  std::memcpy(h, reinterpret_cast<const void *>(d), n);
  return kSuccess;
}
CUresult cuMemsetD8_v2(unsigned long long d, unsigned char v, size_t n) {
  drainStreams(/*legacyOrder=*/true);
  std::memset(reinterpret_cast<void *>(d), v, n);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(unsigned long long d, const void *h, size_t n,
                              void *stream) {
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = lookupStream(stream, rc);
  if (!s)
    return rc;
  void *dst = reinterpret_cast<void *>(d);
  if (pinned(h)) {
    s->enqueue([=] { std::memcpy(dst, h, n); });
    return kSuccess;
  }
  // From pageable memory the real driver waits for the stream, then copies
  // the source to a staging buffer before it returns.
  s->drain();
  auto staged = std::make_shared<std::vector<unsigned char>>(
      static_cast<const unsigned char *>(h),
      static_cast<const unsigned char *>(h) + n);
  s->enqueue([=] { std::memcpy(dst, staged->data(), n); });
  return kSuccess;
}
CUresult cuMemcpyDtoHAsync_v2(void *h, unsigned long long d, size_t n,
                              void *stream) {
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = lookupStream(stream, rc);
  if (!s)
    return rc;
  const void *src = reinterpret_cast<const void *>(d);
  uint64_t ticket = s->enqueue([=] { std::memcpy(h, src, n); });
  // To pageable memory the real driver returns once the copy is done.
  if (!pinned(h))
    s->waitFor(ticket);
  return kSuccess;
}
CUresult cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long src,
                              size_t n, void *stream) {
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = lookupStream(stream, rc);
  if (!s)
    return rc;
  s->enqueue([=] {
    std::memmove(reinterpret_cast<void *>(d),
                 reinterpret_cast<const void *>(src), n);
  });
  return kSuccess;
}

// CUDA_MEMCPY2D_v2, as cuda.h lays it out.
struct FakeMemcpy2D {
  size_t srcXInBytes, srcY;
  unsigned srcMemoryType;
  const void *srcHost;
  unsigned long long srcDevice;
  void *srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  unsigned dstMemoryType;
  void *dstHost;
  unsigned long long dstDevice;
  void *dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
};
// CUDA_MEMCPY3D_v2, as cuda.h lays it out.
struct FakeMemcpy3D {
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  unsigned srcMemoryType;
  const void *srcHost;
  unsigned long long srcDevice;
  void *srcArray;
  void *reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  unsigned dstMemoryType;
  void *dstHost;
  unsigned long long dstDevice;
  void *dstArray;
  void *reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
};
// Device or unified memory only (what ddtc_copy asks): the rows of each
// plane, plane after plane, in stream order.
CUresult cuMemcpy3DAsync_v2(const FakeMemcpy3D *p, void *stream) {
  if (!p || p->srcArray || p->dstArray || p->srcLOD || p->dstLOD ||
      p->srcMemoryType < 2 || p->srcMemoryType > 4 || p->srcMemoryType == 3 ||
      p->dstMemoryType < 2 || p->dstMemoryType > 4 || p->dstMemoryType == 3 ||
      p->srcPitch < p->srcXInBytes + p->WidthInBytes ||
      p->dstPitch < p->dstXInBytes + p->WidthInBytes ||
      (p->Depth > 1 && (p->srcHeight < p->srcY + p->Height ||
                        p->dstHeight < p->dstY + p->Height)))
    return kInvalidValue;
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = lookupStream(stream, rc);
  if (!s)
    return rc;
  const FakeMemcpy3D c = *p;
  s->enqueue([=] {
    for (size_t z = 0; z < c.Depth; ++z)
      for (size_t y = 0; y < c.Height; ++y) {
        const size_t from = c.srcXInBytes + (c.srcY + y) * c.srcPitch +
                            (c.srcZ + z) * c.srcHeight * c.srcPitch;
        const size_t to = c.dstXInBytes + (c.dstY + y) * c.dstPitch +
                          (c.dstZ + z) * c.dstHeight * c.dstPitch;
        std::memmove(reinterpret_cast<void *>(c.dstDevice + to),
                     reinterpret_cast<const void *>(c.srcDevice + from),
                     c.WidthInBytes);
      }
  });
  return kSuccess;
}

// One plane of the 3-D copy above.
CUresult cuMemcpy2DAsync_v2(const FakeMemcpy2D *p, void *stream) {
  if (!p)
    return kInvalidValue;
  FakeMemcpy3D c{};
  c.srcXInBytes = p->srcXInBytes;
  c.srcY = p->srcY;
  c.srcMemoryType = p->srcMemoryType;
  c.srcDevice = p->srcDevice;
  c.srcArray = p->srcArray;
  c.srcPitch = p->srcPitch;
  c.dstXInBytes = p->dstXInBytes;
  c.dstY = p->dstY;
  c.dstMemoryType = p->dstMemoryType;
  c.dstDevice = p->dstDevice;
  c.dstArray = p->dstArray;
  c.dstPitch = p->dstPitch;
  c.WidthInBytes = p->WidthInBytes;
  c.Height = p->Height;
  c.Depth = 1;
  return cuMemcpy3DAsync_v2(&c, stream);
}

// CUDA IPC: a handle names the owning process and the memfd of the
// allocation; opening it maps the same pages here.
struct FakeIpcHandle {
  uint32_t magic;
  int32_t pid;
  int32_t fd;
  uint64_t mapped;
  uint64_t size;
  uint64_t base; ///< the allocation's address in its owner
};
constexpr CUresult kAlreadyMapped = 208;
/// Open mappings: (owner pid, owner base) -> address here.
std::map<std::pair<int32_t, uint64_t>, uintptr_t> opened;
constexpr uint32_t kIpcMagic = 0x46495043; // "FIPC"
static_assert(sizeof(FakeIpcHandle) <= 64);
struct IpcMemHandle {
  char reserved[64];
};

void sleepUs(const char *variable) {
  if (const char *v = std::getenv(variable))
    if (unsigned us = static_cast<unsigned>(std::strtoul(v, nullptr, 10)))
      std::this_thread::sleep_for(std::chrono::microseconds(us));
}

CUresult cuIpcGetMemHandle(IpcMemHandle *handle, unsigned long long p) {
  std::optional<Allocation> a = find(static_cast<uintptr_t>(p));
  if (!handle || !a || a->kind != MemKind::Device || a->fd < 0)
    return kInvalidValue;
  FakeIpcHandle h{kIpcMagic, static_cast<int32_t>(getpid()),
                  a->fd,     a->mapped,
                  a->size,   a->base};
  std::memset(handle, 0, sizeof *handle);
  std::memcpy(handle, &h, sizeof h);
  return kSuccess;
}
CUresult cuIpcOpenMemHandle_v2(unsigned long long *p, IpcMemHandle handle,
                               unsigned) {
  FakeIpcHandle h;
  std::memcpy(&h, &handle, sizeof h);
  if (!p || h.magic != kIpcMagic)
    return kInvalidValue;
  if (h.pid == getpid())
    return kInvalidContext; // the real driver refuses its own handles too
  const char *on = std::getenv("DDTC_FAKE_IPC");
  if (on && !std::strcmp(on, "0"))
    return kInvalidValue;
  static std::atomic<unsigned> opens{0};
  const char *every = std::getenv("DDTC_FAKE_IPC_FAIL_EVERY");
  unsigned n =
      every ? static_cast<unsigned>(std::strtoul(every, nullptr, 10)) : 0;
  if (n && ++opens % n == 0)
    return kInvalidValue;
  if (const char *r = std::getenv("DDTC_FAKE_IPC_FAIL_RANK")) {
    const char *mine = std::getenv("OMPI_COMM_WORLD_RANK");
    if (!mine)
      mine = std::getenv("PMI_RANK");
    if (mine && !std::strcmp(mine, r))
      return kInvalidValue;
  }
  {
    std::lock_guard<std::mutex> lock(memMutex);
    if (opened.count({h.pid, h.base}))
      return kAlreadyMapped;
  }
  sleepUs("DDTC_FAKE_IPC_OPEN_US");
  std::string path =
      "/proc/" + std::to_string(h.pid) + "/fd/" + std::to_string(h.fd);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return kInvalidValue;
  void *q = mmap(nullptr, h.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (q == MAP_FAILED)
    return kOutOfMemory;
  std::lock_guard<std::mutex> lock(memMutex);
  uintptr_t base = reinterpret_cast<uintptr_t>(q);
  allocations[base] = {base,           h.size, MemKind::Imported,
                       nextBufferId++, -1,     h.mapped};
  opened[{h.pid, h.base}] = base;
  *p = base;
  return kSuccess;
}
CUresult cuIpcCloseMemHandle(unsigned long long p) {
  drainAll();
  sleepUs("DDTC_FAKE_IPC_CLOSE_US");
  std::lock_guard<std::mutex> lock(memMutex);
  auto it = allocations.find(static_cast<uintptr_t>(p));
  if (it == allocations.end() || it->second.kind != MemKind::Imported)
    return kInvalidValue;
  unmap(it->second);
  allocations.erase(it);
  for (auto o = opened.begin(); o != opened.end(); ++o)
    if (o->second == static_cast<uintptr_t>(p)) {
      opened.erase(o);
      break;
    }
  return kSuccess;
}

// Pointer attributes.
CUresult cuPointerGetAttribute(void *data, int attr, unsigned long long p) {
  std::optional<Allocation> a = find(static_cast<uintptr_t>(p));
  if (!a)
    return kInvalidValue;
  return pointerAttribute(data, attr, static_cast<uintptr_t>(p), a)
             ? kSuccess
             : kInvalidValue;
}
// Unlike the singular query, pageable memory is no error here: it gets the
// attributes of no allocation (memory type 0, no context, ordinal -2).
CUresult cuPointerGetAttributes(unsigned n, int *attrs, void **data,
                                unsigned long long p) {
  if (n && (!attrs || !data))
    return kInvalidValue;
  std::optional<Allocation> a = find(static_cast<uintptr_t>(p));
  for (unsigned i = 0; i < n; ++i)
    if (!pointerAttribute(data[i], attrs[i], static_cast<uintptr_t>(p), a))
      return kInvalidValue;
  return kSuccess;
}

// Streams.
CUresult cuStreamCreate(void **out, unsigned flags) {
  if (!current)
    return kInvalidContext;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.m);
  std::shared_ptr<Stream> s = r.makeStreamLocked();
  s->nonBlocking = (flags & 1u) != 0; // CU_STREAM_NON_BLOCKING
  *out = s.get();
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *stream) {
  if (isLegacy(stream))
    return kInvalidHandle;
  std::shared_ptr<Stream> s;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.m);
    auto it = r.streams.find(static_cast<Stream *>(stream));
    if (it == r.streams.end() || it->second == r.legacy)
      return kInvalidHandle;
    s = std::move(it->second);
    r.streams.erase(it);
  }
  s->shutdown();
  return kSuccess;
}
CUresult cuStreamSynchronize(void *stream) {
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = lookupStream(stream, rc);
  if (!s)
    return rc;
  s->drain();
  return kSuccess;
}
CUresult cuStreamQuery(void *stream) {
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = lookupStream(stream, rc);
  if (!s)
    return rc;
  return s->idle() ? kSuccess : kNotReady;
}
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned) {
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = lookupStream(stream, rc);
  if (!s)
    return rc;
  std::shared_ptr<Event> e = lookupEvent(event);
  if (!e)
    return kInvalidHandle;
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(e->m);
    gen = e->recorded;
  }
  // Waiting on an event never recorded waits for nothing. A later record
  // does not move what this wait waits for.
  if (gen == 0)
    return kSuccess;
  s->enqueue([e, gen] {
    std::unique_lock<std::mutex> lock(e->m);
    e->cv.wait(lock, [&] { return e->completeLocked(gen); });
  });
  return kSuccess;
}

} // extern "C"

namespace {
/// The stream of a 64-bit memory operation on `addr`, or null with the
/// error in `rc` (only the default flags are emulated: GEQ for a wait).
std::shared_ptr<Stream> memOpStream(void *stream, unsigned long long addr,
                                    unsigned flags, CUresult &rc) {
  std::shared_ptr<Stream> s = lookupStream(stream, rc);
  if (s && (!streamMemOps() || flags != 0 || !addr || addr % 8)) {
    rc = kInvalidValue;
    s = nullptr;
  }
  return s;
}
} // namespace

extern "C" {

// Stream memory operations. A wait polls the word (which another process
// may write through an IPC mapping); one that is never satisfied gives up
// after DDTC_FAKE_WAIT_LIMIT_S seconds (default 120) and says so, so that a
// protocol bug fails a test instead of hanging it.
CUresult cuStreamWaitValue64_v2(void *stream, unsigned long long addr,
                                unsigned long long value, unsigned flags) {
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = memOpStream(stream, addr, flags, rc);
  if (!s)
    return rc;
  s->enqueue([addr, value] {
    auto *word = reinterpret_cast<std::atomic<uint64_t> *>(addr);
    auto start = Clock::now();
    static const long limit = [] {
      const char *e = std::getenv("DDTC_FAKE_WAIT_LIMIT_S");
      return e && *e ? std::strtol(e, nullptr, 10) : 120L;
    }();
    while (static_cast<int64_t>(word->load(std::memory_order_acquire) -
                                value) < 0) {
      if (Clock::now() - start > std::chrono::seconds(limit)) {
        std::fprintf(stderr,
                     "fake CUDA driver: a stream waited %ld s for the word "
                     "at 0x%llx to reach 0x%llx; giving up\n",
                     limit, addr, value);
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  });
  return kSuccess;
}
CUresult cuStreamWriteValue64_v2(void *stream, unsigned long long addr,
                                 unsigned long long value, unsigned flags) {
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = memOpStream(stream, addr, flags, rc);
  if (!s)
    return rc;
  s->enqueue([addr, value] {
    reinterpret_cast<std::atomic<uint64_t> *>(addr)->store(
        value, std::memory_order_release);
  });
  return kSuccess;
}

// Events.
CUresult cuEventCreate(void **out, unsigned flags) {
  if (!current)
    return kInvalidContext;
  auto e = std::make_shared<Event>(flags);
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.m);
  r.events[e.get()] = e;
  *out = e.get();
  return kSuccess;
}
// A pending record still completes; its marker holds the event.
CUresult cuEventDestroy_v2(void *event) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.m);
  return r.events.erase(static_cast<Event *>(event)) ? kSuccess
                                                     : kInvalidHandle;
}
CUresult cuEventRecord(void *event, void *stream) {
  std::shared_ptr<Event> e = lookupEvent(event);
  if (!e)
    return kInvalidHandle;
  CUresult rc = kSuccess;
  std::shared_ptr<Stream> s = lookupStream(stream, rc);
  if (!s)
    return rc;
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(e->m);
    gen = ++e->recorded;
    e->pending.insert(gen);
  }
  s->enqueue([e, gen] {
    std::lock_guard<std::mutex> lock(e->m);
    e->pending.erase(gen);
    if (gen == e->recorded)
      e->completedAt = Clock::now();
    e->cv.notify_all();
  });
  return kSuccess;
}
CUresult cuEventQuery(void *event) {
  std::shared_ptr<Event> e = lookupEvent(event);
  if (!e)
    return kInvalidHandle;
  std::lock_guard<std::mutex> lock(e->m);
  return e->completeLocked(e->recorded) ? kSuccess : kNotReady;
}
CUresult cuEventSynchronize(void *event) {
  std::shared_ptr<Event> e = lookupEvent(event);
  if (!e)
    return kInvalidHandle;
  std::unique_lock<std::mutex> lock(e->m);
  uint64_t gen = e->recorded;
  e->cv.wait(lock, [&] { return e->completeLocked(gen); });
  return kSuccess;
}
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  std::shared_ptr<Event> a = lookupEvent(start), b = lookupEvent(end);
  if (!a || !b || !ms)
    return kInvalidHandle;
  if ((a->flags | b->flags) & kEventDisableTiming)
    return kInvalidHandle;
  Clock::time_point ta, tb;
  // One event at a time: both may be the same.
  for (auto [e, t] : {std::pair{a.get(), &ta}, std::pair{b.get(), &tb}}) {
    std::lock_guard<std::mutex> lock(e->m);
    if (e->recorded == 0)
      return kInvalidHandle;
    if (!e->completeLocked(e->recorded))
      return kNotReady;
    *t = e->completedAt;
  }
  *ms = std::chrono::duration<float, std::milli>(tb - ta).count();
  return kSuccess;
}

} // extern "C"
