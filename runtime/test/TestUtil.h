//===- TestUtil.h - Helpers shared by the runtime tests ---------*- C++ -*-===//

#ifndef DDTC_RUNTIME_TEST_TESTUTIL_H
#define DDTC_RUNTIME_TEST_TESTUTIL_H

#include "ddtc/ddtc.h"

#include <string>
#include <utility>
#include <vector>

namespace ddtc::test {

/// A fresh folder under $TMPDIR (or /tmp), removed with its content.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// Points the runtime at `cacheDir` (DDTC_CACHE_DIR), clears the variables
/// tests change, and forgets every cached kernel (in memory).
void useCacheDir(const std::string &cacheDir);

/// Forgets the in-memory caches and reads the environment again.
void resetRuntime();

ddtc_stats statsNow();

/// Parses `spec` (its last binding) or returns null after printing why.
ddtc_type makeType(const std::string &spec);

/// Whether NVRTC loads; `why` tells why not.
bool haveNVRTC(std::string &why);

/// Whether libddtc was built with the generic kernels.
bool haveBuiltinKernels();

struct ChildResult {
  int exitCode = -1;
  std::string output; ///< stdout
};
/// Runs this executable again as `test` with the environment changed by
/// `env` (an empty value unsets), in a fresh process.
ChildResult runChild(const std::string &test,
                     const std::vector<std::pair<std::string, std::string>> &env);

/// The value of "key=value" in `text` (a line of key=value words), or "".
std::string field(const std::string &text, const std::string &key);

double nowMs();

} // namespace ddtc::test

#endif // DDTC_RUNTIME_TEST_TESTUTIL_H
