//===- Watchdog.cpp - A time limit around calls that may not return -------===//

#include "Watchdog.h"

#include <unistd.h>

#include <cstdio>

namespace ddtc {

Watchdog::Watchdog(std::function<void(const std::string &)> onTimeout)
    : onTimeout_(std::move(onTimeout)), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(double seconds, std::string label) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return !firing_; });
    armed_ = true;
    label_ = std::move(label);
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(seconds));
  }
  cv_.notify_all();
}

void Watchdog::disarm() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return !firing_; });
    armed_ = false;
  }
  cv_.notify_all();
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, deadline_) != std::cv_status::timeout)
      continue; // disarmed, re-armed or stopping: look again
    if (!armed_ || std::chrono::steady_clock::now() < deadline_)
      continue;
    std::string label = label_;
    firing_ = true; // never cleared: the process ends below
    lock.unlock();
    std::fprintf(stderr, "ddtc-bench: %s did not return in time\n",
                 label.c_str());
    onTimeout_(label);
    std::fflush(nullptr);
    // The main thread is stuck inside a library: no destructors, no exit
    // handlers that could wait on it.
    _exit(kTimedOutExit);
  }
}

} // namespace ddtc
