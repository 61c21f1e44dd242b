//===- TestHarness.h - A small test runner for the runtime tests --*- C++ -*-===//
//
// Each test is a function returning kPass, kSkip or kFail; the executable
// runs the test named on its command line, so ctest sees each test (and each
// skip, exit code 77) on its own. No dependency beyond the C++ library.
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_TEST_TESTHARNESS_H
#define DDTC_RUNTIME_TEST_TESTHARNESS_H

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace ddtc::test {

constexpr int kPass = 0, kFail = 1, kSkip = 77;

struct TestCase {
  const char *name;
  int (*fn)();
};

inline std::vector<TestCase> &registry() {
  static std::vector<TestCase> tests;
  return tests;
}

struct Register {
  Register(const char *name, int (*fn)()) { registry().push_back({name, fn}); }
};

#define DDTC_TEST(NAME, ID)                                                    \
  static int ID();                                                             \
  static ::ddtc::test::Register ID##_registered(NAME, ID);                     \
  static int ID()

#define CHECK(COND)                                                            \
  do {                                                                         \
    if (!(COND)) {                                                             \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,    \
                   #COND);                                                     \
      return ::ddtc::test::kFail;                                              \
    }                                                                          \
  } while (0)

#define CHECK_MSG(COND, ...)                                                   \
  do {                                                                         \
    if (!(COND)) {                                                             \
      std::fprintf(stderr, "%s:%d: check failed: %s\n  ", __FILE__, __LINE__,  \
                   #COND);                                                     \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
      return ::ddtc::test::kFail;                                              \
    }                                                                          \
  } while (0)

#define SKIP(...)                                                              \
  do {                                                                         \
    std::printf("SKIPPED: ");                                                  \
    std::printf(__VA_ARGS__);                                                  \
    std::printf("\n");                                                         \
    return ::ddtc::test::kSkip;                                                \
  } while (0)

/// Runs the test named argv[1], or lists the tests.
inline int runTests(int argc, char **argv) {
  if (argc < 2 || std::strcmp(argv[1], "--list") == 0) {
    for (const TestCase &t : registry())
      std::printf("%s\n", t.name);
    return argc < 2 ? 2 : 0;
  }
  for (const TestCase &t : registry()) {
    if (std::strcmp(t.name, argv[1]) != 0)
      continue;
    int rc = t.fn();
    std::printf("%s: %s\n", t.name,
                rc == kPass ? "PASSED" : rc == kSkip ? "SKIPPED" : "FAILED");
    return rc;
  }
  std::fprintf(stderr, "no test named '%s' (--list lists them)\n", argv[1]);
  return 2;
}

} // namespace ddtc::test

#endif // DDTC_RUNTIME_TEST_TESTHARNESS_H
