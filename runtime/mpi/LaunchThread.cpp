//===- LaunchThread.cpp - Packs launched off the application's thread -----===//
//
// A pack launch costs the thread that makes it 3-4 us when the thread does
// nothing else, and 5-13 us inside the layer, where the thread comes to each
// launch from MPI calls and progress polls that leave the driver's code and
// data out of its caches. A pipelined send launches its first packs inside
// MPI_Isend, so an application posting several sends (a halo exchange: six)
// waits for every launch before it posts its receives. Two threads of one
// process launch at nearly the rate of one each
// (bench/results/2026-11-29-NVIDIA-H200-x2-launch-thread), so the layer
// hands a send's pack launches to a thread of its own, which stays on the
// CPU while launches come (its caches stay warm) and sleeps after a quiet
// while. A sleeping thread takes tens of microseconds to wake, so a launch
// that finds it asleep is made by the caller, which wakes it for the next.
//
// The launches of one operation run in the order they were handed over; the
// operation's other work on its stream is queued only once they have been
// made (launchesSettled), so that the stream's order is the one the
// pipeline wrote.
//===----------------------------------------------------------------------===//

#include "Layer.h"
#include "Operation.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace ddtc::mpi {
namespace {

using Clock = std::chrono::steady_clock;

/// How long the thread stays on the CPU after its last launch: longer than
/// the gaps between the sends of an application's step, short enough not
/// to hold a core through its computation.
constexpr std::chrono::microseconds kLinger{2000};

struct Job {
  Operation *op;
  Slot *slot;
  LaunchFn fn;
  void *context;
};

std::mutex queueMutex; // guards queue, awake
std::condition_variable wake;
std::deque<Job> queue;
bool awake = false;
std::atomic<bool> stopping{false};
std::atomic<size_t> queued{0}; // queue.size(), read without the lock
std::thread *launcher = nullptr;
std::atomic<bool> running{false};
std::atomic<long long> made{0};

/// A short wait that keeps the thread on its CPU (no system call).
inline void spinPause() {
  for (int i = 0; i < 32; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
}

void run(const Job &j, void *&current) {
  if (j.context != current) {
    makeContextCurrentHandle(j.context);
    current = j.context;
  }
  if (!j.fn(*j.op, *j.slot)) {
    std::string error = ddtc_last_error();
    std::lock_guard<std::mutex> lock(j.op->launchMutex);
    if (j.op->launchError.empty())
      j.op->launchError = error.empty() ? "a pack launch failed" : error;
  }
  made.fetch_add(1, std::memory_order_relaxed);
  j.op->launchesDone.fetch_add(1, std::memory_order_release);
}

void launchLoop() {
  void *current = nullptr;
  Clock::time_point last = Clock::now();
  for (;;) {
    if (queued.load(std::memory_order_acquire) > 0) {
      Job j;
      {
        std::lock_guard<std::mutex> lock(queueMutex);
        j = queue.front();
        queue.pop_front();
        queued.store(queue.size(), std::memory_order_release);
      }
      run(j, current);
      last = Clock::now();
      continue;
    }
    // Nothing is queued once stopping is set: what was queued before is
    // visible now, so the check above sees it on the next turn.
    if (stopping.load(std::memory_order_acquire)) {
      if (queued.load(std::memory_order_acquire) > 0)
        continue;
      return;
    }
    if (Clock::now() - last < kLinger) {
      spinPause();
      continue;
    }
    std::unique_lock<std::mutex> lock(queueMutex);
    if (!queue.empty())
      continue;
    awake = false;
    wake.wait(lock, [] { return stopping.load() || awake; });
    last = Clock::now();
  }
}

} // namespace

bool launchElsewhere(Operation &op, Slot &slot, LaunchFn fn) {
  if (!running.load(std::memory_order_acquire))
    return false;
  {
    std::lock_guard<std::mutex> lock(queueMutex);
    if (stopping.load(std::memory_order_relaxed))
      return false;
    if (awake) {
      ++op.launchesQueued;
      queue.push_back(Job{&op, &slot, fn, currentContextHandle()});
      queued.store(queue.size(), std::memory_order_release);
      return true;
    }
    awake = true; // for the launches after this one
  }
  wake.notify_one();
  return false;
}

long long threadLaunches() { return made.load(std::memory_order_relaxed); }

bool launchesSettled(const Operation &op) {
  return op.launchesDone.load(std::memory_order_acquire) == op.launchesQueued;
}

void settleLaunches(Operation &op) {
  while (!launchesSettled(op))
    spinPause();
}

std::string takeLaunchError(Operation &op) {
  std::lock_guard<std::mutex> lock(op.launchMutex);
  std::string error;
  error.swap(op.launchError);
  return error;
}

void startLaunchThread() {
  if (running.load())
    return;
  {
    std::lock_guard<std::mutex> lock(queueMutex);
    stopping.store(false);
    awake = false;
  }
  launcher = new std::thread(launchLoop);
  running.store(true, std::memory_order_release);
  note(2, "launch thread started");
}

void stopLaunchThread() {
  if (!running.load())
    return;
  running.store(false, std::memory_order_release);
  {
    // Under the lock: no launch is handed over after this, and the ones
    // handed over before are run before the thread ends.
    std::lock_guard<std::mutex> lock(queueMutex);
    stopping.store(true, std::memory_order_release);
    awake = true;
  }
  wake.notify_one();
  launcher->join();
  delete launcher;
  launcher = nullptr;
}

} // namespace ddtc::mpi
