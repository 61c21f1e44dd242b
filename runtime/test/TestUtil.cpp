//===- TestUtil.cpp - Helpers shared by the runtime tests -----------------===//

#include "TestUtil.h"

#include "BuiltinKernels.h"
#include "KernelCache.h"

#include "ddtc/Target/CUDA/NVRTCCompiler.h"

#include <ftw.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

extern char **environ;

namespace ddtc::test {

TempDir::TempDir() {
  const char *tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/ddtc-rt-XXXXXX";
  if (mkdtemp(&templ[0]))
    path_ = templ;
}

TempDir::~TempDir() {
  if (path_.empty())
    return;
  nftw(
      path_.c_str(),
      [](const char *p, const struct stat *, int, struct FTW *) {
        return std::remove(p);
      },
      16, FTW_DEPTH | FTW_PHYS);
}

void resetRuntime() { rt::KernelCache::get().resetForTesting(); }

void useCacheDir(const std::string &cacheDir) {
  setenv("DDTC_CACHE_DIR", cacheDir.c_str(), 1);
  unsetenv("DDTC_DISABLE_CACHE");
  unsetenv("DDTC_JIT");
  resetRuntime();
}

ddtc_stats statsNow() {
  ddtc_stats s;
  ddtc_get_stats(&s);
  return s;
}

ddtc_type makeType(const std::string &spec) {
  ddtc_type t = nullptr;
  if (ddtc_type_from_spec(spec.c_str(), nullptr, &t) != DDTC_SUCCESS)
    std::fprintf(stderr, "cannot make a type of '%s': %s\n", spec.c_str(),
                 ddtc_last_error());
  return t;
}

bool haveNVRTC(std::string &why) {
  return NVRTCCompiler::get(why) != nullptr;
}

bool haveBuiltinKernels() { return rt::kNumBuiltinKernels > 0; }

ChildResult runChild(
    const std::string &test,
    const std::vector<std::pair<std::string, std::string>> &env) {
  ChildResult r;
  // Build the environment before forking: the child only execs.
  std::map<std::string, std::string> vars;
  for (char **e = environ; *e; ++e) {
    const char *eq = std::strchr(*e, '=');
    if (eq)
      vars[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  for (const auto &[k, v] : env) {
    if (v.empty())
      vars.erase(k);
    else
      vars[k] = v;
  }
  std::vector<std::string> strings;
  for (const auto &[k, v] : vars)
    strings.push_back(k + "=" + v);
  std::vector<char *> envp;
  for (std::string &s : strings)
    envp.push_back(&s[0]);
  envp.push_back(nullptr);
  char exe[] = "/proc/self/exe";
  std::string arg = test;
  char *argv[] = {exe, &arg[0], nullptr};

  int fds[2];
  if (pipe(fds) != 0)
    return r;
  pid_t pid = fork();
  if (pid < 0)
    return r;
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execve(exe, argv, envp.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0)
    r.output.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string field(const std::string &text, const std::string &key) {
  size_t at = 0;
  while ((at = text.find(key + "=", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == ' ' || text[at - 1] == '\n') {
      size_t begin = at + key.size() + 1;
      size_t end = text.find_first_of(" \n", begin);
      return text.substr(begin, end == std::string::npos ? end : end - begin);
    }
    at += key.size();
  }
  return "";
}

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace ddtc::test
