//===- KernelCache.h - Compiled kernels, in memory and on disk --*- C++ -*-===//
//
// One entry per (kernel shape, GPU architecture): kernels emitted for plans
// of one shape are the same source, so every type of that shape shares the
// entry. A new entry is served, in order, by the kernels built into the
// library, the disk cache, or NVRTC; a compile runs in the thread that needs
// the kernel or in a background thread, and happens once however many
// threads ask for the entry at the same time.
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_KERNELCACHE_H
#define DDTC_RUNTIME_KERNELCACHE_H

#include "DiskCache.h"
#include "ddtc/Core/Hash.h"
#include "Status.h"

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Target/CUDA/NVRTCCompiler.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ddtc::rt {

enum class EntryState : int { Pending, Ready, Failed };

/// The compiled kernels of one shape for one architecture.
struct KernelEntry {
  /// Unique in the process: names the entry's module in each CUDA context.
  uint64_t id = 0;
  /// The cache generation whose map holds the entry; 0 when no map does
  /// (the caches disabled).
  uint64_t generation = 0;
  std::string shape; ///< kernelShapeKey
  int arch = 0;      ///< sm_XX
  std::string prefix, packName, unpackName;
  /// The emitted source and the hash of everything the cubin depends on
  /// (empty and zero for built-in kernels).
  std::string source;
  Hash128 key;
  /// The NVRTC version `key` was computed with.
  std::string keyCompiler;

  std::atomic<EntryState> state{EntryState::Pending};
  /// Held by the thread that created the entry until it is queued; then
  /// set by whoever takes the compile (a worker or a waiting caller).
  std::atomic<bool> claimed{false};
  /// Written before state leaves Pending, read only after: the image of
  /// both kernels (built-in kernels), or of the pack kernel when
  /// unpackBinary holds the unpack kernel's (compiled kernels, compiled
  /// apart).
  std::string binary;
  std::string unpackBinary;
  ddtc_kernel_origin origin = DDTC_KERNEL_NONE;
  Status failure;
  double compileMs = 0, diskLoadMs = 0;

  std::mutex m;
  std::condition_variable cv;

  bool ready() const {
    return state.load(std::memory_order_acquire) == EntryState::Ready;
  }
  bool failed() const {
    return state.load(std::memory_order_acquire) == EntryState::Failed;
  }
};

/// The counters behind ddtc_get_stats.
struct Stats {
  std::atomic<int64_t> nvrtcCompiles{0}, compileFailures{0}, memoryHits{0},
      diskHits{0}, diskWrites{0}, diskRejected{0}, builtinHits{0},
      genericLaunches{0}, specializedLaunches{0}, moduleLoads{0},
      tableUploads{0}, copyEngineCopies{0};
  std::atomic<int64_t> compileMicros{0};
  /// Plans read from and written to the disk cache (not in ddtc_stats).
  std::atomic<int64_t> planDiskHits{0}, planDiskWrites{0};
};
Stats &stats();

class KernelCache {
public:
  static KernelCache &get();

  /// The entry of `plan`'s shape for sm_`arch`. When the entry is new, it is
  /// looked up among the built-in kernels and in the disk cache here; if it
  /// must be compiled, that happens here when `wait` is set (or the caller
  /// waits for the thread compiling it), else in a background thread.
  /// `memoryHit` tells whether the entry existed already.
  std::shared_ptr<KernelEntry> acquire(const KernelPlan &plan, int arch,
                                       bool wait, bool *memoryHit = nullptr);

  /// `entry`, which acquire returned for a plan and architecture, as
  /// acquire would return it again for them (a memory hit), without
  /// building the shape key or looking it up; null when the cache no longer
  /// holds it (reset since, or never held: the caches disabled).
  std::shared_ptr<KernelEntry>
  reacquire(const std::shared_ptr<KernelEntry> &entry, bool wait);

  /// Waits until the entry is ready or failed; compiles it in this thread if
  /// no thread has started it yet.
  void wait(const std::shared_ptr<KernelEntry> &entry);

  /// Waits for every queued compile and stops the background threads (a
  /// later acquire starts them again).
  void drain();

  /// Loads NVRTC now (ddtc_init); returns whether it loaded.
  bool loadCompiler();

  /// The disk cache of the current settings (created on first use).
  const DiskCache &disk();
  /// Its folder of plans ("plans" in the cache folder; PlanCache.h), kept
  /// apart so that kernels and plans are counted and cleared apart.
  const DiskCache &planDisk();

  /// Forgets every entry and the disk cache object and reads the settings
  /// again. Only for tests, with no compile in flight.
  void resetForTesting();

  /// Compiles `source` (kernel names `prefix`_pack/_unpack) for sm_`arch`
  /// as an entry would be, its two images in `pack` and `unpack` when
  /// given; for tests.
  static Status compileForTesting(const std::string &source,
                                  const std::string &prefix, int arch,
                                  std::string *pack = nullptr,
                                  std::string *unpack = nullptr);

  /// The name of the note in the cache folder that records the version of
  /// the NVRTC last loaded by a process using it.
  static constexpr const char *kCompilerNote = "nvrtc-version";

private:
  KernelCache() = default;
  /// The NVRTC version disk keys are computed with in this process: the one
  /// the cache folder's note records, so that finding a kernel on disk needs
  /// no NVRTC; without a note, that of NVRTC, loaded for it.
  std::string keyCompilerVersion(const DiskCache &d);
  /// Looks `e` up on disk (its keyCompiler set); publishes it on a hit.
  bool lookUp(KernelEntry &e, const DiskCache &d);
  /// Writes the version of the loaded NVRTC in the cache folder's note
  /// when the note names another (once per process).
  void noteCompiler(const NVRTCCompiler &nvrtc);
  std::atomic<bool> noted_{false};
  /// Serves a new entry from the built-in kernels or the disk cache, or
  /// emits its source; returns whether it must be compiled.
  bool prepare(const std::shared_ptr<KernelEntry> &e, const KernelPlan &plan,
               bool useCaches);
  /// Compiles a claimed entry, stores it on disk, publishes it.
  void compile(KernelEntry &e, bool useDisk);
  void workerLoop();

public:
  /// Stops the background threads after the compile in flight; with
  /// `dropQueued` the queued compiles fail instead of running.
  void stopWorkers(bool dropQueued);

private:
  std::mutex mapMutex_;
  /// Counts resets: entries of an earlier generation are not the cache's.
  std::atomic<uint64_t> generation_{1};
  std::map<std::pair<std::string, int>, std::shared_ptr<KernelEntry>> entries_;
  std::unique_ptr<DiskCache> disk_, planDisk_;
  std::mutex diskMutex_;

  struct Job {
    std::shared_ptr<KernelEntry> entry;
    bool useDisk;
  };
  void push(Job job);
  std::mutex versionMutex_;
  std::string keyCompiler_;

  std::mutex queueMutex_;
  std::condition_variable queueCv_, idleCv_;
  std::deque<Job> queue_;
  std::vector<std::thread> workers_;
  int busy_ = 0;
  bool stopping_ = false;
  bool exitHandlerRegistered_ = false;
};

/// The disk payload of a compiled entry: its two cubins in one string.
std::string joinImages(const std::string &pack, const std::string &unpack);
/// The two cubins of a payload joinImages made; false (and nothing set)
/// when `payload` is not one.
bool splitImages(const std::string &payload, std::string &pack,
                 std::string &unpack);

/// Sets the entry's outcome and wakes its waiters.
void publish(KernelEntry &e, EntryState state);

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_KERNELCACHE_H
