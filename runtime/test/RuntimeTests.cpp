//===- RuntimeTests.cpp - The runtime without a GPU -----------------------===//
//
// Types from specs, their layout figures, commits that compile with NVRTC
// (for sm_90 unless DDTC_DEFAULT_ARCH says otherwise), the memory and disk
// caches and their failure modes, threads, compile errors, and the errors a
// call that needs a GPU returns where there is none.
//===----------------------------------------------------------------------===//

#include "TestHarness.h"
#include "TestUtil.h"

#include "CUDADriver.h"
#include "Config.h"
#include "DiskCache.h"
#include "GenericPlan.h"
#include "KernelCache.h"
#include "PlanCache.h"
#include "TypeObject.h"
#include "ddtc/Core/Hash.h"

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/NVRTCCompiler.h"
#include "ddtc/Target/CUDA/NestKernel.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

using namespace ddtc;
using namespace ddtc::test;

namespace {

const char *kStridedSpec = "col = vector(3, 2, 5, double)\n";
/// Another layout of the same kernel shape as kStridedSpec.
const char *kStridedSpec2 = "wide = vector(9, 2, 7, double)\n";
// Seventeen blocks: one more than a strided nest point may have.
const char *kUnitsSpec =
    "ragged = indexed([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2], "
    "[0, 3, 8, 16, 24, 28, 34, 40, 49, 54, 58, 65, 75, 78, 83, 91, 99], "
    "double)\n";

/// The .ddtck entries in `dir`.
std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> out;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 6 && n.compare(n.size() - 6, 6, ".ddtck") == 0)
        out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  return out;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void writeFile(const std::string &path, const std::string &data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

ddtc_kernel_info infoOf(ddtc_type t) {
  ddtc_kernel_info info;
  if (ddtc_type_kernel_info(t, &info) != DDTC_SUCCESS)
    std::memset(&info, 0, sizeof info);
  return info;
}

/// Commits a new type of `spec`, waits for its kernels, frees it; returns
/// the kernel's origin (or -status on failure).
int commitAndWait(const std::string &spec) {
  ddtc_type t = makeType(spec);
  if (!t)
    return -DDTC_ERROR_INVALID_SPEC;
  ddtc_status s = ddtc_type_commit(t);
  if (s == DDTC_SUCCESS)
    s = ddtc_type_wait(t);
  int origin = s == DDTC_SUCCESS ? infoOf(t).origin : -s;
  ddtc_type_free(&t);
  return origin;
}

#define REQUIRE_NVRTC()                                                        \
  do {                                                                         \
    std::string why_;                                                          \
    if (!haveNVRTC(why_))                                                      \
      SKIP("NVRTC is not available, so nothing can be compiled: %s",           \
           why_.c_str());                                                      \
  } while (0)

} // namespace

//===----------------------------------------------------------------------===//
// Types and their figures
//===----------------------------------------------------------------------===//

DDTC_TEST("spec-and-layout", specAndLayout) {
  const char *spec = "col = vector(3, 2, 5, double)\n"
                     "rec = struct([1,2,1], [0,8,16], [double, int, char])\n"
                     "rrec = resized(-8, 32, rec)\n";
  ddtc_type col = nullptr, rrec = nullptr, last = nullptr;
  CHECK(ddtc_type_from_spec(spec, "col", &col) == DDTC_SUCCESS);
  CHECK(ddtc_type_from_spec(spec, nullptr, &last) == DDTC_SUCCESS);
  CHECK(ddtc_type_from_spec(spec, "rrec", &rrec) == DDTC_SUCCESS);
  int64_t v = 0, lb = 0, tlb = 0, text = 0;
  CHECK(ddtc_type_size(col, &v) == DDTC_SUCCESS && v == 48);
  CHECK(ddtc_type_extent(col, &v) == DDTC_SUCCESS && v == 96);
  CHECK(ddtc_type_lb(col, &v) == DDTC_SUCCESS && v == 0);
  CHECK(ddtc_type_true_extent(col, &tlb, &text) == DDTC_SUCCESS && tlb == 0 &&
        text == 96);
  CHECK(ddtc_type_packed_size(col, 3, &v) == DDTC_SUCCESS && v == 144);
  CHECK(ddtc_type_size(last, &v) == DDTC_SUCCESS && v == 17);
  CHECK(ddtc_type_lb(rrec, &lb) == DDTC_SUCCESS && lb == -8);
  CHECK(ddtc_type_extent(rrec, &v) == DDTC_SUCCESS && v == 32);
  CHECK(ddtc_type_true_extent(rrec, &tlb, &text) == DDTC_SUCCESS && tlb == 0 &&
        text == 17);
  CHECK(ddtc_type_free(&col) == DDTC_SUCCESS && col == nullptr);
  CHECK(ddtc_type_free(&last) == DDTC_SUCCESS);
  CHECK(ddtc_type_free(&rrec) == DDTC_SUCCESS);
  CHECK(ddtc_type_free(&rrec) == DDTC_SUCCESS); // null is allowed
  return kPass;
}

DDTC_TEST("invalid-arguments", invalidArguments) {
  ddtc_type t = nullptr;
  CHECK(ddtc_type_from_spec("a = vector(3, 2, 5, dubble)\n", nullptr, &t) ==
        DDTC_ERROR_INVALID_SPEC);
  CHECK(t == nullptr);
  CHECK_MSG(std::strstr(ddtc_last_error(), "dubble") != nullptr, "%s",
            ddtc_last_error());
  CHECK(ddtc_type_from_spec("a = vector(-1, 2, 5, double)\n", nullptr, &t) ==
        DDTC_ERROR_INVALID_SPEC);
  CHECK(ddtc_type_from_spec("a = vector(1, 2, 5, double)\n", "b", &t) ==
        DDTC_ERROR_INVALID_SPEC);
  CHECK_MSG(std::strstr(ddtc_last_error(), "'b'") &&
                std::strstr(ddtc_last_error(), "defines: a"),
            "%s", ddtc_last_error());
  CHECK(ddtc_type_from_spec("# nothing\n", nullptr, &t) ==
        DDTC_ERROR_INVALID_SPEC);
  CHECK(ddtc_type_from_spec(nullptr, nullptr, &t) ==
        DDTC_ERROR_INVALID_ARGUMENT);
  CHECK(ddtc_type_from_spec("a = int\n", nullptr, nullptr) ==
        DDTC_ERROR_INVALID_ARGUMENT);
  CHECK(ddtc_type_commit(nullptr) == DDTC_ERROR_INVALID_ARGUMENT);
  CHECK(ddtc_type_size(nullptr, nullptr) == DDTC_ERROR_INVALID_ARGUMENT);
  CHECK(std::strcmp(ddtc_status_name(DDTC_ERROR_NO_DEVICE),
                    "DDTC_ERROR_NO_DEVICE") == 0);

  t = makeType(kStridedSpec);
  CHECK(t);
  char buf[256];
  // Not committed.
  CHECK(ddtc_pack(t, buf, 1, 0, 48, buf, nullptr, 0) ==
        DDTC_ERROR_NOT_COMMITTED);
  CHECK(std::strstr(ddtc_last_error(), "not committed"));
  ddtc_kernel_info info;
  CHECK(ddtc_type_kernel_info(t, &info) == DDTC_ERROR_NOT_COMMITTED);
  CHECK(ddtc_type_wait(t) == DDTC_ERROR_NOT_COMMITTED);
  TempDir dir;
  useCacheDir(dir.path());
  setenv("DDTC_JIT", "generic", 1); // no compile needed for this test
  resetRuntime();
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  // Ranges outside the packed stream, negative counts and caps.
  CHECK(ddtc_pack(t, buf, 2, 0, 97, buf, nullptr, 0) ==
        DDTC_ERROR_INVALID_ARGUMENT);
  CHECK_MSG(std::strstr(ddtc_last_error(), "[0, 97)"), "%s", ddtc_last_error());
  CHECK(ddtc_pack(t, buf, 2, 10, 5, buf, nullptr, 0) ==
        DDTC_ERROR_INVALID_ARGUMENT);
  CHECK(ddtc_pack(t, buf, -1, 0, 0, buf, nullptr, 0) ==
        DDTC_ERROR_INVALID_ARGUMENT);
  CHECK(ddtc_unpack(t, buf, 1, 0, 8, buf, nullptr, -1) ==
        DDTC_ERROR_INVALID_ARGUMENT);
  CHECK(ddtc_pack(t, buf, int64_t(1) << 62, 0, 8, buf, nullptr, 0) ==
        DDTC_ERROR_INVALID_ARGUMENT);
  CHECK(ddtc_pack(t, buf, 1, 0, 8, nullptr, nullptr, 0) ==
        DDTC_ERROR_INVALID_ARGUMENT);
  // An empty range needs no GPU.
  CHECK(ddtc_pack(t, buf, 1, 8, 8, buf, nullptr, 0) == DDTC_SUCCESS);
  CHECK(ddtc_type_free(&t) == DDTC_SUCCESS);
  unsetenv("DDTC_JIT");
  return kPass;
}

DDTC_TEST("no-device", noDevice) {
  std::string why;
  if (cu::getDriver(why))
    SKIP("a CUDA driver and GPU are present; this test needs a machine "
         "without them");
  TempDir dir;
  useCacheDir(dir.path());
  setenv("DDTC_JIT", "generic", 1);
  resetRuntime();
  ddtc_type t = makeType(kStridedSpec);
  CHECK(t);
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  std::vector<char> buf(1024);
  CHECK(ddtc_pack(t, buf.data(), 2, 0, 96, buf.data(), nullptr, 0) ==
        DDTC_ERROR_NO_DEVICE);
  std::string msg = ddtc_last_error();
  std::printf("ddtc_pack without a GPU: %s\n", msg.c_str());
  CHECK_MSG(msg.find("ddtc_pack needs a GPU") != std::string::npos &&
                msg.find("libcuda.so.1") != std::string::npos,
            "%s", msg.c_str());
  CHECK(ddtc_unpack(t, buf.data(), 2, 5, 90, buf.data(), nullptr, 3) ==
        DDTC_ERROR_NO_DEVICE);
  CHECK(std::strstr(ddtc_last_error(), "ddtc_unpack needs a GPU"));
  ddtc_type_free(&t);
  unsetenv("DDTC_JIT");
  return kPass;
}

DDTC_TEST("empty-type", emptyType) {
  TempDir dir;
  useCacheDir(dir.path());
  ddtc_type t = makeType("e = contiguous(0, double)\n");
  CHECK(t);
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  CHECK(ddtc_type_wait(t) == DDTC_SUCCESS);
  CHECK(infoOf(t).origin == DDTC_KERNEL_EMPTY);
  CHECK(ddtc_pack(t, nullptr, 100, 0, 0, nullptr, nullptr, 0) == DDTC_SUCCESS);
  CHECK(statsNow().nvrtc_compiles == 0);
  ddtc_type_free(&t);
  return kPass;
}

//===----------------------------------------------------------------------===//
// Compiles and the memory cache
//===----------------------------------------------------------------------===//

DDTC_TEST("commit-compiles", commitCompiles) {
  REQUIRE_NVRTC();
  TempDir dir;
  std::string cache = dir.path() + "/a/b/ddtc"; // created, with its parents
  useCacheDir(cache);
  ddtc_stats before = statsNow();
  ddtc_type t = makeType(kStridedSpec);
  CHECK(t);
  std::string driverWhy;
  cu::getDriver(driverWhy); // a GPU's start-up is not the commit's
  double t0 = nowMs();
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  double commitMs = nowMs() - t0;
  CHECK(ddtc_type_wait(t) == DDTC_SUCCESS);
  double readyMs = nowMs() - t0;
  ddtc_kernel_info info = infoOf(t);
  std::printf("shape %s arch %d origin %d width %d units %d generic %d\n",
              info.shape, info.arch, info.origin, info.width,
              info.uses_work_units, info.generic_available);
  std::printf("commit returned in %.3f ms; NVRTC compile %.1f ms; ready after "
              "%.1f ms\n",
              commitMs, info.compile_ms, readyMs);
  CHECK(info.origin == DDTC_KERNEL_COMPILED);
  CHECK(std::strcmp(info.shape, "strided.w8.wide.d1") == 0);
  CHECK(info.uses_work_units == 0 && info.width == 8);
  CHECK(info.compile_ms > 0);
  const char *arch = std::getenv("DDTC_DEFAULT_ARCH");
  std::string why;
  if (!arch && !cu::getDriver(why))
    CHECK(info.arch == 90);
  ddtc_stats after = statsNow();
  CHECK(after.nvrtc_compiles == before.nvrtc_compiles + 1);
  CHECK(after.disk_writes == before.disk_writes + 1);
  // The folder was made private; the entry too.
  struct stat st;
  CHECK(stat(cache.c_str(), &st) == 0 && (st.st_mode & 0777) == 0700);
  CHECK(stat((dir.path() + "/a").c_str(), &st) == 0 &&
        (st.st_mode & 0777) == 0700);
  std::vector<std::string> files = entries(cache);
  CHECK(files.size() == 1);
  CHECK(stat(files[0].c_str(), &st) == 0 && (st.st_mode & 0777) == 0600);
  // The entry's header describes it.
  std::string data = readFile(files[0]);
  CHECK(data.compare(0, 8, "DDTCKRN1") == 0);
  CHECK(data.find("shape strided.w8.wide.d1") != std::string::npos);
  CHECK(data.find("--gpu-architecture=sm_") != std::string::npos);
  // Committing again does nothing.
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  CHECK(statsNow().nvrtc_compiles == after.nvrtc_compiles);
  ddtc_type_free(&t);
  return kPass;
}

DDTC_TEST("builtin-units", builtinUnits) {
  if (!haveBuiltinKernels())
    SKIP("libddtc was built without generic kernels (no NVRTC at build time)");
  TempDir dir;
  useCacheDir(dir.path());
  setenv("DDTC_DEFAULT_ARCH", "90", 1);
  resetRuntime();
  ddtc_stats before = statsNow();
  ddtc_type t = makeType(kUnitsSpec);
  CHECK(t);
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  ddtc_kernel_info info = infoOf(t);
  std::string why;
  if (cu::getDriver(why) && info.arch != 90)
    SKIP("the GPU here is sm_%d; the built-in cubins are for sm_90", info.arch);
  // Work-unit kernels depend only on the width: the built-in cubin is the
  // specialized kernel, ready at once, with no compile.
  CHECK(info.uses_work_units == 1);
  CHECK_MSG(info.origin == DDTC_KERNEL_BUILTIN, "origin %d shape %s",
            info.origin, info.shape);
  CHECK(info.generic_available == 1);
  CHECK(ddtc_type_wait(t) == DDTC_SUCCESS);
  CHECK(statsNow().nvrtc_compiles == before.nvrtc_compiles);
  CHECK(statsNow().builtin_hits == before.builtin_hits + 1);
  CHECK(entries(dir.path()).empty());
  ddtc_type_free(&t);
  unsetenv("DDTC_DEFAULT_ARCH");
  return kPass;
}

/// The strided shapes of vectors and subarrays come built in: a vector's
/// first commit finds its specialized kernel ready, without NVRTC; with
/// DDTC_BUILTIN_STRIDED=0, or with DDTC_NVRTC_OPTIONS set (the built-in
/// cubins were compiled without those options), it is compiled. (The other
/// tests of this file run with DDTC_BUILTIN_STRIDED=0: they test compiles.)
DDTC_TEST("builtin-strided", builtinStrided) {
  if (!haveBuiltinKernels())
    SKIP("libddtc was built without built-in kernels (no NVRTC at build time)");
  REQUIRE_NVRTC();
  const char *specs[] = {"v = vector(1000, 2, 3, double)\n",
                         "f = subarray([64, 64, 64], [62, 1, 62], [1, 1, 1], "
                         "C, float)\n",
                         "b = hvector(4096, 1024, 1028, char)\n"};
  setenv("DDTC_DEFAULT_ARCH", "90", 1);
  for (const char *spec : specs) {
    for (int round = 0; round < 3; ++round) {
      TempDir dir;
      useCacheDir(dir.path());
      unsetenv("DDTC_NVRTC_OPTIONS");
      if (round == 1)
        setenv("DDTC_BUILTIN_STRIDED", "0", 1);
      else
        unsetenv("DDTC_BUILTIN_STRIDED");
      if (round == 2)
        setenv("DDTC_NVRTC_OPTIONS", "-DDDTC_TEST_FLAG=1", 1);
      resetRuntime();
      ddtc_stats before = statsNow();
      ddtc_type t = makeType(spec);
      CHECK(t);
      CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
      CHECK(ddtc_type_wait(t) == DDTC_SUCCESS);
      ddtc_kernel_info info = infoOf(t);
      std::string why;
      if (cu::getDriver(why) && info.arch != 90)
        SKIP("the GPU here is sm_%d; the built-in cubins are for sm_90",
             info.arch);
      CHECK_MSG(std::string(info.shape).rfind("strided.", 0) == 0, "%s: %s",
                spec, info.shape);
      const int want = round == 0 ? DDTC_KERNEL_BUILTIN : DDTC_KERNEL_COMPILED;
      CHECK_MSG(info.origin == want, "%s round %d: origin %d, shape %s", spec,
                round, info.origin, info.shape);
      CHECK(statsNow().nvrtc_compiles ==
            before.nvrtc_compiles + (round == 0 ? 0 : 1));
      ddtc_type_free(&t);
    }
  }
  unsetenv("DDTC_NVRTC_OPTIONS");
  setenv("DDTC_BUILTIN_STRIDED", "0", 1);
  unsetenv("DDTC_DEFAULT_ARCH");
  resetRuntime();
  return kPass;
}

DDTC_TEST("memory-cache", memoryCache) {
  REQUIRE_NVRTC();
  TempDir dir;
  useCacheDir(dir.path());
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  ddtc_stats before = statsNow();
  // Another layout of the same shape shares the compiled kernels.
  ddtc_type t = makeType(kStridedSpec2);
  CHECK(t);
  double t0 = nowMs();
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  double commitUs = (nowMs() - t0) * 1000;
  ddtc_kernel_info info = infoOf(t);
  CHECK(std::strcmp(info.shape, "strided.w8.wide.d1") == 0);
  CHECK(info.origin == DDTC_KERNEL_MEMORY);
  ddtc_stats after = statsNow();
  CHECK(after.nvrtc_compiles == before.nvrtc_compiles);
  CHECK(after.memory_hits == before.memory_hits + 1);
  CHECK(after.disk_hits == before.disk_hits);
  std::printf("commit of a new type whose kernels are in memory: %.1f us\n",
              commitUs);
  ddtc_type_free(&t);
  // A new handle of the same tree takes the kernels its first commit took.
  t = makeType(kStridedSpec2);
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  CHECK(infoOf(t).origin == DDTC_KERNEL_MEMORY);
  CHECK(statsNow().memory_hits == after.memory_hits + 1);
  ddtc_type_free(&t);
  // After a reset those kernels are not the cache's: the disk serves them.
  resetRuntime();
  ddtc_stats reset = statsNow();
  t = makeType(kStridedSpec2);
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  CHECK(ddtc_type_wait(t) == DDTC_SUCCESS);
  CHECK_MSG(infoOf(t).origin == DDTC_KERNEL_DISK, "origin %d",
            infoOf(t).origin);
  CHECK(statsNow().memory_hits == reset.memory_hits);
  CHECK(statsNow().disk_hits == reset.disk_hits + 1);
  ddtc_type_free(&t);
  // and the memo keeps those for the handles after it.
  t = makeType(kStridedSpec2);
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  CHECK(infoOf(t).origin == DDTC_KERNEL_MEMORY);
  CHECK(statsNow().memory_hits == reset.memory_hits + 1);
  ddtc_type_free(&t);
  return kPass;
}

namespace {

/// The plan a committed handle holds (null when none was made).
const KernelPlan *planOf(ddtc_type t) { return t->specialized.get(); }

/// The plan of a new handle of `spec` after its commit (the handle stays
/// alive in `keep`). NO_COMPILER is fine: planning comes before it.
const KernelPlan *commitPlan(const std::string &spec,
                             std::vector<ddtc_type> &keep) {
  ddtc_type t = makeType(spec);
  if (!t)
    return nullptr;
  keep.push_back(t);
  ddtc_status s = ddtc_type_commit(t);
  if (s != DDTC_SUCCESS && s != DDTC_ERROR_NO_COMPILER)
    return nullptr;
  return planOf(t);
}

/// `blocks` random blocks of doubles, as one hindexed binding.
std::string randomHIndexed(int blocks) {
  std::mt19937_64 rng(7);
  std::string lens, displs;
  int64_t at = 0;
  for (int i = 0; i < blocks; ++i) {
    int64_t len = 1 + static_cast<int64_t>(rng() % 7);
    at += 8 * static_cast<int64_t>(rng() % 5);
    lens += (i ? ", " : "") + std::to_string(len);
    displs += (i ? ", " : "") + std::to_string(at);
    at += 8 * len;
  }
  return "big = hindexed([" + lens + "], [" + displs + "], double)\n";
}

} // namespace

/// Handles of equal trees share one plan whatever text they came from;
/// trees that differ in any argument never do.
DDTC_TEST("plan-sharing", planSharing) {
  TempDir dir;
  useCacheDir(dir.path());
  setenv("DDTC_JIT", "generic", 1);
  resetRuntime();
  std::vector<ddtc_type> keep;
  auto same = [&](const char *a, const char *b) {
    const KernelPlan *pa = commitPlan(a, keep), *pb = commitPlan(b, keep);
    return pa && pa == pb;
  };
  auto distinct = [&](const char *a, const char *b) {
    const KernelPlan *pa = commitPlan(a, keep), *pb = commitPlan(b, keep);
    return pa && pb && pa != pb;
  };
  // Other names, spacing, primitive spellings and a binding for a subtree.
  CHECK(same("a = hindexed([1, 2], [0, 16], double)\n",
             "other  =  hindexed( [1,2] , [0,16], MPI_DOUBLE )\n"));
  CHECK(same("e = vector(2, 1, 3, double)\nx = struct([1, 1], [0, 100], "
             "[e, e])\n",
             "x = struct([1, 1], [0, 100], [vector(2, 1, 3, double), "
             "vector(2, 1, 3, double)])\n"));
  // Same bytes, other constructors or arguments.
  CHECK(distinct("v = vector(3, 1, 2, double)\n",
                 "v = hvector(3, 1, 16, double)\n"));
  CHECK(distinct("v = indexed([1, 2], [0, 5], double)\n",
                 "v = indexed([1, 2], [0, 6], double)\n"));
  CHECK(distinct("v = contiguous(2, contiguous(3, int))\n",
                 "v = contiguous(3, contiguous(2, int))\n"));
  CHECK(distinct("v = struct([1, 1], [0, 8], [int, float])\n",
                 "v = struct([1, 1], [0, 8], [float, int])\n"));
  CHECK(distinct("v = subarray([4], [2], [1], C, int)\n",
                 "v = subarray([4], [2], [1], Fortran, int)\n"));
  // The tree hash agrees with the sharing.
  SpecFile f;
  std::string e;
  CHECK(parseSpec("a = resized(0, 24, dup(double))\n"
                  "b = resized(0, 24, dup(MPI_DOUBLE))\n"
                  "c = resized(0, 32, dup(double))\n",
                  "t", f, e));
  CHECK(hashTree(*f.find("a")->type) == hashTree(*f.find("b")->type));
  CHECK(hashTree(*f.find("a")->type) != hashTree(*f.find("c")->type));

  // A large irregular type: what a second handle of it costs (printed only).
  const std::string big = randomHIndexed(100000);
  double first = 0, parse = 0, commit = 0;
  for (int i = 0; i < 2; ++i) {
    double t0 = nowMs();
    ddtc_type t = makeType(big);
    double t1 = nowMs();
    ddtc_status s = ddtc_type_commit(t);
    double t2 = nowMs();
    CHECK(s == DDTC_SUCCESS || s == DDTC_ERROR_NO_COMPILER);
    keep.push_back(t);
    if (i == 0)
      first = t2 - t0;
    else
      parse = t1 - t0, commit = t2 - t1;
  }
  CHECK(planOf(keep[keep.size() - 1]) == planOf(keep[keep.size() - 2]));
  std::printf("hindexed of 100000 blocks: first handle %.1f ms; second "
              "handle: parse %.1f ms, commit %.3f ms\n",
              first, parse, commit);
  for (ddtc_type &t : keep)
    ddtc_type_free(&t);
  unsetenv("DDTC_JIT");
  return kPass;
}

//===----------------------------------------------------------------------===//
// The disk cache
//===----------------------------------------------------------------------===//

/// Run in a fresh process by the disk tests: commits DDTC_TEST_SPEC and
/// prints what happened as key=value words.
DDTC_TEST("child-commit", childCommit) {
  const char *spec = std::getenv("DDTC_TEST_SPEC");
  if (!spec)
    return kFail;
  // Start the CUDA driver first, where there is one, as an application
  // would have: its start-up (about 100 ms) is not the commit's.
  std::string why;
  double d0 = nowMs();
  cu::getDriver(why);
  double driverMs = nowMs() - d0;
  ddtc_type t = makeType(spec);
  if (!t)
    return kFail;
  double t0 = nowMs();
  ddtc_status s = ddtc_type_commit(t);
  double commitMs = nowMs() - t0;
  if (s == DDTC_SUCCESS)
    s = ddtc_type_wait(t);
  ddtc_kernel_info info = infoOf(t);
  ddtc_finalize(); // let background jobs (the NVRTC note) finish
  ddtc_stats st = statsNow();
  std::printf("status=%d origin=%d compiles=%lld disk_hits=%lld "
              "disk_rejected=%lld disk_writes=%lld plan_disk_hits=%lld "
              "plan_disk_writes=%lld commit_ms=%.3f "
              "disk_load_ms=%.3f compile_ms=%.3f driver_init_ms=%.3f\n",
              s, info.origin, (long long)st.nvrtc_compiles,
              (long long)st.disk_hits, (long long)st.disk_rejected,
              (long long)st.disk_writes,
              (long long)rt::stats().planDiskHits.load(),
              (long long)rt::stats().planDiskWrites.load(), commitMs,
              info.disk_load_ms, info.compile_ms, driverMs);
  ddtc_type_free(&t);
  return kPass;
}

DDTC_TEST("disk-cache-fresh-process", diskCacheFreshProcess) {
  REQUIRE_NVRTC();
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> env = {
      {"DDTC_CACHE_DIR", dir.path()}, {"DDTC_TEST_SPEC", kStridedSpec}};
  ChildResult first = runChild("child-commit", env);
  std::printf("first process:  %s", first.output.c_str());
  CHECK(first.exitCode == 0);
  CHECK(field(first.output, "origin") == std::to_string(DDTC_KERNEL_COMPILED));
  CHECK(field(first.output, "disk_writes") == "1");
  ChildResult second = runChild("child-commit", env);
  std::printf("second process: %s", second.output.c_str());
  CHECK(second.exitCode == 0);
  CHECK(field(second.output, "origin") == std::to_string(DDTC_KERNEL_DISK));
  CHECK(field(second.output, "compiles") == "0");
  CHECK(field(second.output, "disk_hits") == "1");
  // Another layout of the same shape, in a third process, finds it too.
  env[1].second = kStridedSpec2;
  ChildResult third = runChild("child-commit", env);
  CHECK(field(third.output, "origin") == std::to_string(DDTC_KERNEL_DISK));
  CHECK(field(third.output, "compiles") == "0");
  return kPass;
}

/// A lower-triangular n x n matrix of doubles, column-major: column j holds
/// rows j to n - 1.
std::string lowerTriangularSpec(int n) {
  std::string lens, displs;
  for (int j = 0; j < n; ++j) {
    lens += (j ? ", " : "") + std::to_string(n - j);
    displs += (j ? ", " : "") + std::to_string(int64_t(j) * n + j);
  }
  return "tri = indexed([" + lens + "], [" + displs + "], double)\n";
}

/// The files of the plan folder of cache folder `dir`.
std::vector<std::string> planEntries(const std::string &dir) {
  return entries(dir + "/plans");
}

DDTC_TEST("disk-plan-fresh-process", diskPlanFreshProcess) {
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> env = {
      {"DDTC_CACHE_DIR", dir.path()},
      {"DDTC_TEST_SPEC", lowerTriangularSpec(300)},
      {"DDTC_JIT", "generic"}};
  ChildResult first = runChild("child-commit", env);
  std::printf("first process:  %s", first.output.c_str());
  CHECK(first.exitCode == 0);
  CHECK(field(first.output, "plan_disk_hits") == "0");
  CHECK(field(first.output, "plan_disk_writes") == "1");
  CHECK(planEntries(dir.path()).size() == 1);
  ChildResult second = runChild("child-commit", env);
  std::printf("second process: %s", second.output.c_str());
  CHECK(second.exitCode == 0);
  CHECK(field(second.output, "status") == field(first.output, "status"));
  CHECK(field(second.output, "plan_disk_hits") == "1");
  CHECK(field(second.output, "plan_disk_writes") == "0");
  // Small plans are planned again rather than read.
  env[1].second = kUnitsSpec;
  ChildResult small = runChild("child-commit", env);
  CHECK(field(small.output, "plan_disk_writes") == "0");
  CHECK(planEntries(dir.path()).size() == 1);
  return kPass;
}

DDTC_TEST("disk-plan-checked", diskPlanChecked) {
  auto parse = [](const std::string &text) {
    SpecFile f;
    std::string e;
    parseSpec(text, "t", f, e);
    return f.bindings.back().type;
  };
  TypeRef tri = parse(lowerTriangularSpec(300));
  TypeRef other = parse(lowerTriangularSpec(299));
  KernelPlan plan, otherPlan, back;
  std::string why;
  CHECK(planKernel(*tri, plan, why));
  CHECK(planKernel(*other, otherPlan, why));
  const std::string bytes = rt::encodePlan(plan);
  CHECK_MSG(rt::decodePlan(bytes, *tri, back, why), "%s", why.c_str());
  CHECK(back.units == plan.units && back.width == plan.width &&
        back.family == plan.family && back.unitBytes == plan.unitBytes &&
        back.layout.segments == plan.layout.segments);
  // Each damage is refused with its reason, never trusted.
  CHECK(!rt::decodePlan(bytes.substr(0, bytes.size() - 8), *tri, back, why));
  CHECK_MSG(why.find("truncated") != std::string::npos, "%s", why.c_str());
  std::string stale = bytes;
  stale[0] ^= 1;
  CHECK(!rt::decodePlan(stale, *tri, back, why));
  CHECK_MSG(why.find("plan format") != std::string::npos, "%s", why.c_str());
  CHECK(!rt::decodePlan(rt::encodePlan(otherPlan), *tri, back, why));
  CHECK_MSG(why.find("size, lb or extent") != std::string::npos, "%s",
            why.c_str());
  KernelPlan outside = plan;
  outside.units.back().src += 1 << 20;
  CHECK(!rt::decodePlan(rt::encodePlan(outside), *tri, back, why));
  CHECK_MSG(why.find("tile") != std::string::npos, "%s", why.c_str());
  KernelPlan wideSegment = plan;
  wideSegment.layout.segments.front().offset -= 1 << 20;
  CHECK(!rt::decodePlan(rt::encodePlan(wideSegment), *tri, back, why));
  CHECK_MSG(why.find("true bounds") != std::string::npos, "%s", why.c_str());
  // The unit count sizes the array before the pieces are read: one too
  // many, one too few, or one no plan may hold are refused.
  size_t unitsWord = 10;
  for (const Segment &seg : plan.layout.segments)
    unitsWord += 3 + 2 * seg.dims.size() + 2 * seg.runs.size();
  for (int64_t count :
       {int64_t(plan.units.size()) + 1, int64_t(plan.units.size()) - 1,
        int64_t(1) << 40}) {
    std::string miscounted = bytes;
    int64_t stored = 0;
    std::memcpy(&stored, &miscounted[8 * unitsWord], 8);
    CHECK(stored == int64_t(plan.units.size()));
    std::memcpy(&miscounted[8 * unitsWord], &count, 8);
    CHECK(!rt::decodePlan(miscounted, *tri, back, why));
    CHECK_MSG(why.find("malformed") != std::string::npos, "%s", why.c_str());
  }

  // In a fresh process: a well-formed entry of the wrong plan is checked
  // and replaced; a damaged file is rejected by the disk cache's hash.
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> env = {
      {"DDTC_CACHE_DIR", dir.path()},
      {"DDTC_TEST_SPEC", lowerTriangularSpec(300)},
      {"DDTC_JIT", "generic"}};
  rt::DiskCache plans(dir.path() + "/plans");
  CHECK(plans.usable());
  CHECK(plans.store(rt::planCacheKey(hashTree(*tri)), "wrong plan\n",
                    rt::encodePlan(outside), why));
  ChildResult r = runChild("child-commit", env);
  std::printf("wrong plan:   %s", r.output.c_str());
  CHECK(field(r.output, "plan_disk_hits") == "0");
  CHECK(field(r.output, "plan_disk_writes") == "1");
  std::vector<std::string> files = planEntries(dir.path());
  CHECK(files.size() == 1);
  std::string file = readFile(files[0]);
  file[file.size() - 3] ^= 0x5a;
  writeFile(files[0], file);
  r = runChild("child-commit", env);
  std::printf("damaged file: %s", r.output.c_str());
  CHECK(field(r.output, "plan_disk_hits") == "0");
  CHECK(field(r.output, "plan_disk_writes") == "1");
  r = runChild("child-commit", env);
  CHECK(field(r.output, "plan_disk_hits") == "1");
  return kPass;
}

DDTC_TEST("disk-cache-reset", diskCacheReset) {
  REQUIRE_NVRTC();
  TempDir dir;
  useCacheDir(dir.path());
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  resetRuntime(); // forget the memory cache: as a new process would
  ddtc_stats before = statsNow();
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_DISK);
  CHECK(statsNow().nvrtc_compiles == before.nvrtc_compiles);
  CHECK(statsNow().disk_hits == before.disk_hits + 1);
  return kPass;
}

/// Damages the one entry of `dir` with `damage`, then checks that a commit
/// (after forgetting the memory cache) rejects it, compiles again and
/// rewrites it, and that the rewritten entry is then used.
template <typename F>
int checkDamage(const std::string &dir, F damage, const char *what) {
  std::vector<std::string> files = entries(dir);
  CHECK(files.size() == 1);
  damage(files[0]);
  resetRuntime();
  ddtc_stats before = statsNow();
  CHECK_MSG(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED, "%s", what);
  ddtc_stats after = statsNow();
  CHECK_MSG(after.disk_rejected == before.disk_rejected + 1, "%s", what);
  CHECK_MSG(after.nvrtc_compiles == before.nvrtc_compiles + 1, "%s", what);
  CHECK_MSG(after.disk_writes == before.disk_writes + 1, "%s", what);
  resetRuntime();
  CHECK_MSG(commitAndWait(kStridedSpec) == DDTC_KERNEL_DISK, "%s", what);
  return kPass;
}

DDTC_TEST("disk-cache-corrupt", diskCacheCorrupt) {
  REQUIRE_NVRTC();
  TempDir dir;
  useCacheDir(dir.path());
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  std::string good = readFile(entries(dir.path())[0]);
  auto flip = [](size_t at) {
    return [at](const std::string &path) {
      std::string d = readFile(path);
      d[std::min(at, d.size() - 1)] ^= 0x5a;
      writeFile(path, d);
    };
  };
  int rc;
  if ((rc = checkDamage(dir.path(), flip(good.size() - 100), "a payload byte")))
    return rc;
  if ((rc = checkDamage(dir.path(), flip(60), "a meta byte")))
    return rc;
  if ((rc = checkDamage(dir.path(), flip(30), "a key byte")))
    return rc;
  if ((rc = checkDamage(dir.path(), flip(9), "the format version")))
    return rc;
  if ((rc = checkDamage(dir.path(), flip(1), "the magic")))
    return rc;
  if ((rc = checkDamage(
           dir.path(), [](const std::string &p) { truncate(p.c_str(), 1000); },
           "truncated")))
    return rc;
  if ((rc = checkDamage(
           dir.path(), [](const std::string &p) { truncate(p.c_str(), 10); },
           "truncated inside the header")))
    return rc;
  if ((rc = checkDamage(
           dir.path(), [](const std::string &p) { truncate(p.c_str(), 0); },
           "empty")))
    return rc;
  if ((rc = checkDamage(
           dir.path(),
           [](const std::string &p) { writeFile(p, readFile(p) + "tail"); },
           "padded")))
    return rc;
  // The entry of another key under this one's name.
  TempDir other;
  useCacheDir(other.path());
  CHECK(commitAndWait(kUnitsSpec) >= 0);
  CHECK(commitAndWait("v = vector(4, 1, 3, int)\n") == DDTC_KERNEL_COMPILED);
  std::string foreign = readFile(entries(other.path())[0]);
  setenv("DDTC_CACHE_DIR", dir.path().c_str(), 1);
  resetRuntime();
  if ((rc = checkDamage(
           dir.path(), [&](const std::string &p) { writeFile(p, foreign); },
           "another key's entry")))
    return rc;
  return kPass;
}

DDTC_TEST("disk-cache-permissions", diskCachePermissions) {
  REQUIRE_NVRTC();
  TempDir dir;
  useCacheDir(dir.path());
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  int rc;
  // An entry others may write is not trusted.
  if ((rc = checkDamage(
           dir.path(), [](const std::string &p) { chmod(p.c_str(), 0666); },
           "mode 0666")))
    return rc;
  if ((rc = checkDamage(
           dir.path(), [](const std::string &p) { chmod(p.c_str(), 0620); },
           "mode 0620")))
    return rc;
  // A symbolic link is not followed.
  if ((rc = checkDamage(
           dir.path(),
           [&](const std::string &p) {
             std::string target = dir.path() + "/elsewhere";
             rename(p.c_str(), target.c_str());
             symlink(target.c_str(), p.c_str());
           },
           "a symbolic link")))
    return rc;
  // An entry of another user (only root can make one).
  if (geteuid() == 0) {
    if ((rc = checkDamage(
             dir.path(),
             [](const std::string &p) { chown(p.c_str(), 12345, 12345); },
             "owned by another user")))
      return rc;
  } else {
    std::printf("not root: the test of an entry of another user is left out\n");
  }

  // A folder others may write: the disk cache is off (nothing read or
  // written), compiles still work.
  CHECK(chmod(dir.path().c_str(), 0777) == 0);
  resetRuntime();
  CHECK(!rt::KernelCache::get().disk().usable());
  std::printf("folder mode 0777: %s\n",
              rt::KernelCache::get().disk().reason().c_str());
  CHECK(rt::KernelCache::get().disk().reason().find("0777") !=
        std::string::npos);
  ddtc_stats before = statsNow();
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  ddtc_stats after = statsNow();
  CHECK(after.disk_hits == before.disk_hits);
  CHECK(after.disk_writes == before.disk_writes);
  CHECK(chmod(dir.path().c_str(), 0700) == 0);

  // A folder of another user.
  if (geteuid() == 0) {
    CHECK(chown(dir.path().c_str(), 12345, 12345) == 0);
    resetRuntime();
    CHECK(!rt::KernelCache::get().disk().usable());
    CHECK(rt::KernelCache::get().disk().reason().find("user 12345") !=
          std::string::npos);
    before = statsNow();
    CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
    CHECK(statsNow().disk_hits == before.disk_hits);
    CHECK(chown(dir.path().c_str(), 0, 0) == 0);
  }
  // A file where the folder should be.
  std::string file = dir.path() + "/file";
  writeFile(file, "x");
  setenv("DDTC_CACHE_DIR", file.c_str(), 1);
  resetRuntime();
  CHECK(!rt::KernelCache::get().disk().usable());
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  return kPass;
}

DDTC_TEST("disable-cache", disableCache) {
  REQUIRE_NVRTC();
  TempDir dir;
  useCacheDir(dir.path());
  setenv("DDTC_DISABLE_CACHE", "1", 1);
  resetRuntime();
  ddtc_stats before = statsNow();
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  ddtc_stats after = statsNow();
  CHECK(after.nvrtc_compiles == before.nvrtc_compiles + 2);
  CHECK(after.memory_hits == before.memory_hits);
  CHECK(after.disk_writes == before.disk_writes);
  CHECK(entries(dir.path()).empty());
  // With the caches back, an entry on disk is used; disabled, it is not.
  unsetenv("DDTC_DISABLE_CACHE");
  resetRuntime();
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  CHECK(entries(dir.path()).size() == 1);
  setenv("DDTC_DISABLE_CACHE", "1", 1);
  resetRuntime();
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  unsetenv("DDTC_DISABLE_CACHE");
  return kPass;
}

DDTC_TEST("compiler-note", compilerNote) {
  REQUIRE_NVRTC();
  std::string why;
  std::string version = NVRTCCompiler::get(why)->versionString();
  TempDir dir;
  std::string note = dir.path() + "/" + rt::KernelCache::kCompilerNote;
  std::vector<std::pair<std::string, std::string>> env = {
      {"DDTC_CACHE_DIR", dir.path()}, {"DDTC_TEST_SPEC", kStridedSpec}};
  CHECK(field(runChild("child-commit", env).output, "origin") ==
        std::to_string(DDTC_KERNEL_COMPILED));
  CHECK(readFile(note).compare(0, version.size() + 1, version + "\n") == 0);
  // A note naming another NVRTC (as after an upgrade): keys differ, so the
  // kernel is compiled again, and the note is corrected for later processes.
  writeFile(note, "1.0\n");
  chmod(note.c_str(), 0600);
  ChildResult r = runChild("child-commit", env);
  CHECK_MSG(field(r.output, "origin") == std::to_string(DDTC_KERNEL_COMPILED),
            "%s", r.output.c_str());
  CHECK(readFile(note).compare(0, version.size() + 1, version + "\n") == 0);
  r = runChild("child-commit", env);
  CHECK(field(r.output, "origin") == std::to_string(DDTC_KERNEL_DISK));
  // A note others may write is ignored (NVRTC is loaded instead).
  chmod(note.c_str(), 0666);
  r = runChild("child-commit", env);
  CHECK(field(r.output, "origin") == std::to_string(DDTC_KERNEL_DISK));
  return kPass;
}

/// Run in a fresh process: commits types whose kernels compile in the
/// background and returns at once, so the process exits mid-compile.
DDTC_TEST("child-exit-early", childExitEarly) {
  const char *specs[] = {
      "a = vector(3, 2, 5, double)\n",
      "b = subarray([9, 9, 9], [2, 3, 4], [1, 1, 1], C, float)\n",
      "c = hvector(3, 5, 17, char)\n", "d = vector(4, 1, 3, short)\n"};
  for (const char *spec : specs) {
    ddtc_type t = makeType(spec);
    if (!t || ddtc_type_commit(t) != DDTC_SUCCESS)
      return kFail;
  }
  if (std::getenv("DDTC_TEST_EXIT_FROM_THREAD")) {
    // exit() from another thread than main's.
    std::thread([] { std::exit(0); }).join();
  }
  return kPass;
}

DDTC_TEST("exit-during-compile", exitDuringCompile) {
  REQUIRE_NVRTC();
  for (int i = 0; i < 6; ++i) {
    TempDir dir; // empty: every kernel compiles
    std::vector<std::pair<std::string, std::string>> env = {
        {"DDTC_CACHE_DIR", dir.path()},
        {"DDTC_TEST_EXIT_FROM_THREAD", i % 3 == 2 ? "1" : ""}};
    double t0 = nowMs();
    ChildResult r = runChild("child-exit-early", env);
    std::printf("run %d: exit code %d after %.1f ms%s\n", i, r.exitCode,
                nowMs() - t0, i % 3 == 2 ? " (exit from a thread)" : "");
    CHECK_MSG(r.exitCode == 0, "the process exited with %d", r.exitCode);
  }
  return kPass;
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

/// `threads` threads commit `spec` at once, each its own type or all the
/// same one; returns the compiles that happened.
int64_t commitTogether(const std::string &spec, int threads, bool sameHandle,
                       int &failures) {
  ddtc_stats before = statsNow();
  ddtc_type shared = sameHandle ? makeType(spec) : nullptr;
  std::atomic<int> ready{0}, bad{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&] {
      ddtc_type t = sameHandle ? shared : makeType(spec);
      ++ready;
      while (ready.load() < threads) {
      }
      if (ddtc_type_commit(t) != DDTC_SUCCESS ||
          ddtc_type_wait(t) != DDTC_SUCCESS)
        ++bad;
      ddtc_kernel_info info;
      if (ddtc_type_kernel_info(t, &info) != DDTC_SUCCESS ||
          (info.origin != DDTC_KERNEL_COMPILED &&
           info.origin != DDTC_KERNEL_MEMORY))
        ++bad;
      if (!sameHandle)
        ddtc_type_free(&t);
    });
  for (std::thread &t : pool)
    t.join();
  if (sameHandle)
    ddtc_type_free(&shared);
  failures = bad;
  return statsNow().nvrtc_compiles - before.nvrtc_compiles;
}

DDTC_TEST("threads-compile-once", threadsCompileOnce) {
  REQUIRE_NVRTC();
  TempDir dir;
  useCacheDir(dir.path());
  int failures = 0;
  // Background compiles (the default).
  int64_t compiles = commitTogether(kStridedSpec, 8, false, failures);
  CHECK_MSG(compiles == 1, "%lld compiles", (long long)compiles);
  CHECK(failures == 0);
  // Compiles in the committing threads.
  useCacheDir(dir.path() + "/sync");
  setenv("DDTC_JIT", "sync", 1);
  resetRuntime();
  compiles = commitTogether(kStridedSpec, 8, false, failures);
  CHECK_MSG(compiles == 1, "%lld compiles", (long long)compiles);
  CHECK(failures == 0);
  // One handle, eight threads.
  useCacheDir(dir.path() + "/same");
  CHECK(commitTogether(kStridedSpec2, 8, true, failures) == 1);
  CHECK(failures == 0);
  // Eight threads, four shapes: one compile per shape.
  useCacheDir(dir.path() + "/mixed");
  const char *specs[] = {
      "a = vector(3, 1, 4, int)\n",
      "b = vector(2, 3, 4, contiguous(3, char))\n",
      "c = subarray([8, 8, 8], [2, 3, 4], [1, 1, 1], C, float)\n",
      "d = hvector(3, 5, 17, char)\n"};
  ddtc_stats before = statsNow();
  std::vector<std::thread> pool;
  std::atomic<int> bad{0};
  for (int i = 0; i < 8; ++i)
    pool.emplace_back([&, i] {
      if (commitAndWait(specs[i % 4]) < 0)
        ++bad;
    });
  for (std::thread &t : pool)
    t.join();
  CHECK(bad == 0);
  compiles = statsNow().nvrtc_compiles - before.nvrtc_compiles;
  CHECK_MSG(compiles <= 4 && compiles >= 1, "%lld compiles",
            (long long)compiles);
  return kPass;
}

//===----------------------------------------------------------------------===//
// Failures
//===----------------------------------------------------------------------===//

DDTC_TEST("compile-error", compileError) {
  REQUIRE_NVRTC();
  const std::string broken = "extern \"C\" __global__ void bad_pack(int *p) {\n"
                             "  p[0] = undeclared_name;\n"
                             "}\n";
  unsetenv("DDTC_DUMP_SOURCE");
  rt::Status s = rt::KernelCache::compileForTesting(broken, "bad", 90);
  std::printf("%s\n", s.message.c_str());
  CHECK(s.code == DDTC_ERROR_COMPILE);
  CHECK(s.message.find("undeclared_name") != std::string::npos); // the log
  CHECK(s.message.find("--gpu-architecture=sm_90") != std::string::npos);
  CHECK(s.message.find("DDTC_DUMP_SOURCE") != std::string::npos);
  CHECK(s.message.find("    2  ") == std::string::npos);
  setenv("DDTC_DUMP_SOURCE", "1", 1);
  s = rt::KernelCache::compileForTesting(broken, "bad", 90);
  CHECK(s.code == DDTC_ERROR_COMPILE);
  CHECK_MSG(s.message.find("    2    p[0] = undeclared_name;") !=
                std::string::npos,
            "%s", s.message.c_str());
  unsetenv("DDTC_DUMP_SOURCE");
  CHECK(statsNow().compile_failures == 2);
  return kPass;
}

/// DDTC_NVRTC_OPTIONS reaches every compile and is part of the cache key:
/// a kernel compiled without it is not served to a process with it.
DDTC_TEST("nvrtc-options", nvrtcOptions) {
  REQUIRE_NVRTC();
  const std::string needsFlag = "#if DDTC_TEST_FLAG != 7\n"
                                "#error DDTC_TEST_FLAG is not 7\n"
                                "#endif\n"
                                "extern \"C\" __global__ void k_pack() {}\n";
  unsetenv("DDTC_NVRTC_OPTIONS");
  rt::reloadConfig();
  rt::Status s = rt::KernelCache::compileForTesting(needsFlag, "flag", 90);
  CHECK(s.code == DDTC_ERROR_COMPILE);
  CHECK(s.message.find("DDTC_TEST_FLAG is not 7") != std::string::npos);
  setenv("DDTC_NVRTC_OPTIONS", "  -DDDTC_TEST_FLAG=7\t -DDDTC_TEST_OTHER ", 1);
  rt::reloadConfig();
  CHECK(rt::config().nvrtcOptions.size() == 2);
  s = rt::KernelCache::compileForTesting(needsFlag, "flag", 90);
  CHECK_MSG(s.code == DDTC_SUCCESS, "%s", s.message.c_str());

  TempDir dir;
  unsetenv("DDTC_NVRTC_OPTIONS");
  useCacheDir(dir.path());
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  resetRuntime();
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_DISK);
  setenv("DDTC_NVRTC_OPTIONS", "-DDDTC_TEST_FLAG=7", 1);
  resetRuntime();
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_COMPILED);
  resetRuntime();
  CHECK(commitAndWait(kStridedSpec) == DDTC_KERNEL_DISK);
  unsetenv("DDTC_NVRTC_OPTIONS");
  resetRuntime();
  return kPass;
}

DDTC_TEST("compile-apart", compileApart) {
  // A disk payload holds the two images; anything else is refused.
  std::string pack, unpack;
  const std::string joined = rt::joinImages("pack image", "unpack");
  CHECK(rt::splitImages(joined, pack, unpack));
  CHECK(pack == "pack image" && unpack == "unpack");
  pack.clear();
  CHECK(!rt::splitImages(joined.substr(0, joined.size() - 1), pack, unpack));
  CHECK(!rt::splitImages(joined + "x", pack, unpack));
  CHECK(!rt::splitImages("pack image", pack, unpack));
  CHECK(!rt::splitImages(rt::joinImages("", "unpack"), pack, unpack));
  CHECK(!rt::splitImages(rt::joinImages("pack", ""), pack, unpack));
  std::string bad = joined;
  bad[0] ^= 1;
  CHECK(!rt::splitImages(bad, pack, unpack));
  CHECK(pack.empty());

  // Each family's kernels compile apart: the pack kernel alone in one
  // cubin, the unpack kernel alone in the other.
  REQUIRE_NVRTC();
  const char *specs[] = {
      kStridedSpec, kUnitsSpec,
      // records: through windows, by their period
      "t = contiguous(60, resized(0, 48, struct([3, 3, 1, 1], [0, 24, 36, "
      "40], [double, float, int, char])))\n",
      "t = contiguous(300, resized(0, 48, struct([3, 1], [0, 36], [double, "
      "int])))\n",
      // a transpose through tiles
      "t = hvector(64, 1, 8, vector(64, 1, 64, double))\n"};
  std::vector<std::string> shapes;
  for (const char *text : specs) {
    SpecFile spec;
    std::string error;
    CHECK(parseSpec(text, "t", spec, error));
    KernelPlan plan;
    CHECK(planKernel(*spec.bindings.back().type, plan, error));
    const std::string shape = kernelShapeKey(plan);
    shapes.push_back(shape);
    const std::string prefix = rt::kernelSymbolPrefix(shape);
    rt::Status s = rt::KernelCache::compileForTesting(
        emitCUDA(plan, prefix).source, prefix, 90, &pack, &unpack);
    CHECK_MSG(s.ok(), "%s: %s", shape.c_str(), s.message.c_str());
    const auto holds = [](const std::string &image, const std::string &name) {
      return image.find(name + '\0') != std::string::npos;
    };
    CHECK_MSG(holds(pack, prefix + "_pack") && !holds(pack, prefix + "_unpack"),
              "%s", shape.c_str());
    CHECK_MSG(holds(unpack, prefix + "_unpack") &&
                  !holds(unpack, prefix + "_pack"),
              "%s", shape.c_str());
  }
  for (const std::string &shape : shapes)
    std::printf("%s compiled apart\n", shape.c_str());
  return kPass;
}

DDTC_TEST("no-compiler", noCompiler) {
  // Run with DDTC_NVRTC_PATH naming nothing, so NVRTC cannot load.
  std::string why;
  if (haveNVRTC(why))
    SKIP("NVRTC loads here; run with DDTC_NVRTC_PATH=/nonexistent");
  TempDir dir;
  useCacheDir(dir.path());
  ddtc_type t = makeType(kStridedSpec);
  CHECK(t);
  ddtc_status s = ddtc_type_commit(t);
  if (haveBuiltinKernels()) {
    // The generic kernel serves the type; waiting reports the compile.
    CHECK(s == DDTC_SUCCESS);
    CHECK(ddtc_type_wait(t) == DDTC_ERROR_NO_COMPILER);
    CHECK(infoOf(t).origin == DDTC_KERNEL_FAILED);
    CHECK(infoOf(t).generic_available == 1);
  } else {
    CHECK(s == DDTC_SUCCESS || s == DDTC_ERROR_NO_COMPILER);
    CHECK(ddtc_type_wait(t) == DDTC_ERROR_NO_COMPILER);
  }
  std::printf("%s\n", ddtc_last_error());
  CHECK(std::strstr(ddtc_last_error(), "cannot load NVRTC"));
  // Without the generic kernels (sync mode, a type of more nests than the
  // nest kernels take and more units than allowed), the commit itself fails.
  setenv("DDTC_JIT", "sync", 1);
  setenv("DDTC_GENERIC_MAX_UNITS", "1", 1);
  resetRuntime();
  std::string lens, displs, types;
  for (int i = 0; i <= kNestMaxNests; ++i) {
    lens += (i ? ", " : "") + std::string("1");
    displs += (i ? ", " : "") + std::to_string(i * 20000);
    // A stride of its own each: no two merge into one nest.
    types += (i ? ", " : "") + std::string("vector(100, 1, ") +
             std::to_string(2 + i) + ", double)";
  }
  ddtc_type u = makeType("big = struct([" + lens + "], [" + displs + "], [" +
                         types + "])\n");
  CHECK(u);
  CHECK(ddtc_type_commit(u) == DDTC_ERROR_NO_COMPILER);
  ddtc_type_free(&u);
  ddtc_type_free(&t);
  unsetenv("DDTC_JIT");
  unsetenv("DDTC_GENERIC_MAX_UNITS");
  return kPass;
}

//===----------------------------------------------------------------------===//
// Pieces
//===----------------------------------------------------------------------===//

DDTC_TEST("hash", hash) {
  Hash128 a = Hasher().add("ab").add("c").finish();
  Hash128 b = Hasher().add("a").add("bc").finish();
  CHECK(a != b);
  CHECK(a == Hasher().add("ab").add("c").finish());
  CHECK(a.hex().size() == 32);
  // Every single-bit change of a 1 KiB buffer changes the hash.
  std::string buf(1024, '\0');
  for (size_t i = 0; i < buf.size(); ++i)
    buf[i] = static_cast<char>(i * 7);
  Hash128 base = hashBytes(buf.data(), buf.size());
  for (size_t i = 0; i < buf.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      buf[i] ^= static_cast<char>(1 << bit);
      CHECK(hashBytes(buf.data(), buf.size()) != base);
      buf[i] ^= static_cast<char>(1 << bit);
    }
  CHECK(hashBytes(buf.data(), buf.size() - 1) != base);
  return kPass;
}

/// Committing costs time and memory in proportion to the description, not
/// the bytes: a 1.1 TB block and a cyclic distribution of 2^31 columns
/// commit at once (their layouts are 3 runs and a strided nest), and a type
/// whose work-unit table would be too long to list fails with a status
/// instead of exhausting memory.
DDTC_TEST("plan-cost", planCost) {
  // Planning comes first in a commit; what follows it (a background
  // compile, or NO_COMPILER where NVRTC is missing) is not what this test is
  // about.
  TempDir dir;
  useCacheDir(dir.path());
  setenv("DDTC_JIT", "generic", 1);
  resetRuntime();
  const char *cheap[] = {
      "T = indexed([3, 142147483647, 2], [0, 5, 142147483660], double)\n",
      "T = darray(4, 3, [8, 2147483648], [cyclic, cyclic], [2, 2], [2, 2], C, "
      "double)\n",
      "T = darray(4, 3, [8, 2147483647], [cyclic, cyclic], [2, 2], [2, 2], "
      "Fortran, double)\n"};
  for (const char *spec : cheap) {
    ddtc_type t = makeType(spec);
    CHECK(t != nullptr);
    const double t0 = nowMs();
    ddtc_status s = ddtc_type_commit(t);
    const double ms = nowMs() - t0;
    std::printf("commit %.1f ms, %s: %s", ms, ddtc_status_name(s), spec);
    CHECK(s == DDTC_SUCCESS || s == DDTC_ERROR_NO_COMPILER);
    CHECK(ms < 2000);
    ddtc_type_free(&t);
  }
  // 5,000,017 runs per instance, a table of 17 (more than a strided nest
  // point may have) beside a long vector: over the limit.
  ddtc_type t = makeType(
      "T = struct([1, 1], [0, 80000000], [vector(5000000, 1, 2, double), "
      "hindexed([1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1], [0, 3, "
      "7, 10, 14, 17, 21, 24, 28, 31, 35, 38, 42, 45, 49, 52, 56], char)])\n");
  CHECK(t != nullptr);
  CHECK(ddtc_type_commit(t) == DDTC_ERROR_UNSUPPORTED_TYPE);
  CHECK_MSG(std::strstr(ddtc_last_error(), "cannot be planned"), "%s",
            ddtc_last_error());
  ddtc_type_free(&t);
  unsetenv("DDTC_JIT");
  return kPass;
}

/// DDTC_HOST_STAGING_MIN and DDTC_HOST_STAGING_CHUNK: byte counts with K,
/// M or G; 0 turns staging off; what is not understood keeps the default
/// and is reported.
DDTC_TEST("host-staging-settings", hostStagingSettings) {
  struct Case {
    const char *min, *chunk;
    int64_t wantMin, wantChunk;
    bool warns;
  };
  const int64_t dMin = int64_t(16) << 20, dChunk = int64_t(8) << 20;
  const Case cases[] = {
      {nullptr, nullptr, dMin, dChunk, false},
      {"0", "256", 0, 256, false},
      {"3M", "512k", 3 << 20, 512 << 10, false},
      {"1G", "1G", int64_t(1) << 30, int64_t(1) << 30, false},
      {"12345", "4096", 12345, 4096, false},
      {"lots", "255", dMin, dChunk, true},
      {"-1", "2G", dMin, dChunk, true},
      {"16MB", "0", dMin, dChunk, true},
      {"99999999999999999999", "", dMin, dChunk, true},
  };
  for (const Case &c : cases) {
    auto set = [](const char *name, const char *v) {
      if (v)
        setenv(name, v, 1);
      else
        unsetenv(name);
    };
    set("DDTC_HOST_STAGING_MIN", c.min);
    set("DDTC_HOST_STAGING_CHUNK", c.chunk);
    rt::reloadConfig();
    const rt::Config &cfg = rt::config();
    CHECK_MSG(cfg.hostStagingMin == c.wantMin &&
                  cfg.hostStagingChunk == c.wantChunk &&
                  cfg.warnings.empty() == !c.warns,
              "MIN=%s CHUNK=%s: %lld, %lld, warnings '%s'",
              c.min ? c.min : "(unset)", c.chunk ? c.chunk : "(unset)",
              (long long)cfg.hostStagingMin, (long long)cfg.hostStagingChunk,
              cfg.warnings.c_str());
  }
  unsetenv("DDTC_HOST_STAGING_MIN");
  unsetenv("DDTC_HOST_STAGING_CHUNK");
  rt::reloadConfig();
  return kPass;
}

DDTC_TEST("timings", timings) {
  REQUIRE_NVRTC();
  TempDir dir;
  useCacheDir(dir.path());
  // Cold compiles of a few shapes (NVRTC's first compile in a process is
  // slower: it is reported apart).
  const char *specs[] = {
      "a = vector(3, 2, 5, double)\n",
      "b = subarray([64, 64, 64], [8, 60, 60], [1, 2, 2], C, float)\n",
      "c = hvector(3, 5, 17, char)\n",
      "d = struct([1, 1], [0, 12], [int, contiguous(3, int)])\n"};
  std::vector<double> compileMs;
  for (const char *s : specs) {
    ddtc_type t = makeType(s);
    CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
    CHECK(ddtc_type_wait(t) == DDTC_SUCCESS);
    ddtc_kernel_info info = infoOf(t);
    if (info.origin == DDTC_KERNEL_COMPILED) {
      compileMs.push_back(info.compile_ms);
      std::printf("cold compile of %-24s %.1f ms\n", info.shape,
                  info.compile_ms);
    }
    ddtc_type_free(&t);
  }
  // A committed type: commit again.
  ddtc_type t = makeType(specs[0]);
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  const int reps = 20000;
  double t0 = nowMs();
  for (int i = 0; i < reps; ++i)
    ddtc_type_commit(t);
  double recommitUs = (nowMs() - t0) * 1000 / reps;
  ddtc_type_free(&t);
  // New handles whose kernels are in memory: planning plus the lookup.
  std::vector<ddtc_type> types;
  for (int i = 0; i < 2000; ++i)
    types.push_back(makeType(specs[i % 4]));
  t0 = nowMs();
  for (ddtc_type x : types)
    ddtc_type_commit(x);
  double newHandleUs = (nowMs() - t0) * 1000 / types.size();
  for (ddtc_type &x : types)
    ddtc_type_free(&x);
  // The cache lookup alone.
  KernelPlan plan;
  {
    SpecFile f;
    std::string e;
    parseSpec("a = vector(3, 2, 5, double)\n", "t", f, e);
    planKernel(*f.bindings[0].type, plan, e);
  }
  t0 = nowMs();
  for (int i = 0; i < reps; ++i)
    rt::KernelCache::get().acquire(plan, 90, false);
  double lookupUs = (nowMs() - t0) * 1000 / reps;
  // Disk: fresh processes.
  std::vector<std::pair<std::string, std::string>> env = {
      {"DDTC_CACHE_DIR", dir.path()}, {"DDTC_TEST_SPEC", specs[1]}};
  double diskLoad = 1e9, diskCommit = 1e9;
  for (int i = 0; i < 5; ++i) {
    ChildResult r = runChild("child-commit", env);
    CHECK(field(r.output, "origin") == std::to_string(DDTC_KERNEL_DISK));
    diskLoad = std::min(diskLoad, std::stod(field(r.output, "disk_load_ms")));
    diskCommit = std::min(diskCommit, std::stod(field(r.output, "commit_ms")));
  }
  // Large types: a new handle of a tree seen before (in memory), and a new
  // process planning them or reading their plan from disk. The handle's
  // cost should not grow with the tree (its hash is kept in it): the
  // hindexed of 100000 blocks checks that in memory only, its planning in
  // ten new processes would take long.
  struct Large {
    const char *what;
    std::string spec;
    bool newProcesses;
  };
  const Large large[] = {
      {"lower-triangular 4000", lowerTriangularSpec(4000), true},
      {"vector(1000000, 1, 2, double)", "v = vector(1000000, 1, 2, double)\n",
       true},
      {"hindexed of 100000 blocks", randomHIndexed(100000), false}};
  for (const auto &[what, spec, newProcesses] : large) {
    ddtc_type first = makeType(spec);
    CHECK(ddtc_type_commit(first) == DDTC_SUCCESS);
    std::vector<ddtc_type> handles;
    for (int i = 0; i < (newProcesses ? 50 : 10); ++i) // parsing is slow
      handles.push_back(makeType(spec));
    // The median of the commits: this machine may be shared, and one
    // preempted commit would dominate a mean of few.
    std::vector<double> us;
    for (ddtc_type x : handles) {
      t0 = nowMs();
      ddtc_type_commit(x);
      us.push_back((nowMs() - t0) * 1000);
    }
    std::sort(us.begin(), us.end());
    for (ddtc_type &x : handles)
      ddtc_type_free(&x);
    ddtc_type_free(&first);
    std::printf("%-30s new handle of a seen tree: %8.3f us (median of %zu)\n",
                what, us[us.size() / 2], us.size());
    if (!newProcesses)
      continue;
    std::vector<std::pair<std::string, std::string>> childEnv = {
        {"DDTC_CACHE_DIR", dir.path()}, {"DDTC_TEST_SPEC", spec}};
    double planned = 1e9, fromDisk = 1e9;
    for (int i = 0; i < 5; ++i) {
      // Without the plan on disk (as before plans were kept), then with it.
      for (const std::string &f : planEntries(dir.path()))
        unlink(f.c_str());
      ChildResult r = runChild("child-commit", childEnv);
      planned = std::min(planned, std::stod(field(r.output, "commit_ms")));
      r = runChild("child-commit", childEnv);
      CHECK(field(r.output, "status") == "0");
      if (field(r.output, "plan_disk_hits") == "1")
        fromDisk = std::min(fromDisk, std::stod(field(r.output, "commit_ms")));
    }
    std::printf("%-30s new process, planning:    %8.3f ms\n", what, planned);
    if (fromDisk < 1e9)
      std::printf("%-30s new process, plan on disk: %7.3f ms\n", what,
                  fromDisk);
    else
      std::printf("%-30s new process: plan not kept (small enough to "
                  "plan)\n",
                  what);
  }
  std::printf("re-commit of a committed type:          %8.3f us\n", recommitUs);
  std::printf("commit of a new type, kernels in memory: %7.2f us "
              "(planning + lookup)\n",
              newHandleUs);
  std::printf("memory cache lookup alone:              %8.3f us\n", lookupUs);
  std::printf("disk cache read + check, new process:   %8.3f ms\n", diskLoad);
  std::printf("whole commit in a new process (disk):   %8.3f ms\n", diskCommit);
  return kPass;
}

int main(int argc, char **argv) { return runTests(argc, argv); }
