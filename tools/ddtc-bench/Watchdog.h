//===- Watchdog.h - A time limit on calls that may not return --*- C++ -*-===//
//
// Some of the engines the benchmark compares against have been seen not to
// return (a pack into pinned host memory that never completes). Every such
// call runs armed: when it outlives its limit, a thread of the watchdog
// records what was running (the callback writes the results so far) and
// ends the process with a distinct exit code, so the caller can resume with
// the layouts left.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_BENCH_WATCHDOG_H
#define DDTC_TOOLS_DDTC_BENCH_WATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace ddtc {

class Watchdog {
public:
  /// The exit code of a process the watchdog ended.
  static constexpr int kTimedOutExit = 85;

  /// `onTimeout` receives the label of the armed call; it runs on the
  /// watchdog's thread while the main thread is stuck, then the process
  /// ends with kTimedOutExit.
  explicit Watchdog(std::function<void(const std::string &)> onTimeout);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  /// Starts the limit of `seconds` for the call named `label`.
  void arm(double seconds, std::string label);
  /// The call returned in time.
  void disarm();

  /// Runs fn armed.
  template <typename Fn> auto run(double seconds, std::string label, Fn fn) {
    arm(seconds, std::move(label));
    struct Disarm {
      Watchdog &w;
      ~Disarm() { w.disarm(); }
    } d{*this};
    return fn();
  }

private:
  void loop();
  std::function<void(const std::string &)> onTimeout_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool armed_ = false, stop_ = false;
  /// Set once the limit passed: the main thread, should the call return
  /// after all, waits in arm/disarm while the callback writes.
  bool firing_ = false;
  std::chrono::steady_clock::time_point deadline_;
  std::string label_;
  std::thread thread_;
};

} // namespace ddtc

#endif // DDTC_TOOLS_DDTC_BENCH_WATCHDOG_H
