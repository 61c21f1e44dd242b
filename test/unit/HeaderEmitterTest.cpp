//===- HeaderEmitterTest.cpp - The generated header's launches ------------===//
//
// Compiles a generated header (with stand-in images instead of NVRTC's) into
// a program whose CUDA driver functions are recording stubs, as C99 and as
// C++11, runs it over thousands of calls of every type, and checks what it
// launches against computeLaunch: the error, grid, block and every parameter
// word, the kernel, the pointers, the work-unit table, and when modules are
// loaded (once per context, the cubin else the PTX). No GPU is needed; the
// C compilers and <cuda.h> are, else the test is skipped.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/HeaderEmitter.h"
#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace ddtc;

namespace {

const int64_t kMax = std::numeric_limits<int64_t>::max();
// CUresult values (cuda.h is not included here).
const int64_t kInvalidValue = 1;     // CUDA_ERROR_INVALID_VALUE
const int64_t kInvalidContext = 201; // CUDA_ERROR_INVALID_CONTEXT

/// Where <cuda.h> is: $CUDA_HOME/include, the folder found at configure
/// time, /usr/local/cuda/include; empty when none has it.
std::string cudaIncludeDir() {
  std::vector<std::string> dirs;
  if (const char *home = std::getenv("CUDA_HOME"))
    dirs.push_back(std::string(home) + "/include");
#ifdef DDTC_CUDA_INCLUDE_DIR
  dirs.push_back(DDTC_CUDA_INCLUDE_DIR);
#endif
  dirs.push_back("/usr/local/cuda/include");
  for (const std::string &d : dirs) {
    struct stat st;
    if (stat((d + "/cuda.h").c_str(), &st) == 0)
      return d;
  }
  return "";
}

std::string compiler(const char *env, const char *fallback) {
  const char *c = std::getenv(env);
  return c && *c ? c : fallback;
}

/// Runs `cmd`; its output (stdout and stderr) goes to `out`.
int run(const std::string &cmd, std::string &out) {
  out.clear();
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p)
    return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  return pclose(p);
}

struct TestType {
  std::string expr;
  KernelPlan plan;
  std::string prefix;
};

// The recording stubs of the driver functions the header calls, and the
// command loop. Valid C99 and C++11. Handles are small integers: a context
// is its number, a module its load number, a function an index into `names`.
const char *kDriverHead = R"(#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen.h"

static int current_context = 1;
static int fail_cubin = 0;
static int modules_loaded = 0;
static int words_expected = 0;
static char names[64][128];
static int num_names = 0;
static unsigned long long next_alloc = 0x7000000;

CUresult cuCtxGetCurrent(CUcontext *context) {
  *context = (CUcontext)(size_t)current_context;
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  const char *text = (const char *)image;
  if (fail_cubin && strncmp(text, "CUBIN", 5) == 0) {
    printf("loadfail %s\n", text);
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  printf("load %s\n", text);
  *module = (CUmodule)(size_t)++modules_loaded;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  (void)module;
  if (num_names == 64 || strlen(name) >= 128)
    return CUDA_ERROR_NOT_FOUND;
  strcpy(names[num_names], name);
  *function = (CUfunction)(size_t)++num_names;
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  printf("unloadmod %d\n", (int)(size_t)module);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *ptr, size_t bytes) {
  *ptr = (CUdeviceptr)next_alloc;
  next_alloc += 0x100000;
  printf("alloc %llu %llu\n", (unsigned long long)bytes,
         (unsigned long long)*ptr);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  const long long *words = (const long long *)src;
  size_t i;
  printf("htod %llu %llu", (unsigned long long)dst,
         (unsigned long long)(bytes / 8));
  for (i = 0; i < bytes / 8; ++i)
    printf(" %lld", words[i]);
  printf("\n");
  return CUDA_SUCCESS;
}

CUresult cuMemFree(CUdeviceptr ptr) {
  printf("free %llu\n", (unsigned long long)ptr);
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
                        unsigned int gz, unsigned int bx, unsigned int by,
                        unsigned int bz, unsigned int shared, CUstream stream,
                        void **params, void **extra) {
  const long long *words = (const long long *)params[2];
  int i;
  printf("launch %s %u %u %llu %llu %llu %d", names[(size_t)f - 1], gx, bx,
         (unsigned long long)(size_t)*(void **)params[0],
         (unsigned long long)(size_t)*(void **)params[1],
         (unsigned long long)*(CUdeviceptr *)params[3], words_expected);
  for (i = 0; i < words_expected; ++i)
    printf(" %lld", words[i]);
  printf("\n");
  if (gy != 1 || gz != 1 || by != 1 || bz != 1 || shared != 0 ||
      stream != (CUstream)(size_t)0x5000 || extra != NULL)
    printf("badlaunch\n");
  return CUDA_SUCCESS;
}

static void print_config(CUresult r, unsigned int grid, unsigned int block,
                         const long long *words, int n) {
  int i;
  printf("cfg %d %u %u %d", (int)r, grid, block, n);
  for (i = 0; i < n; ++i)
    printf(" %lld", words[i]);
  printf("\n");
}

#define DDTC_TEST_CASE(P)                                                     \
  do {                                                                        \
    P##_params p;                                                             \
    unsigned int grid = 7, block = 7;                                         \
    CUresult r = P##_launch_config(count, lo, hi, max, &grid, &block, &p);    \
    print_config(r, grid, block, (const long long *)&p,                       \
                 (int)(sizeof p / sizeof(long long)));                        \
    grid = 7;                                                                 \
    block = 7;                                                                \
    r = P##_unpack_launch_config(count, lo, hi, max, &grid, &block, &p);      \
    print_config(r, grid, block, (const long long *)&p,                       \
                 (int)(sizeof p / sizeof(long long)));                        \
    words_expected = (int)(sizeof p / sizeof(long long));                     \
    printf("pack %d\n",                                                       \
           (int)P##_pack((const void *)(size_t)0x1000, count, lo, hi,         \
                         (void *)(size_t)0x2000, (CUstream)(size_t)0x5000,    \
                         max));                                               \
    printf("unpack %d\n",                                                     \
           (int)P##_unpack((void *)(size_t)0x3000, count, lo, hi,             \
                           (const void *)(size_t)0x4000,                      \
                           (CUstream)(size_t)0x5000, max));                   \
  } while (0)

#define DDTC_TEST_UNLOAD(P) printf("unload %d\n", (int)P##_unload())

static void run_case(int t, long long count, long long lo, long long hi,
                     int max);
static void unload(int t);

int main(void) {
  char command[32];
  while (scanf("%31s", command) == 1) {
    if (strcmp(command, "case") == 0) {
      int t, max;
      long long count, lo, hi;
      if (scanf("%d %lld %lld %lld %d", &t, &count, &lo, &hi, &max) != 5)
        return 2;
      run_case(t, count, lo, hi, max);
    } else if (strcmp(command, "context") == 0) {
      if (scanf("%d", &current_context) != 1)
        return 2;
    } else if (strcmp(command, "failcubin") == 0) {
      if (scanf("%d", &fail_cubin) != 1)
        return 2;
    } else if (strcmp(command, "unload") == 0) {
      int t;
      if (scanf("%d", &t) != 1)
        return 2;
      unload(t);
    } else {
      return 2;
    }
    printf("end\n");
  }
  return 0;
}
)";

class GeneratedHeader : public ::testing::Test {
protected:
  void SetUp() override {
    include_ = cudaIncludeDir();
    if (include_.empty())
      GTEST_SKIP() << "cuda.h not found (set CUDA_HOME): the generated "
                      "header cannot be compiled";
    char tmpl[] = "/tmp/ddtc-header-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (dir_.empty())
      return;
    if (HasFailure()) {
      std::printf("the header, the program and its input are in %s\n",
                  dir_.c_str());
      return;
    }
    std::string out;
    run("rm -rf '" + dir_ + "'", out);
  }

  /// Writes the header and the driver for `types` and compiles the driver
  /// as C (`cxx` false) or C++; returns the program's path.
  std::string build(const std::vector<TestType> &types, bool cxx) {
    std::vector<HeaderType> header;
    for (const TestType &t : types) {
      HeaderType h;
      h.name = t.prefix;
      h.description = t.expr;
      h.prefix = t.prefix;
      h.plan = t.plan;
      // Stand-ins for NVRTC's output, NUL-terminated so the stub prints them.
      h.cubin = "CUBIN:" + t.prefix + std::string(1, '\0');
      h.ptx = "PTX:" + t.prefix;
      header.push_back(h);
    }
    HeaderOptions options;
    options.guard = "DDTC_TEST_GEN_H";
    options.version = "test";
    options.arch = "sm_90";
    options.ptxArch = "compute_90";
    std::string text, error;
    EXPECT_TRUE(emitHeader(header, options, text, error)) << error;
    std::ofstream(dir_ + "/gen.h") << text;

    std::ostringstream driver;
    driver << kDriverHead
           << "static void run_case(int t, long long count, long long lo,\n"
              "                     long long hi, int max) {\n"
              "  switch (t) {\n";
    for (size_t i = 0; i < types.size(); ++i)
      driver << "  case " << i << ": DDTC_TEST_CASE(" << types[i].prefix
             << "); break;\n";
    driver << "  }\n}\n\nstatic void unload(int t) {\n  switch (t) {\n";
    for (size_t i = 0; i < types.size(); ++i)
      driver << "  case " << i << ": DDTC_TEST_UNLOAD(" << types[i].prefix
             << "); break;\n";
    driver << "  }\n}\n";
    std::ofstream(dir_ + "/driver.c") << driver.str();

    std::string exe = dir_ + (cxx ? "/driver-cxx" : "/driver-c");
    std::string cmd = cxx ? compiler("DDTC_CXX", "c++") + " -std=c++11 -x c++"
                          : compiler("DDTC_CC", "cc") + " -std=c99";
    cmd += " -Wall -Wextra -Werror -O1 -I'" + dir_ + "' -isystem '" + include_ +
           "' '" + dir_ + "/driver.c' -o '" + exe + "'";
    std::string out;
    EXPECT_EQ(run(cmd, out), 0) << cmd << "\n" << out;
    return exe;
  }

  /// Runs the program on `input`; returns its output lines.
  std::vector<std::string> execute(const std::string &exe,
                                   const std::string &input) {
    std::ofstream(dir_ + "/input.txt") << input;
    std::string out;
    EXPECT_EQ(run("'" + exe + "' < '" + dir_ + "/input.txt'", out), 0)
        << out.substr(0, 2000);
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);)
      lines.push_back(l);
    return lines;
  }

  std::string include_, dir_;
};

std::vector<int64_t> numbers(std::istringstream &in) {
  std::vector<int64_t> v;
  for (long long x; in >> x;)
    v.push_back(x);
  return v;
}

struct Case {
  size_t type;
  int64_t count, lo, hi;
  int maxCtas;
};

/// Calls of every kind: whole and partial ranges, ranges cut at and beside
/// the access width, empty and invalid ranges, counts up to the overflow
/// limit, grids capped and not.
std::vector<Case> makeCases(const std::vector<TestType> &types,
                            std::mt19937_64 &rng) {
  std::vector<Case> cases;
  const int caps[] = {0, 0, 1, 2, 7, 1 << 20};
  auto cap = [&] { return caps[rng() % 6]; };
  auto below = [&](int64_t n) {
    return n <= 0 ? 0 : static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
  };
  for (size_t t = 0; t < types.size(); ++t) {
    const KernelPlan &p = types[t].plan;
    const int64_t size = p.layout.size, width = p.width;
    std::vector<int64_t> counts = {0, 1, 2, 3, 17, 1000, int64_t(1) << 20};
    if (size > 0)
      counts.insert(counts.end(), {kMax / size, kMax / size / 3 + 1});
    for (int64_t count : counts) {
      const int64_t total = count * size;
      std::vector<std::pair<int64_t, int64_t>> ranges = {
          {0, total}, {0, 0}, {total, total}};
      for (int i = 0; i < 6; ++i) {
        const int64_t end = total < kMax ? total + 1 : total;
        int64_t a = below(end), b = below(end);
        ranges.push_back({std::min(a, b), std::max(a, b)});
      }
      if (total > 0) {
        int64_t c = below(total / width + 1) * width;
        for (int64_t lo : {c - 1, c, c + 1})
          for (int64_t len :
               {int64_t(1), width - 1, width, width + 1, 3 * width + 1})
            if (lo >= 0 && len <= total - lo)
              ranges.push_back({lo, lo + len});
        ranges.push_back({total - 1, total});
        if (total < kMax)
          ranges.push_back({0, total + 1});
        ranges.push_back({1, 0});
        ranges.push_back({-1, 1});
      }
      for (auto [lo, hi] : ranges)
        cases.push_back({t, count, lo, hi, cap()});
    }
    if (size > 0)
      cases.push_back({t, kMax / size + 1, 0, 0, 0}); // count * size overflows
    cases.push_back({t, -1, 0, 0, 0});
    cases.push_back({t, 1, 0, size, -1});
  }
  return cases;
}

TEST_F(GeneratedHeader, LaunchesMatchComputeLaunch) {
  const char *exprs[] = {
      // Strided family.
      "vector(3, 2, 5, double)",
      "vector(64, 2, 4, double)",
      "hvector(64, 3, 7, char)",
      "hvector(10, 3, 4, char)",
      "subarray([12, 10, 8], [5, 6, 4], [3, 2, 1], C, double)",
      "subarray([12, 10, 8], [5, 6, 4], [3, 2, 1], Fortran, float)",
      "subarray([258, 258, 258], [256, 256, 1], [1, 1, 1], C, double)",
      "hvector(9, 2, -24, double)",
      "resized(0, -40, vector(4, 1, 3, int))",
      "struct([1, 1], [0, 4096], [vector(16, 2, 8, double), "
      "hvector(5, 3, 40, int)])",
      "hvector(6, 4, 8, int)",
      "hvector(64, 8, 36, float)", // gather pack, wide unpack
      "vector(8, 40, 41, double)", // gather, two chunks a thread
      // Window pack (four chunks a thread), run-aligned or wide unpack
      // (one): the unpack has its own grid.
      "hvector(64, 41, 48, char)",
      // Every run at one place modulo 16: the run-aligned unpack's second
      // divisor of slots.
      "resized(0, 3072, hvector(64, 41, 48, char))",
      "hvector(300, 5, 24, float)",
      "double",
      "contiguous(1000, char)",
      "contiguous(0, int)",
      // Records: a few runs per nest point, the strided family.
      "indexed([1, 2, 3, 4, 5, 6, 7, 8], [0, 8, 16, 24, 32, 40, 48, 56], "
      "double)",
      "hindexed([3, 1000, 17, 64], [1, 20, 4003, 5000], char)",
      "hindexed([4000, 100], [8, 10000], double)",
      "resized(0, 24, struct([1, 2, 1], [0, 8, 16], [double, int, char]))",
      "vector(3, 1, 2, MPI_DOUBLE_INT)",
      "struct([1, 3, 1], [0, 13, 40], [char, double, short])",
      // Units family: more than 16 runs per nest point.
      "indexed([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, "
      "18, 19, 20], [0, 20, 40, 60, 80, 100, 120, 140, 160, 180, 200, 220, "
      "240, 260, 280, 300, 320, 340, 360, 380], double)",
      "hindexed([3, 1000, 17, 64, 5, 9, 33, 2, 100, 7, 1, 15, 48, 3, 70, 11, "
      "6], [1, 1020, 4003, 5000, 5100, 5111, 5130, 5170, 5180, 5300, 5310, "
      "5320, 5340, 5400, 5410, 5500, 5520], char)",
      "hindexed([4000, 100, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "
      "[8, 10000, 10900, 10920, 10940, 10960, 10980, 11000, 11020, 11040, "
      "11060, 11080, 11100, 11120, 11140, 11160, 11180], double)",
      "indexed([13, 50, 9, 100, 37, 64, 1, 2, 3, 5, 8, 13, 21, 1, 2, 3, 5], "
      "[1, 20, 90, 120, 250, 300, 370, 373, 377, 383, 390, 400, 415, 440, "
      "443, 447, 453], int)",
      // Transpose tiles: columns of a matrix, with a dimension outside
      // them and one between them and the rows.
      "contiguous(37, resized(0, 8, vector(45, 1, 37, double)))",
      "hvector(3, 1, 8000, contiguous(33, resized(0, 2, vector(40, 1, 66, "
      "short))))",
      "contiguous(50, resized(0, 4, hvector(3, 1, 4400, vector(21, 1, 50, "
      "float))))",
  };
  std::vector<TestType> types;
  int strided = 0, units = 0, tiles = 0, chunks = 0;
  for (const char *e : exprs) {
    SpecFile spec;
    std::string error;
    ASSERT_TRUE(parseSpec(std::string("t = ") + e + "\n", "t.ddt", spec, error))
        << error;
    TestType t;
    t.expr = e;
    ASSERT_TRUE(planKernel(*spec.bindings.back().type, t.plan, error)) << error;
    t.prefix = "t" + std::to_string(types.size());
    (t.plan.family == KernelFamily::Units ? units : strided)++;
    tiles += t.plan.tileDim >= 0;
    chunks += unitsByChunks(t.plan);
    types.push_back(t);
  }
  // A Units plan without units (an empty layout the passes did not see).
  TestType none;
  none.expr = "an empty units plan";
  none.plan = makeInitialPlan(CanonicalLayout());
  none.prefix = "t" + std::to_string(types.size());
  ASSERT_EQ(none.plan.family, KernelFamily::Units);
  types.push_back(none);
  ASSERT_GE(strided, 10);
  ASSERT_GE(units, 4);
  // Both units designs: a warp a unit, and a chunk a thread (short units).
  ASSERT_GE(chunks, 1);
  ASSERT_LT(chunks, units);
  ASSERT_EQ(tiles, 3);

  std::mt19937_64 rng(7);
  std::vector<Case> cases = makeCases(types, rng);
  std::ostringstream input;
  for (const Case &c : cases)
    input << "case " << c.type << " " << c.count << " " << c.lo << " " << c.hi
          << " " << c.maxCtas << "\n";

  for (bool cxx : {false, true}) {
    SCOPED_TRACE(cxx ? "compiled as C++11" : "compiled as C99");
    std::string exe = build(types, cxx);
    if (HasFailure())
      return;
    std::vector<std::string> lines = execute(exe, input.str());
    size_t at = 0, launches = 0, ownUnpackGrids = 0;
    std::vector<int> loads(types.size(), 0);
    std::map<size_t, uint64_t> unitTables; // type -> device address
    for (const Case &c : cases) {
      const TestType &t = types[c.type];
      SCOPED_TRACE(t.expr + ": count " + std::to_string(c.count) + ", [" +
                   std::to_string(c.lo) + ", " + std::to_string(c.hi) +
                   "), max_ctas " + std::to_string(c.maxCtas));
      const LaunchConfig wants[2] = {
          computeLaunch(t.plan, c.count, c.lo, c.hi, c.maxCtas, true),
          computeLaunch(t.plan, c.count, c.lo, c.hi, c.maxCtas, false)};
      const bool invalid = !wants[0].error.empty() || c.maxCtas < 0;
      std::string word;
      // The launch_config and unpack_launch_config lines.
      for (const LaunchConfig &want : wants) {
        ASSERT_LT(at, lines.size());
        std::istringstream cfg(lines[at++]);
        cfg >> word;
        ASSERT_EQ(word, "cfg");
        std::vector<int64_t> got = numbers(cfg);
        ASSERT_GE(got.size(), 4u);
        const int64_t rc = got[0], grid = got[1], block = got[2];
        std::vector<int64_t> words(got.begin() + 4, got.end());
        ASSERT_EQ(static_cast<int64_t>(words.size()), got[3]);
        if (invalid) {
          EXPECT_EQ(rc, kInvalidValue);
        } else {
          ASSERT_EQ(rc, 0);
          EXPECT_EQ(grid, want.grid);
          EXPECT_EQ(block, want.block);
          EXPECT_EQ(words, want.params);
        }
      }
      if (wants[0].grid != wants[1].grid)
        ++ownUnpackGrids;
      // The pack and the unpack: the module loaded on first use, one launch
      // each when something moves.
      for (const char *op : {"pack", "unpack"}) {
        const LaunchConfig &want = wants[std::string(op) == "pack" ? 0 : 1];
        std::vector<std::string> launched;
        for (;;) {
          ASSERT_LT(at, lines.size());
          std::istringstream ev(lines[at++]);
          ev >> word;
          if (word == op) {
            int64_t r;
            ev >> r;
            EXPECT_EQ(r, invalid ? kInvalidValue : 0);
            break;
          }
          if (word == "load") {
            std::string image;
            ev >> image;
            EXPECT_EQ(image, "CUBIN:" + t.prefix);
            ++loads[c.type];
          } else if (word == "alloc") {
            uint64_t bytes, ptr;
            ev >> bytes >> ptr;
            EXPECT_EQ(bytes, t.plan.units.size() * 32);
            unitTables[c.type] = ptr;
          } else if (word == "htod") {
            uint64_t ptr;
            ev >> ptr;
            EXPECT_EQ(ptr, unitTables[c.type]);
            std::vector<int64_t> table = numbers(ev);
            ASSERT_FALSE(table.empty());
            EXPECT_EQ(static_cast<size_t>(table[0]), table.size() - 1);
            EXPECT_EQ(std::vector<int64_t>(table.begin() + 1, table.end()),
                      encodeUnitTable(t.plan));
          } else if (word == "launch") {
            launched.push_back(lines[at - 1]);
            std::string name;
            ev >> name;
            EXPECT_EQ(name, t.prefix + "_" + op);
            std::vector<int64_t> v = numbers(ev);
            ASSERT_GE(v.size(), 6u);
            EXPECT_EQ(v[0], want.grid);
            EXPECT_EQ(v[1], want.block);
            EXPECT_EQ(v[2], std::string(op) == "pack" ? 0x1000 : 0x3000);
            EXPECT_EQ(v[3], std::string(op) == "pack" ? 0x2000 : 0x4000);
            if (want.takesUnits && !t.plan.units.empty())
              EXPECT_EQ(static_cast<uint64_t>(v[4]), unitTables[c.type]);
            else
              EXPECT_EQ(v[4], 0);
            EXPECT_EQ(std::vector<int64_t>(v.begin() + 6, v.end()),
                      want.params);
            ++launches;
          } else {
            ADD_FAILURE() << "unexpected: " << lines[at - 1];
          }
        }
        EXPECT_EQ(launched.size(), !invalid && want.grid > 0 ? 1u : 0u);
      }
      ASSERT_LT(at, lines.size());
      ASSERT_EQ(lines[at++], "end");
    }
    EXPECT_EQ(at, lines.size());
    EXPECT_GT(launches, cases.size());
    EXPECT_GT(ownUnpackGrids, 0u);
    for (size_t t = 0; t < types.size(); ++t)
      EXPECT_LE(loads[t], 1) << types[t].expr << ": loaded more than once";
  }
}

TEST_F(GeneratedHeader, ModulesPerContextAndPTXFallback) {
  std::vector<TestType> types;
  for (const char *e :
       {"vector(64, 2, 4, double)",
        "hindexed([3, 1000, 17, 64, 5, 9, 33, 2, 100, 7, 1, 15, 48, 3, 70, "
        "11, 6], [1, 1020, 4003, 5000, 5100, 5111, 5130, 5170, 5180, 5300, "
        "5310, 5320, 5340, 5400, 5410, 5500, 5520], char)"}) {
    SpecFile spec;
    std::string error;
    ASSERT_TRUE(
        parseSpec(std::string("t = ") + e + "\n", "t.ddt", spec, error));
    TestType t;
    t.expr = e;
    ASSERT_TRUE(planKernel(*spec.bindings.back().type, t.plan, error)) << error;
    t.prefix = "k" + std::to_string(types.size());
    types.push_back(t);
  }
  ASSERT_EQ(types[1].plan.family, KernelFamily::Units);
  std::string exe = build(types, false);
  if (HasFailure())
    return;
  auto call = [&](int t) {
    return "case " + std::to_string(t) + " 1 0 " +
           std::to_string(types[t].plan.layout.size) + " 0\n";
  };
  // Context 1 loads the cubins; context 2, where the cubin "does not load",
  // the PTX; unloading frees the module and the table and the next call
  // loads again; without a context the calls fail.
  std::string input = call(0) + call(1) + call(0) + call(1) +
                      "failcubin 1\ncontext 2\n" + call(0) + call(1) + call(1) +
                      "unload 1\nunload 1\n" + call(1) + "context 0\n" +
                      call(0) + "unload 0\n";
  std::vector<std::string> lines = execute(exe, input);
  std::string events;
  for (const std::string &l : lines) {
    std::istringstream in(l);
    std::string w;
    in >> w;
    if (w == "load" || w == "loadfail" || w == "alloc" || w == "free" ||
        w == "unloadmod" || w == "unload" || (w == "pack" && l != "pack 0"))
      events += l.substr(0, l.find(' ', l.find(' ') + 1)) + "\n";
  }
  // The stub allocates at 0x7000000, 0x7100000, ...; a table is 32 bytes a
  // unit; modules are numbered in load order.
  const std::string alloc =
      "alloc " + std::to_string(types[1].plan.units.size() * 32) + "\n";
  EXPECT_EQ(events, "load CUBIN:k0\n"
                    "load CUBIN:k1\n" +
                        alloc +
                        "loadfail CUBIN:k0\n"
                        "load PTX:k0\n"
                        "loadfail CUBIN:k1\n"
                        "load PTX:k1\n" +
                        alloc + "free " + std::to_string(0x7100000) +
                        "\n"
                        "unloadmod 4\n"
                        "unload 0\n"
                        "unload 0\n"
                        "loadfail CUBIN:k1\n"
                        "load PTX:k1\n" +
                        alloc + "pack " + std::to_string(kInvalidContext) +
                        "\n"
                        "unload 0\n");
}

KernelPlan planOf(const std::string &expr) {
  SpecFile spec;
  std::string error;
  if (!parseSpec("t = " + expr + "\n", "t.ddt", spec, error)) {
    ADD_FAILURE() << error;
    return KernelPlan();
  }
  KernelPlan p;
  EXPECT_TRUE(planKernel(*spec.bindings.back().type, p, error)) << error;
  return p;
}

TEST(DescribeParams, PerCallWordsAndConstants) {
  for (const char *e :
       {"subarray([12, 10, 8], [5, 6, 4], [3, 2, 1], C, double)",
        "struct([1, 1], [0, 4096], [vector(16, 2, 8, double), "
        "hvector(5, 3, 40, int)])",
        "hindexed([3, 1000, 17, 64], [1, 20, 4003, 5000], "
        "char)"}) {
    SCOPED_TRACE(e);
    KernelPlan p = planOf(e);
    std::vector<ParamMember> members = describeParams(p);
    LaunchConfig cfg = computeLaunch(p, 5, 3, 4 * p.layout.size + 1, 0);
    ASSERT_EQ(members.size(), cfg.params.size());
    std::vector<std::string> perCall;
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i].perCall)
        perCall.push_back(members[i].name);
      else
        EXPECT_EQ(members[i].value, cfg.params[i]) << members[i].name;
    }
    if (p.family == KernelFamily::Units)
      EXPECT_EQ(perCall, (std::vector<std::string>{"lo", "hi", "first_item",
                                                   "num_items"}));
    else if (stridedLaunchExtraChunk(p)) // Gather: the source bounds too
      EXPECT_EQ(perCall,
                (std::vector<std::string>{"lo", "hi", "chunk_begin",
                                          "chunk_end", "src_lo", "src_hi"}));
    else
      EXPECT_EQ(perCall, (std::vector<std::string>{"lo", "hi", "chunk_begin",
                                                   "chunk_end"}));
  }
}

TEST(HeaderEmitter, RejectsCollidingNames) {
  auto header = [](std::vector<std::string> prefixes, std::string &error) {
    std::vector<HeaderType> types;
    for (const std::string &p : prefixes) {
      HeaderType t;
      t.name = t.prefix = p;
      t.plan = planOf("double");
      t.cubin = "c";
      t.ptx = "p";
      types.push_back(t);
    }
    HeaderOptions options;
    options.guard = "G_H";
    std::string out;
    return emitHeader(types, options, out, error);
  };
  std::string error;
  EXPECT_TRUE(header({"a", "b"}, error)) << error;
  EXPECT_FALSE(header({"a", "a"}, error));
  EXPECT_NE(error.find("'a_size' twice"), std::string::npos) << error;
  EXPECT_FALSE(header({"x", "x_true"}, error)); // x_true_lb
  EXPECT_FALSE(header({"ddtc_generated"}, error));
  EXPECT_FALSE(header({"9lives"}, error));
  EXPECT_NE(error.find("not a C identifier"), std::string::npos) << error;
}

} // namespace
