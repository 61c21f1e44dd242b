//===- KernelCache.cpp - Compiled kernels, in memory and on disk ----------===//
//
// The cache object lives as long as the process (it is never destroyed).
// Its background threads must be stopped before NVRTC tears down its own
// state at exit, or a compile in flight crashes: NVRTC registers that
// teardown when it is loaded and during its first compile, so an exit
// handler registered earlier runs too late. Three guards run early enough:
// a thread-local object of the main thread (glibc runs the exiting thread's
// thread-local destructors before any exit handler), and an exit handler
// registered again once NVRTC is loaded and once its first compile is done.
// They wait for the compile in flight and drop the queued ones. A thread
// that is loading NVRTC when the process exits may hang the exit, so
// background threads never load it: the thread that queues a compile does.
//===----------------------------------------------------------------------===//

#include "KernelCache.h"

#include "BuiltinKernels.h"
#include "Config.h"
#include "GenericPlan.h"

#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/NVRTCCompiler.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#ifndef DDTC_VERSION
#error "DDTC_VERSION must be defined by the build"
#endif

namespace ddtc::rt {

namespace {

std::atomic<uint64_t> nextEntryId{uint64_t(1) << 32};

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

/// A disk entry's payload: kImagesMagic, then the pack's and the unpack's
/// cubin, each after its size in 8 bytes (little-endian).
constexpr char kImagesMagic[8] = {'d', 'd', 't', 'c', 'k', 'e', 'r', '2'};

void appendSize(std::string &out, uint64_t n) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>(n >> (8 * i)));
}

/// The size at `at` (which must leave 8 bytes), moving `at` past it.
uint64_t readSize(const std::string &in, size_t &at) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= uint64_t(static_cast<unsigned char>(in[at + i])) << (8 * i);
  at += 8;
  return n;
}

/// What the calling thread has used so far: a compile whose wall time far
/// exceeds its CPU time waited (for memory, a lock, the scheduler), which
/// the verbose log then shows.
struct ThreadUsage {
  double cpuMs = 0;
  long minorFaults = 0, majorFaults = 0, involuntarySwitches = 0;

  static ThreadUsage now() {
    ThreadUsage u;
    struct rusage r;
    if (getrusage(RUSAGE_THREAD, &r) != 0)
      return u;
    u.cpuMs = (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
              (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
    u.minorFaults = r.ru_minflt;
    u.majorFaults = r.ru_majflt;
    u.involuntarySwitches = r.ru_nivcsw;
    return u;
  }
};

std::string usageSince(const ThreadUsage &u0) {
  ThreadUsage u = ThreadUsage::now();
  char text[160];
  std::snprintf(text, sizeof text,
                "%.1f ms of CPU, %ld page faults (%ld from disk), %ld "
                "preemptions",
                u.cpuMs - u0.cpuMs, u.minorFaults - u0.minorFaults,
                u.majorFaults - u0.majorFaults,
                u.involuntarySwitches - u0.involuntarySwitches);
  return text;
}

/// The options NVRTC is called with for sm_`arch`: those NVRTCCompiler
/// always passes, then the user's (DDTC_NVRTC_OPTIONS).
std::vector<std::string> compileOptions(int arch) {
  std::vector<std::string> o = {"--gpu-architecture=sm_" + std::to_string(arch),
                                "--std=c++17"};
  for (const std::string &u : config().nvrtcOptions)
    o.push_back(u);
  return o;
}

Hash128 cacheKey(const KernelEntry &e, const std::string &nvrtcVersion) {
  Hasher h;
  h.add("ddtc kernel cache key");
  h.add(static_cast<int64_t>(kCacheFormatVersion));
  h.add(DDTC_VERSION);
  h.add(e.source);
  for (const std::string &o : compileOptions(e.arch))
    h.add(o);
  h.add(static_cast<int64_t>(e.arch));
  h.add(nvrtcVersion);
  return h.finish();
}

std::string describeEntry(const KernelEntry &e) {
  return "kernels of shape " + e.shape + " for sm_" + std::to_string(e.arch);
}

/// "13.0" from the note's first line, or empty.
std::string parseCompilerNote(const std::string &text) {
  std::string v = text.substr(0, text.find('\n'));
  if (v.empty() || v.size() > 16)
    return "";
  for (char c : v)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.'))
      return "";
  return v;
}

// Constant-initialized, never destroyed before a worker finishes.
Stats gStats;

/// An entry owned by the thread that creates it until it is prepared: a
/// waiter that finds it in the map must not compile it before its source is
/// written.
std::shared_ptr<KernelEntry> newEntry() {
  auto e = std::make_shared<KernelEntry>();
  e->claimed = true;
  return e;
}

bool onMainThread() { return syscall(SYS_gettid) == getpid(); }

void stopAtExit() { KernelCache::get().stopWorkers(/*dropQueued=*/true); }

/// NVRTCCompiler::get, and an exit handler registered once NVRTC is
/// loaded, so that it runs before the teardown NVRTC registered on loading.
const NVRTCCompiler *loadNVRTC(std::string &error) {
  const NVRTCCompiler *nvrtc = NVRTCCompiler::get(error);
  static std::once_flag loaded;
  if (nvrtc)
    std::call_once(loaded, [] { std::atexit(stopAtExit); });
  return nvrtc;
}

/// Lives in the main thread's thread-local storage: destroyed first when
/// the process exits.
struct MainThreadExitGuard {
  bool armed = false;
  ~MainThreadExitGuard() {
    if (armed && onMainThread())
      stopAtExit();
  }
};

} // namespace

std::string joinImages(const std::string &pack, const std::string &unpack) {
  std::string out(kImagesMagic, sizeof kImagesMagic);
  out.reserve(out.size() + 16 + pack.size() + unpack.size());
  appendSize(out, pack.size());
  out += pack;
  appendSize(out, unpack.size());
  out += unpack;
  return out;
}

bool splitImages(const std::string &payload, std::string &pack,
                 std::string &unpack) {
  size_t at = sizeof kImagesMagic;
  if (payload.size() < at + 8 ||
      std::memcmp(payload.data(), kImagesMagic, at) != 0)
    return false;
  const uint64_t packSize = readSize(payload, at);
  if (packSize == 0 || packSize > payload.size() - at ||
      payload.size() - at - packSize < 8)
    return false;
  const size_t packAt = at;
  at += packSize;
  const uint64_t unpackSize = readSize(payload, at);
  if (unpackSize == 0 || unpackSize != payload.size() - at)
    return false;
  pack.assign(payload, packAt, packSize);
  unpack.assign(payload, at, unpackSize);
  return true;
}

Stats &stats() { return gStats; }

void publish(KernelEntry &e, EntryState state) {
  {
    std::lock_guard<std::mutex> lock(e.m);
    e.state.store(state, std::memory_order_release);
  }
  e.cv.notify_all();
}

KernelCache &KernelCache::get() {
  // Read before the cache exists, so the settings outlive its threads.
  config();
  static KernelCache *cache = new KernelCache();
  return *cache;
}

const DiskCache &KernelCache::disk() {
  std::lock_guard<std::mutex> lock(diskMutex_);
  if (!disk_) {
    disk_ = std::make_unique<DiskCache>(config().cacheDir);
    if (disk_->usable())
      logVerbose("disk cache in " + disk_->dir());
    else
      logVerbose("disk cache off: " + disk_->reason());
  }
  return *disk_;
}

const DiskCache &KernelCache::planDisk() {
  std::lock_guard<std::mutex> lock(diskMutex_);
  if (!planDisk_) {
    const std::string &dir = config().cacheDir;
    planDisk_ = std::make_unique<DiskCache>(dir.empty() ? "" : dir + "/plans");
    if (!planDisk_->usable())
      logVerbose("plans are not kept on disk: " + planDisk_->reason());
  }
  return *planDisk_;
}

std::string KernelCache::keyCompilerVersion(const DiskCache &d) {
  std::lock_guard<std::mutex> lock(versionMutex_);
  if (!keyCompiler_.empty())
    return keyCompiler_;
  std::string note;
  if (d.readNote(kCompilerNote, note))
    keyCompiler_ = parseCompilerNote(note);
  if (!keyCompiler_.empty())
    return keyCompiler_;
  std::string error;
  const NVRTCCompiler *nvrtc = loadNVRTC(error);
  keyCompiler_ = nvrtc ? nvrtc->versionString() : "none";
  if (nvrtc)
    d.writeNote(kCompilerNote,
                keyCompiler_ + "\n" + nvrtc->libraryPath() + "\n");
  return keyCompiler_;
}

bool KernelCache::lookUp(KernelEntry &e, const DiskCache &d) {
  auto t0 = std::chrono::steady_clock::now();
  e.key = cacheKey(e, e.keyCompiler);
  std::string payload, why;
  switch (d.load(e.key, payload, why)) {
  case DiskCache::Lookup::Hit:
    if (!splitImages(payload, e.binary, e.unpackBinary)) {
      ++stats().diskRejected;
      logVerbose("disk cache entry ignored, compiling again: " +
                 d.entryPath(e.key) + " does not hold two kernel images");
      return false;
    }
    e.diskLoadMs = msSince(t0);
    e.origin = DDTC_KERNEL_DISK;
    ++stats().diskHits;
    logVerbose(describeEntry(e) + " read from " + d.entryPath(e.key));
    publish(e, EntryState::Ready);
    return true;
  case DiskCache::Lookup::Rejected:
    ++stats().diskRejected;
    logVerbose("disk cache entry ignored, compiling again: " + why);
    return false;
  case DiskCache::Lookup::Missing:
    return false;
  }
  return false;
}

void KernelCache::noteCompiler(const NVRTCCompiler &nvrtc) {
  if (noted_.exchange(true))
    return;
  const DiskCache &d = disk();
  std::string note;
  if (!d.usable() || (d.readNote(kCompilerNote, note) &&
                      parseCompilerNote(note) == nvrtc.versionString()))
    return;
  logVerbose("NVRTC " + nvrtc.versionString() +
             " noted in the cache folder; "
             "later processes compile the kernels of other versions again");
  d.writeNote(kCompilerNote,
              nvrtc.versionString() + "\n" + nvrtc.libraryPath() + "\n");
}

std::shared_ptr<KernelEntry> KernelCache::acquire(const KernelPlan &plan,
                                                  int arch, bool wait,
                                                  bool *memoryHit) {
  const bool useCaches = !config().cacheDisabled;
  std::string shape = kernelShapeKey(plan);
  std::shared_ptr<KernelEntry> entry;
  bool fresh = true;
  if (useCaches) {
    std::lock_guard<std::mutex> lock(mapMutex_);
    std::shared_ptr<KernelEntry> &slot = entries_[{shape, arch}];
    if (slot) {
      entry = slot;
      fresh = false;
    } else {
      slot = entry = newEntry();
      entry->generation = generation_.load(std::memory_order_relaxed);
    }
  } else {
    entry = newEntry();
  }
  if (memoryHit)
    *memoryHit = !fresh;
  if (!fresh) {
    ++stats().memoryHits;
    if (wait)
      this->wait(entry);
    return entry;
  }
  entry->id = nextEntryId++;
  entry->shape = shape;
  entry->arch = arch;
  entry->prefix = kernelSymbolPrefix(shape);
  entry->packName = entry->prefix + "_pack";
  entry->unpackName = entry->prefix + "_unpack";
  if (prepare(entry, plan, useCaches)) {
    // NVRTC is loaded here, never by a background thread (see the top of
    // the file); when the cache folder's note names another version, the
    // note is corrected for the processes after this one.
    std::string error;
    if (const NVRTCCompiler *nvrtc = loadNVRTC(error); nvrtc && useCaches)
      noteCompiler(*nvrtc);
    if (wait) {
      compile(*entry, useCaches);
    } else {
      // From here a worker or a waiting caller takes it, whichever is first.
      entry->claimed = false;
      push({entry, useCaches});
    }
  }
  return entry;
}

std::shared_ptr<KernelEntry>
KernelCache::reacquire(const std::shared_ptr<KernelEntry> &entry, bool wait) {
  if (!entry ||
      entry->generation != generation_.load(std::memory_order_acquire))
    return nullptr;
  ++stats().memoryHits;
  if (wait)
    this->wait(entry);
  return entry;
}

bool KernelCache::prepare(const std::shared_ptr<KernelEntry> &e,
                          const KernelPlan &plan, bool useCaches) {
  // The strided shapes built in were compiled without the user's options:
  // with options, or with DDTC_BUILTIN_STRIDED=0, they are compiled.
  const bool strided =
      e->shape.rfind("strided.", 0) == 0 || e->shape.rfind("tile.", 0) == 0;
  const BuiltinKernel *k =
      strided && (!config().builtinStrided || !config().nvrtcOptions.empty())
          ? nullptr
          : findBuiltinCubin(e->shape, e->arch);
  if (k) {
    e->binary.assign(reinterpret_cast<const char *>(k->data), k->size);
    e->origin = DDTC_KERNEL_BUILTIN;
    ++stats().builtinHits;
    publish(*e, EntryState::Ready);
    return false;
  }
  e->source = emitCUDA(plan, e->prefix).source;
  if (!useCaches)
    return true;
  const DiskCache &d = disk();
  if (!d.usable())
    return true;
  // The key needs NVRTC's version: the note's, else NVRTC is loaded here
  // (in the committing thread, not a background one: see the top of the
  // file).
  e->keyCompiler = keyCompilerVersion(d);
  return !lookUp(*e, d);
}

void KernelCache::compile(KernelEntry &e, bool useDisk) {
  std::string error;
  const NVRTCCompiler *nvrtc = loadNVRTC(error);
  if (!nvrtc) {
    e.origin = DDTC_KERNEL_FAILED;
    e.failure =
        Status::error(DDTC_ERROR_NO_COMPILER,
                      "cannot compile the " + describeEntry(e) + ": " + error);
    logVerbose(e.failure.message);
    publish(e, EntryState::Failed);
    return;
  }
  const ThreadUsage u0 = ThreadUsage::now();
  auto t0 = std::chrono::steady_clock::now();
  // The two kernels compile as two programs at once, each with the other
  // left out: the same machine code as one program of both, in the time
  // of the slower kernel instead of the sum (compiles are CPU bound).
  const auto compileOne = [&](bool pack) {
    std::vector<std::string> extra = config().nvrtcOptions;
    extra.push_back(std::string("-D") +
                    (pack ? kSkipUnpackMacro : kSkipPackMacro));
    return nvrtc->compile(e.source, e.prefix + ".cu", NVRTCOutput::Cubin,
                          std::to_string(e.arch), extra);
  };
  NVRTCResult unpack;
  std::thread unpackThread;
  try {
    unpackThread = std::thread([&] { unpack = compileOne(false); });
  } catch (const std::system_error &) {
    // No thread to spare: one after the other.
  }
  NVRTCResult r = compileOne(true);
  if (unpackThread.joinable())
    unpackThread.join();
  else
    unpack = compileOne(false);
  if (r.ok && !unpack.ok)
    r = std::move(unpack);
  double ms = msSince(t0);
  const std::string usage = usageSince(u0);
  // Now NVRTC has registered its teardown: a handler registered after it
  // runs before it.
  static std::once_flag afterFirstCompile;
  std::call_once(afterFirstCompile, [] { std::atexit(stopAtExit); });
  if (!r.ok) {
    ++stats().compileFailures;
    e.origin = DDTC_KERNEL_FAILED;
    e.failure = Status::error(DDTC_ERROR_COMPILE, "cannot compile the " +
                                                      describeEntry(e) + ": " +
                                                      r.error);
    logVerbose(e.failure.message);
    publish(e, EntryState::Failed);
    return;
  }
  ++stats().nvrtcCompiles;
  stats().compileMicros += static_cast<int64_t>(ms * 1000);
  e.binary = std::move(r.binary);
  e.unpackBinary = std::move(unpack.binary);
  e.compileMs = ms;
  e.origin = DDTC_KERNEL_COMPILED;
  logVerbose("compiled the " + describeEntry(e) + " in " + std::to_string(ms) +
             " ms (pack and unpack at once; the pack's thread: " + usage + ")");
  if (useDisk) {
    const DiskCache &d = disk();
    if (d.usable()) {
      // Filed under the NVRTC that compiled it, even when this process's
      // keys still use the note's older version.
      Hash128 key = cacheKey(e, nvrtc->versionString());
      std::string meta = "ddtc " DDTC_VERSION "\nshape " + e.shape +
                         "\narch sm_" + std::to_string(e.arch) + "\nnvrtc " +
                         nvrtc->versionString() + "\noptions";
      for (const std::string &o : r.options)
        meta += " " + o;
      meta += "\n";
      std::string why;
      if (d.store(key, meta, joinImages(e.binary, e.unpackBinary), why))
        ++stats().diskWrites;
      else
        logVerbose("cannot write the disk cache: " + why);
    }
  }
  publish(e, EntryState::Ready);
}

void KernelCache::push(Job job) {
  std::lock_guard<std::mutex> lock(queueMutex_);
  queue_.push_back(std::move(job));
  // One more thread while the work outgrows the threads, up to the limit.
  const int threads = static_cast<int>(workers_.size());
  if (threads < config().jitThreads &&
      threads < busy_ + static_cast<int>(queue_.size())) {
    if (!exitHandlerRegistered_) {
      exitHandlerRegistered_ = true;
      std::atexit(stopAtExit);
    }
    if (onMainThread()) {
      thread_local MainThreadExitGuard guard;
      guard.armed = true;
    }
    stopping_ = false;
    workers_.emplace_back([this] { workerLoop(); });
  }
  queueCv_.notify_one();
}

void KernelCache::workerLoop() {
  std::unique_lock<std::mutex> lock(queueMutex_);
  for (;;) {
    queueCv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) // stopping
      return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    if (!job.entry->claimed.exchange(true))
      compile(*job.entry, job.useDisk);
    job.entry.reset();
    lock.lock();
    --busy_;
    if (queue_.empty() && busy_ == 0)
      idleCv_.notify_all();
  }
}

void KernelCache::wait(const std::shared_ptr<KernelEntry> &e) {
  if (e->state.load(std::memory_order_acquire) != EntryState::Pending)
    return;
  // Not started yet: compile it here rather than wait for its turn.
  if (!e->claimed.exchange(true)) {
    compile(*e, !config().cacheDisabled);
    return;
  }
  std::unique_lock<std::mutex> lock(e->m);
  e->cv.wait(lock, [&] {
    return e->state.load(std::memory_order_acquire) != EntryState::Pending;
  });
}

void KernelCache::stopWorkers(bool dropQueued) {
  std::vector<std::thread> threads;
  std::deque<Job> dropped;
  {
    std::unique_lock<std::mutex> lock(queueMutex_);
    if (dropQueued)
      dropped.swap(queue_);
    else
      idleCv_.wait(lock, [&] { return queue_.empty() && busy_ == 0; });
    stopping_ = true;
    threads.swap(workers_);
  }
  queueCv_.notify_all();
  for (std::thread &t : threads)
    t.join();
  for (Job &j : dropped) {
    if (j.entry->claimed.exchange(true))
      continue;
    j.entry->origin = DDTC_KERNEL_FAILED;
    j.entry->failure = Status::error(
        DDTC_ERROR_INTERNAL, "the compile was dropped: the process is exiting");
    publish(*j.entry, EntryState::Failed);
  }
}

void KernelCache::drain() { stopWorkers(/*dropQueued=*/false); }

bool KernelCache::loadCompiler() {
  std::string error;
  return loadNVRTC(error) != nullptr;
}

void KernelCache::resetForTesting() {
  drain();
  reloadConfig();
  {
    std::lock_guard<std::mutex> lock(mapMutex_);
    entries_.clear();
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  {
    std::lock_guard<std::mutex> lock(versionMutex_);
    keyCompiler_.clear();
  }
  noted_ = false;
  std::lock_guard<std::mutex> lock(diskMutex_);
  disk_.reset();
  planDisk_.reset();
}

Status KernelCache::compileForTesting(const std::string &source,
                                      const std::string &prefix, int arch,
                                      std::string *pack, std::string *unpack) {
  KernelEntry e;
  e.shape = "test";
  e.arch = arch;
  e.prefix = prefix;
  e.source = source;
  get().compile(e, /*useDisk=*/false);
  if (pack)
    *pack = e.binary;
  if (unpack)
    *unpack = e.unpackBinary;
  return e.ready() ? Status::success() : e.failure;
}

} // namespace ddtc::rt
