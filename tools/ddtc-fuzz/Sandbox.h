//===- Sandbox.h - Runs one fuzz input in a child process -------*- C++ -*-===//
//
// Each input runs in a forked child with a memory limit (RLIMIT_AS) and a
// time limit, so a crash, an abort, a hang or an exhausted memory is seen
// and reported instead of ending the fuzzer. The child's stderr is kept for
// the report.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_FUZZ_SANDBOX_H
#define DDTC_TOOLS_DDTC_FUZZ_SANDBOX_H

#include <cstdint>
#include <functional>
#include <string>

namespace ddtc::fuzz {

enum class Outcome {
  Ok,          ///< returned (whatever the input's diagnostics said)
  Crash,       ///< a signal other than SIGABRT (SIGSEGV, SIGBUS, SIGFPE, ...)
  Abort,       ///< SIGABRT: an assertion, std::terminate, a fatal error
  OutOfMemory, ///< an allocation failed under the memory limit
  Hang,        ///< still running at the time limit (killed)
  Wrong,       ///< a check in the child found a wrong result (exit 3)
  Exit,        ///< any other exit status
};

const char *outcomeName(Outcome o);

struct SandboxResult {
  Outcome outcome = Outcome::Ok;
  /// The signal or exit status, the seconds it ran and its stderr's end.
  int code = 0;
  double seconds = 0;
  std::string stderrTail;
};

struct SandboxLimits {
  int64_t timeoutMs = 5000;
  int64_t memoryMb = 2048;
};

/// Runs `body` in a child process under `limits`. The child exits 0 when
/// body returns; body exits 3 (after printing why) for a wrong result.
SandboxResult runSandboxed(const std::function<void()> &body,
                           const SandboxLimits &limits);

} // namespace ddtc::fuzz

#endif // DDTC_TOOLS_DDTC_FUZZ_SANDBOX_H
