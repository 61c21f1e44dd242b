//===- Sandbox.cpp - Runs one fuzz input in a child process ---------------===//

#include "Sandbox.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ddtc::fuzz {

const char *outcomeName(Outcome o) {
  switch (o) {
  case Outcome::Ok:
    return "ok";
  case Outcome::Crash:
    return "crash";
  case Outcome::Abort:
    return "abort";
  case Outcome::OutOfMemory:
    return "out-of-memory";
  case Outcome::Hang:
    return "hang";
  case Outcome::Wrong:
    return "wrong";
  case Outcome::Exit:
    return "exit";
  }
  return "unknown";
}

namespace {

/// The last `n` bytes of the file open at `fd`.
std::string tailOf(int fd, size_t n) {
  off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0)
    return "";
  off_t from = size > static_cast<off_t>(n) ? size - static_cast<off_t>(n) : 0;
  std::string out(static_cast<size_t>(size - from), '\0');
  ssize_t got = pread(fd, out.data(), out.size(), from);
  out.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return out;
}

bool mentionsMemory(const std::string &s) {
  return s.find("out of memory") != std::string::npos ||
         s.find("bad_alloc") != std::string::npos ||
         s.find("Cannot allocate memory") != std::string::npos;
}

} // namespace

SandboxResult runSandboxed(const std::function<void()> &body,
                           const SandboxLimits &limits) {
  SandboxResult r;
  char path[] = "/tmp/ddtc-fuzz-stderr-XXXXXX";
  int errFd = mkstemp(path);
  if (errFd >= 0)
    unlink(path);
  std::fflush(stdout);
  std::fflush(stderr);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    r.outcome = Outcome::Exit;
    r.code = -1;
    r.stderrTail = std::string("fork failed: ") + std::strerror(errno);
    if (errFd >= 0)
      close(errFd);
    return r;
  }
  if (pid == 0) {
    int devNull = open("/dev/null", O_WRONLY);
    if (devNull >= 0)
      dup2(devNull, STDOUT_FILENO);
    if (errFd >= 0)
      dup2(errFd, STDERR_FILENO);
    rlimit mem;
    mem.rlim_cur = mem.rlim_max =
        static_cast<rlim_t>(limits.memoryMb) * 1024 * 1024;
    setrlimit(RLIMIT_AS, &mem);
    rlimit core{0, 0}; // no core files from expected crashes
    setrlimit(RLIMIT_CORE, &core);
    body();
    std::fflush(stderr);
    _exit(0);
  }
  int status = 0;
  bool killed = false;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      break;
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
    if (!killed && ms > static_cast<double>(limits.timeoutMs)) {
      kill(pid, SIGKILL);
      killed = true;
    }
    usleep(ms < 20 ? 100 : 2000);
  }
  r.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (errFd >= 0) {
    r.stderrTail = tailOf(errFd, 2000);
    close(errFd);
  }
  if (killed) {
    r.outcome = Outcome::Hang;
    r.code = SIGKILL;
  } else if (WIFSIGNALED(status)) {
    r.code = WTERMSIG(status);
    if (mentionsMemory(r.stderrTail) || r.code == SIGKILL)
      r.outcome = Outcome::OutOfMemory;
    else
      r.outcome = r.code == SIGABRT ? Outcome::Abort : Outcome::Crash;
  } else {
    r.code = WEXITSTATUS(status);
    if (r.code == 0)
      r.outcome = Outcome::Ok;
    else if (r.code == 3)
      r.outcome = Outcome::Wrong;
    else
      r.outcome =
          mentionsMemory(r.stderrTail) ? Outcome::OutOfMemory : Outcome::Exit;
  }
  return r;
}

} // namespace ddtc::fuzz
