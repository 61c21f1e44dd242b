//===- ProgressThread.cpp - Transfers move while the rank is elsewhere ----===//
//
// A pipelined transfer needs its rank at every step: to answer the note, to
// launch the next pack, to post the next fragment. A rank that sits in a
// blocking call the layer does not wrap (MPI_Barrier, a collective or a
// communicator constructor of the MPI library) or that computes would leave
// its peer waiting in a point-to-point call, and a legal program (MPI_Isend,
// MPI_Barrier, MPI_Wait against MPI_Recv, MPI_Barrier) would hang where MPI
// itself completes it. The helper thread progresses the layer's operations
// whenever none of the application's threads has for a while; while they
// poll in Wait or Test it stays out of their way. It needs the MPI library
// at MPI_THREAD_MULTIPLE, which the layer asks for at initialization.
// Without it, barriers and collectives run as their nonblocking forms and
// progress the layer while they wait (Collectives.cpp, `progressing`).
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ddtc::mpi {
namespace {

using Clock = std::chrono::steady_clock;

/// The helper steps in when nobody progressed for this long. Shorter than a
/// fragment's transfer, long enough to leave a polling thread alone.
constexpr std::chrono::microseconds kIdleGap{50};

// Never destroyed: a program that exits without MPI_Finalize must not
// meet std::thread's destructor on a running thread (std::terminate).
std::thread *helper = nullptr;
std::mutex helperMutex;
std::condition_variable wake;
bool stopping = false; // under helperMutex
std::atomic<bool> running{false};
std::atomic<Clock::rep> lastProgress{0};
std::atomic<void *> context{nullptr};

void helperLoop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(helperMutex);
      // Woken by an operation that starts; the timeout also covers a wake-up
      // sent between the check and the wait.
      wake.wait_for(lock, std::chrono::milliseconds(10),
                    [] { return stopping || anyInFlight(); });
      if (stopping)
        return;
    }
    if (!anyInFlight())
      continue;
    // The context of the thread that started the last operation: its
    // streams and events belong there.
    makeContextCurrentHandle(context.load(std::memory_order_acquire));
    while (anyInFlight()) {
      Clock::rep last = lastProgress.load(std::memory_order_relaxed);
      // Sends waiting for their pack are posted at once: the peer waits
      // for them, and posting does not get in a polling thread's way.
      if (anyUnposted() ||
          Clock::now().time_since_epoch().count() - last >=
              std::chrono::duration_cast<Clock::duration>(kIdleGap).count())
        progress();
      std::this_thread::sleep_for(kIdleGap / 2);
      std::lock_guard<std::mutex> lock(helperMutex);
      if (stopping)
        return;
    }
  }
}

} // namespace

bool progressThreadRunning() { return running.load(std::memory_order_acquire); }

void markProgress() {
  lastProgress.store(Clock::now().time_since_epoch().count(),
                     std::memory_order_relaxed);
}

void startProgressThread() {
  if (running.load())
    return;
  stopping = false;
  helper = new std::thread(helperLoop);
  running.store(true);
  note(2, "progress thread started");
}

void wakeProgressThread() {
  if (!running.load(std::memory_order_relaxed))
    return;
  context.store(currentContextHandle(), std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(helperMutex);
  }
  wake.notify_one();
}

void stopProgressThread() {
  if (!running.load())
    return;
  {
    std::lock_guard<std::mutex> lock(helperMutex);
    stopping = true;
  }
  wake.notify_one();
  helper->join();
  delete helper;
  helper = nullptr;
  running.store(false);
}

} // namespace ddtc::mpi
