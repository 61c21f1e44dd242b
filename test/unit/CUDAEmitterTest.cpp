//===- CUDAEmitterTest.cpp - CUDA emitter, launch figures, NVRTC ----------===//

#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Target/CUDA/Explain.h"
#include "ddtc/Target/CUDA/NVRTCCompiler.h"
#include "ddtc/Target/CUDA/NestKernel.h"
#include "ddtc/Target/CUDA/RecordPeriodKernel.h"
#include "ddtc/Target/CUDA/RecordWindowKernel.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"
#include "ddtc/Testing/RandomDatatype.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>

using namespace ddtc;

namespace {

TypeRef parse(const std::string &expr) {
  SpecFile spec;
  std::string error;
  if (!parseSpec("t = " + expr + "\n", "test.ddt", spec, error)) {
    ADD_FAILURE() << error;
    return nullptr;
  }
  return spec.bindings.back().type;
}

KernelPlan plan(const std::string &expr,
                const PlanOptions &options = PlanOptions()) {
  KernelPlan p;
  std::string error;
  EXPECT_TRUE(planKernel(*parse(expr), p, error, options)) << error;
  return p;
}

/// The plan of `expr` with every record (a few runs per nest point) in the
/// units family, as a table of more than kMaxPointRuns runs would be.
KernelPlan planUnits(const std::string &expr) {
  PlanOptions options;
  options.maxPointRuns = 1;
  return plan(expr, options);
}

size_t countOf(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

/// The members of the emitted parameter struct.
size_t structMembers(const EmittedKernels &k) {
  size_t begin = k.source.find("struct " + k.paramsName + " {");
  size_t end = k.source.find("};", begin);
  return countOf(k.source.substr(begin, end - begin), "long long ");
}

TEST(MagicDivisor, MatchesDivision) {
  std::mt19937_64 rng(42);
  const int64_t max = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> divisors = {1,
                                   2,
                                   3,
                                   5,
                                   7,
                                   8,
                                   10,
                                   16,
                                   24,
                                   1000,
                                   4096,
                                   65535,
                                   65536,
                                   65537,
                                   (int64_t(1) << 31) - 1,
                                   int64_t(1) << 32,
                                   (int64_t(1) << 32) + 1,
                                   int64_t(1) << 62,
                                   (int64_t(1) << 62) + 1,
                                   max - 1,
                                   max};
  for (int i = 0; i < 200; ++i)
    divisors.push_back(1 + static_cast<int64_t>(rng() >> (1 + rng() % 63)));
  for (int64_t d : divisors) {
    MagicDivisor m = makeMagicDivisor(d);
    std::vector<int64_t> numerators = {
        0, 1, d - 1, d, max, max - 1, max / d * d, max / d * d - 1};
    if (d < max / 3)
      numerators.insert(numerators.end(), {d + 1, 2 * d - 1, 2 * d, 3 * d - 1});
    for (int i = 0; i < 200; ++i)
      numerators.push_back(static_cast<int64_t>(rng() >> (1 + rng() % 63)));
    for (int64_t n : numerators) {
      if (n < 0)
        continue;
      ASSERT_EQ(applyMagicDivisor(n, m), n / d) << n << " / " << d;
    }
  }
}

TEST(CUDAEmitter, SameShapeSameSource) {
  // Two vectors of 16-byte runs: different counts, strides and extents.
  KernelPlan a = plan("vector(10, 2, 4, double)");
  KernelPlan b = plan("vector(1000, 2, 6, double)");
  ASSERT_EQ(a.family, KernelFamily::Strided);
  ASSERT_EQ(a.width, 16);
  EXPECT_EQ(kernelShapeKey(a), kernelShapeKey(b));
  EmittedKernels ka = emitCUDA(a, "k"), kb = emitCUDA(b, "k");
  EXPECT_EQ(ka.source, kb.source);
  EXPECT_NE(ka.banner, kb.banner); // the banner names the values
  EXPECT_NE(ka.text(), kb.text());

  // Two 3-d subarrays of doubles.
  KernelPlan c =
      plan("subarray([16, 16, 16], [4, 6, 8], [1, 2, 2], C, double)");
  KernelPlan d =
      plan("subarray([32, 20, 24], [3, 5, 10], [2, 1, 0], C, double)");
  EXPECT_EQ(kernelShapeKey(c), kernelShapeKey(d));
  EXPECT_EQ(emitCUDA(c, "k").source, emitCUDA(d, "k").source);
  EXPECT_NE(emitCUDA(a, "k").source, emitCUDA(c, "k").source);

  // Two irregular types with different unit tables.
  KernelPlan e = planUnits("indexed([1, 2, 3, 4], [0, 4, 8, 12], double)");
  KernelPlan f = planUnits("indexed([5, 1, 7], [0, 10, 30], double)");
  ASSERT_EQ(e.family, KernelFamily::Units);
  ASSERT_EQ(e.width, f.width);
  EXPECT_NE(e.units, f.units);
  EXPECT_EQ(emitCUDA(e, "k").source, emitCUDA(f, "k").source);
}

TEST(CUDAEmitter, ShapeDifferencesChangeTheSource) {
  KernelPlan w16 = plan("vector(10, 2, 4, double)");
  KernelPlan w8 = plan("vector(10, 1, 3, double)");
  ASSERT_EQ(w8.width, 8);
  EXPECT_NE(kernelShapeKey(w16), kernelShapeKey(w8));
  EXPECT_NE(emitCUDA(w16, "k").source, emitCUDA(w8, "k").source);
  EXPECT_NE(emitCUDA(w16, "k").source, emitCUDA(w16, "other").source);
}

TEST(CUDAEmitter, SourceIsSelfContained) {
  for (const char *expr :
       {"vector(10, 2, 4, double)", "hvector(64, 3, 7, char)",
        "indexed([1, 2, 3], [0, 5, 11], int)", "contiguous(0, double)",
        "struct([1, 1], [0, 20], [vector(3, 1, 2, double), vector(4, 1, 3, "
        "int)])",
        "indexed([40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, "
        "55, 56, 57, 58, 59], [0, 64, 128, 192, 256, 320, 384, 448, 512, 576, "
        "640, 704, 768, 832, 896, 960, 1024, 1088, 1152, 1216], double)",
        "indexed([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3], [0, 4, "
        "8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68], "
        "int)"}) {
    KernelPlan p = plan(expr);
    EmittedKernels k = emitCUDA(p, "ddtc_t");
    SCOPED_TRACE(expr);
    EXPECT_EQ(k.source.find("#include"), std::string::npos);
    EXPECT_EQ(k.packName, "ddtc_t_pack");
    EXPECT_EQ(k.unpackName, "ddtc_t_unpack");
    // Units kernels of a warp a unit bound their registers (the pack 4
    // blocks of 256 per SM, the unpack 6); the period kernels their block.
    const bool warpUnits = p.family == KernelFamily::Units && !unitsByChunks(p);
    auto bounds = [&](const char *units) -> std::string {
      return warpUnits               ? units
             : isRecordPeriodPlan(p) ? "__launch_bounds__(256) "
                                     : "";
    };
    EXPECT_NE(k.source.find("extern \"C\" __global__ void " +
                            bounds("__launch_bounds__(256, 4) ") +
                            "ddtc_t_pack("),
              std::string::npos);
    EXPECT_NE(k.source.find("extern \"C\" __global__ void " +
                            bounds("__launch_bounds__(256, 6) ") +
                            "ddtc_t_unpack("),
              std::string::npos);
    EXPECT_EQ(k.takesUnits, p.family == KernelFamily::Units);
    EXPECT_NE(k.banner.find(describeLayout(p.layout).substr(0, 20)),
              std::string::npos);
    // The struct has one member per parameter word.
    EXPECT_EQ(structMembers(k), computeLaunch(p, 1, 0, 0, 0).params.size());
  }
}

TEST(CUDAEmitter, StridedVariants) {
  struct Case {
    const char *type;
    StridedVariant pack, unpack;
    const char *packStore; // a line of the pack kernel's copy
    int64_t batch = 1;     // chunks a pack thread (stridedBatch)
  };
  const StridedVariant W = StridedVariant::Wide, G = StridedVariant::Gather,
                       R = StridedVariant::RunAligned,
                       Win = StridedVariant::Window;
  const char *wide16 = "*(uint4 *)(packed + (q - p.lo)) = *(const uint4 *)";
  const char *wide8 = "*(uint2 *)(packed + (q - p.lo)) = *(const uint2 *)";
  const char *gather = "ddtc_store_chunk(packed + (cq - p.lo), r, f0, f)";
  const char *batchedGather =
      "*(ulonglong2 *)(packed + (g * 16 - pa - p.lo)) = rr[u]";
  const char *window = "*(ulonglong2 *)(packed + (q0 - p.lo)) = r;";
  for (const Case &c : std::vector<Case>{
           // Width 16: wide both ways.
           {"vector(10, 2, 4, double)", W, W, wide16},
           // Runs of one or two accesses: wide both ways, but for runs of
           // one or two 4-byte words: gather pack (word pieces), wide
           // unpack.
           {"vector(10, 1, 3, double)", W, W, wide8},
           {"vector(10, 2, 3, float)", G, W, gather},
           {"vector(10, 1, 3, float)", G, W, gather},
           // Narrow width, runs shorter than kWideUnpackMaxRun: gather
           // pack, wide unpack; from it on gather unpack.
           {"hvector(10, 8, 72, float)", G, W, gather},
           {"hvector(10, 14, 100, float)", G, W, gather},
           {"hvector(10, 16, 100, float)", G, G, gather},
           // Narrow width, long runs whose place modulo 16 drifts: gather
           // pack; gather unpack for runs of words, however long;
           // run-aligned unpack for byte-wide runs of 32 bytes or more.
           // Gather both ways with runs of kBatchMinRun bytes or more: two
           // chunks a thread.
           {"vector(10, 40, 45, double)", G, G, batchedGather, 2},
           {"vector(10, 512, 513, double)", G, G, batchedGather, 2},
           {"vector(10, 15, 20, double)", G, G, gather},
           {"hvector(10, 201, 240, char)", G, R, gather},
           // Byte path, long runs: gather both ways, two chunks a thread.
           {"hvector(10, 201, 245, char)", G, G, batchedGather, 2},
           // The same with a uniform phase: gather both ways.
           {"hindexed([1], [4], vector(10, 40, 44, double))", G, G,
            batchedGather, 2},
           // Dense records (runs of 16 to 512 bytes, gaps below 32 bytes
           // and half a run): the window pack, four chunks a thread; the
           // unpack as without it (run-aligned for byte-wide runs, gather
           // for runs of words, wide for short ones).
           {"hvector(10, 41, 48, char)", Win, R, window, 4},
           {"hvector(10, 201, 208, char)", Win, R, window, 4},
           {"vector(10, 15, 16, double)", Win, G, window, 4},
           // ... but runs of 8-byte words of 128 bytes or more: the
           // batched gather pack.
           {"vector(10, 40, 41, double)", G, G, batchedGather, 2},
           {"hvector(10, 5, 24, float)", Win, W, window, 4},
           // Gaps of a sector or more than half a run, runs over 512
           // bytes: no window.
           {"hvector(10, 41, 80, char)", G, R, gather},
           {"hvector(10, 41, 62, char)", G, R, gather},
           // Drifting but short runs: gather both ways.
           {"hvector(10, 31, 48, char)", G, G, gather},
           // Byte path or width 1: gather both ways.
           {"hvector(10, 3, 7, char)", G, G, gather},
           // Records of bytes (runs in order): run-aligned unpack up to 4
           // runs a point, gather from 5; records of words: wide.
           {"resized(0, 48, struct([1, 1, 1], [0, 36, 40], [double, int, "
            "char]))",
            G, R, gather},
           {"resized(0, 40, struct([1, 1, 1, 1, 1], [0, 4, 8, 12, 16], "
            "[char, char, char, char, char]))",
            G, G, gather},
           {"resized(0, 48, struct([2, 1], [0, 36], [float, int]))", G, W,
            gather},
       }) {
    KernelPlan p = plan(c.type);
    ASSERT_EQ(p.family, KernelFamily::Strided) << c.type;
    EXPECT_EQ(stridedVariant(p, true), c.pack) << c.type;
    EXPECT_EQ(stridedVariant(p, false), c.unpack) << c.type;
    EmittedKernels k = emitCUDA(p, "k");
    EXPECT_NE(k.source.find(c.packStore), std::string::npos) << c.type;
    // The launch counts the pack kernel's chunks.
    LaunchConfig cfg = computeLaunch(p, 2, 0, 2 * p.layout.size, 0, true);
    LaunchConfig unpackCfg =
        computeLaunch(p, 2, 0, 2 * p.layout.size, 0, false);
    EXPECT_EQ(unpackCfg.params, cfg.params) << c.type;
    const int64_t bytes = c.pack == W ? p.width : 16;
    EXPECT_EQ(stridedLaunchChunkBytes(p), bytes) << c.type;
    const int64_t chunks =
        (2 * p.layout.size + bytes - 1) / bytes + (c.pack != W ? 1 : 0);
    std::vector<ParamMember> members = describeParams(p);
    for (size_t i = 0; i < members.size(); ++i) {
      // Braces: EXPECT_EQ expands to an if/else of its own.
      if (members[i].name == "chunk_end") {
        EXPECT_EQ(cfg.params[i], chunks) << c.type;
      }
    }
    EXPECT_EQ(stridedBatch(p, true), c.batch) << c.type;
    const int64_t threads = (chunks + c.batch - 1) / c.batch;
    EXPECT_EQ(cfg.grid, (threads + cfg.block - 1) / cfg.block) << c.type;
    // The unpack takes one chunk a thread after a window pack, as many as
    // the pack otherwise.
    const int64_t unpackBatch = c.pack == Win ? 1 : c.batch;
    EXPECT_EQ(stridedBatch(p, false), unpackBatch) << c.type;
    EXPECT_EQ(unpackCfg.grid,
              ((chunks + unpackBatch - 1) / unpackBatch + cfg.block - 1) /
                  cfg.block)
        << c.type;
  }
}

TEST(CUDAEmitter, ShortWordRuns) {
  // Runs of one or two 4-byte words: their words loaded a chunk at a time,
  // named in the shape key.
  for (const char *t : {"vector(10, 1, 3, float)", "vector(10, 2, 3, float)",
                        "hvector(7, 1, 400, vector(5, 1, 3, float))"}) {
    KernelPlan p = plan(t);
    EXPECT_TRUE(shortWordRuns(p)) << t;
    EXPECT_NE(kernelShapeKey(p).find(".short."), std::string::npos) << t;
    EXPECT_NE(emitCUDA(p, "k").source.find("(len == 4 || len == 8)"),
              std::string::npos)
        << t;
  }
  // Longer runs, 8-byte words, a byte path.
  for (const char *t : {"hvector(10, 16, 68, float)", "vector(10, 1, 3, double)",
                        "hvector(10, 3, 7, char)"}) {
    KernelPlan p = plan(t);
    EXPECT_FALSE(shortWordRuns(p)) << t;
    EXPECT_EQ(kernelShapeKey(p).find(".short."), std::string::npos) << t;
    EXPECT_EQ(emitCUDA(p, "k").source.find("(len == 4 || len == 8)"),
              std::string::npos)
        << t;
  }
}

TEST(TileKernel, ChosenEmittedAndLaunched) {
  const char *expr =
      "contiguous(4096, resized(0, 8, vector(4096, 1, 4096, double)))";
  KernelPlan p = plan(expr);
  ASSERT_EQ(p.family, KernelFamily::Strided);
  ASSERT_EQ(p.tileDim, 0);
  EXPECT_EQ(kernelShapeKey(p), "tile.w8.e8.d2.t0");
  EmittedKernels k = emitCUDA(p, "k");
  EXPECT_EQ(countOf(k.source, "__syncthreads();"), 4u);
  EXPECT_NE(k.source.find("__shared__ uint2 tile[32][33];"),
            std::string::npos);
  EXPECT_EQ(structMembers(k), describeParams(p).size());
  // 128 x 128 tiles; a band is 32 columns of 4096 doubles, 1 MiB packed.
  const int64_t size = p.layout.size, band = int64_t(1) << 20;
  EXPECT_EQ(computeLaunch(p, 1, 0, size, 0).grid, 128 * 128);
  EXPECT_EQ(computeLaunch(p, 1, band + 8, 2 * band - 8, 0).grid, 128);
  EXPECT_EQ(computeLaunch(p, 1, band - 8, band + 8, 0).grid, 256);
  // The last band of one instance and the first of the next.
  EXPECT_EQ(computeLaunch(p, 2, size - 8, size + 8, 0).grid, 256);
  EXPECT_EQ(computeLaunch(p, 2, 0, 2 * size, 7).grid, 7);
  EXPECT_EQ(computeLaunch(p, 1, 5, 5, 0).grid, 0);

  // The switch the runtime's DDTC_TILES=0 sets.
  PlanOptions off;
  off.tiles = false;
  KernelPlan strided;
  std::string error;
  ASSERT_TRUE(planKernel(*parse(expr), strided, error, off)) << error;
  EXPECT_EQ(strided.tileDim, -1);
  EXPECT_EQ(kernelShapeKey(strided).rfind("strided.", 0), 0u);

  // Not transposing: rows (the innermost dimension is the close one), a
  // run of several elements, a layout of two segments.
  for (const char *other :
       {"vector(64, 1, 2, double)", "subarray([64, 64], [8, 64], [0, 0], C, "
                                    "double)",
        "contiguous(64, resized(0, 8, vector(64, 2, 64, double)))",
        "struct([1, 1], [0, 100000], [contiguous(64, resized(0, 8, "
        "vector(64, 1, 64, double))), int])"}) {
    EXPECT_EQ(plan(other).tileDim, -1) << other;
  }
}

TEST(ComputeLaunch, StridedRanges) {
  KernelPlan p = plan("vector(100, 2, 4, double)"); // 1600 bytes, width 16
  ASSERT_EQ(p.family, KernelFamily::Strided);
  LaunchConfig all = computeLaunch(p, 3, 0, 4800, 0);
  EXPECT_TRUE(all.error.empty());
  EXPECT_EQ(all.block, p.threadsPerBlock);
  // Width 16, wide pack: one thread per 16-byte chunk.
  ASSERT_EQ(stridedVariant(p, true), StridedVariant::Wide);
  EXPECT_EQ(all.grid, (4800 / 16 + all.block - 1) / all.block);
  EXPECT_EQ(all.params[0], 0);
  EXPECT_EQ(all.params[1], 4800);

  LaunchConfig capped = computeLaunch(p, 3, 0, 4800, 1);
  EXPECT_EQ(capped.grid, 1);
  EXPECT_EQ(capped.params, all.params);

  LaunchConfig empty = computeLaunch(p, 3, 100, 100, 0);
  EXPECT_TRUE(empty.error.empty());
  EXPECT_EQ(empty.grid, 0);

  LaunchConfig bad = computeLaunch(p, 3, 0, 4801, 0);
  EXPECT_FALSE(bad.error.empty());
  EXPECT_EQ(bad.grid, 0);
  EXPECT_FALSE(computeLaunch(p, 3, 10, 5, 0).error.empty());
  EXPECT_FALSE(computeLaunch(p, -1, 0, 0, 0).error.empty());
  EXPECT_FALSE(computeLaunch(p, std::numeric_limits<int64_t>::max(), 0, 0, 0)
                   .error.empty());

  // The same plan's parameter words only change in their values.
  EXPECT_EQ(computeLaunch(p, 1, 5, 37, 0).params.size(), all.params.size());
}

/// The parameter struct of every plan of random types fits the 32,764
/// bytes of kernel parameters of CUDA 12.1 and later, and a plan with
/// records, whose runs per point are bounded in all its segments, stays
/// small.
TEST(ComputeLaunch, ParametersFitTheKernelLimit) {
  std::mt19937_64 rng(99);
  RandomDatatypeOptions options;
  size_t largest = 0, largestRecords = 0;
  int records = 0;
  for (int i = 0; i < 2000; ++i) {
    RandomDatatypeCase c = generateRandomDatatype(rng, options);
    KernelPlan p;
    std::string error;
    if (!planKernel(*c.type, p, error))
      continue;
    const size_t words = describeParams(p).size();
    EXPECT_LE(words * 8, 32764u) << printSpecExpr(*c.type);
    if (p.family == KernelFamily::Strided) {
      EXPECT_LE(p.layout.segments.size(), size_t(kMaxStridedSegments))
          << printSpecExpr(*c.type);
    }
    largest = std::max(largest, words);
    if (p.family == KernelFamily::Strided && hasRecords(p.layout)) {
      ++records;
      largestRecords = std::max(largestRecords, words);
      // 16 runs in all: 3 words each, and at most 16 segments.
      EXPECT_LE(words, 16u * 3 + 16 * 8 + 16) << printSpecExpr(*c.type);
    }
  }
  EXPECT_GT(records, 100);
  std::printf("largest parameter struct: %zu words; with records: %zu\n",
              largest, largestRecords);
}

TEST(ComputeLaunch, UnitsItemsCoverTheRange) {
  KernelPlan p =
      planUnits("indexed([1, 2, 3, 40, 5], [0, 4, 8, 16, 80], double)");
  ASSERT_EQ(p.family, KernelFamily::Units);
  const int64_t size = p.layout.size, nu = static_cast<int64_t>(p.units.size());
  std::vector<int64_t> table = encodeUnitTable(p);
  ASSERT_EQ(table.size(), p.units.size() * 4);
  // Locate first_item and num_items by name in the emitted struct.
  EmittedKernels k = emitCUDA(p, "k");
  size_t firstAt = 0, numAt = 0, i = 0;
  size_t pos = k.source.find("struct k_params {");
  for (size_t at = k.source.find("long long ", pos);
       at != std::string::npos && at < k.source.find("};", pos);
       at = k.source.find("long long ", at + 1), ++i) {
    std::string name =
        k.source.substr(at + 10, k.source.find(';', at) - at - 10);
    if (name == "first_item")
      firstAt = i;
    if (name == "num_items")
      numAt = i;
  }
  ASSERT_NE(firstAt, 0u);
  std::mt19937_64 rng(7);
  for (int t = 0; t < 300; ++t) {
    const int64_t count = 1 + static_cast<int64_t>(rng() % 4);
    int64_t lo = static_cast<int64_t>(rng() % (count * size + 1));
    int64_t hi = static_cast<int64_t>(rng() % (count * size + 1));
    if (lo > hi)
      std::swap(lo, hi);
    LaunchConfig cfg = computeLaunch(p, count, lo, hi, 0);
    ASSERT_TRUE(cfg.error.empty());
    int64_t first = cfg.params[firstAt], num = cfg.params[numAt];
    // Exactly the items that overlap [lo, hi).
    for (int64_t item = 0; item < count * nu; ++item) {
      const WorkUnit &u = p.units[item % nu];
      int64_t a = item / nu * size + u.packed, b = a + u.length;
      bool overlaps = a < hi && b > lo;
      bool listed = item >= first && item < first + num;
      ASSERT_EQ(overlaps, listed)
          << "item " << item << " range " << lo << ".." << hi;
    }
    EXPECT_EQ(cfg.grid == 0, num == 0);
  }
}

/// Whether the nest kernels serve the layout of `expr` instead of its plan.
bool nestsServe(const std::string &expr) {
  const KernelPlan p = plan(expr);
  std::vector<Nest> nests;
  std::string why;
  return splitIntoNests(p.layout, nests, why) && nestsBeatPlan(p, nests);
}

TEST(NestKernel, ServeSingleRunsOfWholeWordsInsteadOfPeriods) {
  // One run of whole aligned words per point, planned as record periods:
  // three floats of every four, five, seven; three ints of every six.
  EXPECT_TRUE(isRecordPeriodPlan(plan("vector(300, 3, 5, float)")));
  EXPECT_TRUE(nestsServe("vector(300, 3, 4, float)"));
  EXPECT_TRUE(nestsServe("vector(300, 3, 5, float)"));
  EXPECT_TRUE(nestsServe("vector(300, 3, 7, float)"));
  EXPECT_TRUE(nestsServe("vector(300, 3, 6, int)"));
  // Not: two runs per point (a struct's fields with a gap), runs of odd
  // bytes (a double and a char), a plan that is no period plan (three
  // doubles of every four: a window pack), a contiguous type.
  EXPECT_FALSE(nestsServe("contiguous(300, resized(0, 48, struct([3, 1], "
                          "[0, 36], [double, int])))"));
  EXPECT_FALSE(nestsServe("contiguous(300, resized(0, 16, struct([1, 1], "
                          "[0, 8], [double, char])))"));
  EXPECT_FALSE(nestsServe("vector(64, 3, 4, double)"));
  EXPECT_FALSE(nestsServe("contiguous(300, float)"));
}

TEST(RecordPeriodKernel, PeriodsOfWholeWords) {
  // 28 packed bytes every 48: a period is one point.
  const KernelPlan fields = plan("contiguous(300, resized(0, 48, struct([3, "
                                 "1], [0, 36], [double, int])))");
  ASSERT_TRUE(isRecordPeriodPlan(fields));
  PeriodGeometry g = getPeriodGeometry(fields);
  EXPECT_EQ(g.stride, 48);
  EXPECT_EQ(g.points, 1);
  EXPECT_EQ(g.span, 48);
  EXPECT_EQ(g.packed, 28);
  EXPECT_EQ(g.inRow, 13); // 12 words, made odd
  EXPECT_EQ(g.outRow, 7);
  EXPECT_EQ(g.rows, 256);
  EXPECT_EQ(periodShapeSuffix(fields), ".p48:0+24,36+4");
  EXPECT_NE(kernelShapeKey(fields).find(".p48:0+24,36+4"), std::string::npos);
  // 9 packed bytes every 14: four points make whole words on both sides.
  const KernelPlan bytes = plan("contiguous(700, resized(0, 14, struct([1, "
                                "1, 2], [0, 4, 8], [float, char, short])))");
  ASSERT_TRUE(isRecordPeriodPlan(bytes));
  g = getPeriodGeometry(bytes);
  EXPECT_EQ(g.points, 4);
  EXPECT_EQ(g.span, 56);
  EXPECT_EQ(g.packed, 36);
  EXPECT_EQ(g.inRow % 2, 1);
  EXPECT_EQ(g.outRow, 9);
  // One struct an instance: the instances are the row.
  EXPECT_TRUE(isRecordPeriodPlan(
      plan("resized(0, 24, struct([2, 1, 1], [0, 12, 17], [float, int, "
           "char]))")));
  EXPECT_FALSE(periodRestartsRows(fields));
  // Instances whose points do not follow at one stride (an extent past the
  // row), and rows of rows: rows that restart, the shape says so.
  const KernelPlan cut = plan("resized(0, 14448, contiguous(300, resized(0, "
                              "48, struct([3, 1], [0, 36], [double, int]))))");
  EXPECT_TRUE(isRecordPeriodPlan(cut));
  EXPECT_TRUE(periodRestartsRows(cut));
  EXPECT_EQ(periodShapeSuffix(cut), ".p48r:0+24,36+4");
  EXPECT_NE(kernelShapeKey(cut), kernelShapeKey(fields));
  EXPECT_TRUE(isRecordPeriodPlan(
      plan("hvector(3, 1, 50000, contiguous(700, resized(0, 48, struct([3, "
           "1], [0, 36], [double, int]))))")));
  // A row whose count is no multiple of the period's four points, or a
  // third dimension: the record window pack.
  const KernelPlan odd =
      plan("hvector(3, 1, 20000, contiguous(701, resized(0, 14, struct([1, "
           "1, 2], [0, 4, 8], [float, char, short]))))");
  EXPECT_FALSE(isRecordPeriodPlan(odd));
  EXPECT_TRUE(isRecordWindowPlan(odd));
  EXPECT_EQ(kernelShapeKey(odd).find(".p"), std::string::npos);
  EXPECT_FALSE(isRecordPeriodPlan(
      plan("hvector(2, 1, 900000, hvector(3, 1, 50000, contiguous(700, "
           "resized(0, 48, struct([3, 1], [0, 36], [double, int])))))")));
  // Single runs shorter than a chunk and not one or two aligned words.
  const KernelPlan xyz = plan("vector(50, 3, 4, float)");
  EXPECT_TRUE(isRecordPeriodPlan(xyz));
  EXPECT_TRUE(periodRestartsRows(xyz)); // the trailing gap
  // The loops of a branch are indented under it.
  EXPECT_NE(emitCUDA(xyz, "k").source.find(
                "\n    if (col0 + 256 <= p.s0_n0) {\n      const unsigned char "
                "*ws = origin + ro0 + col0 * 16ll;\n"),
            std::string::npos);
  EXPECT_NE(emitCUDA(xyz, "k").source.find(
                "\n      if (row16) {\n        for (int i0 = threadIdx.x;"),
            std::string::npos);
  EXPECT_TRUE(isRecordPeriodPlan(plan("vector(64, 1, 24, char)")));
  EXPECT_FALSE(isRecordPeriodPlan(plan("hvector(100, 4, 8, char)")));
  EXPECT_FALSE(isRecordPeriodPlan(plan("hvector(100, 16, 36, char)")));
  EXPECT_FALSE(isRecordPeriodPlan(
      plan("contiguous(300, resized(0, 48, struct([3, 3, 1, 1], [0, 24, 36, "
           "40], [double, float, int, char])))")));
  // Two periods' kernels differ in their shape, not their parameters.
  const KernelPlan other = plan("contiguous(300, resized(0, 48, struct([3, "
                                "1], [0, 32], [double, int])))");
  EXPECT_NE(kernelShapeKey(other), kernelShapeKey(fields));
}

TEST(UnitsChunkKernel, ChosenByMeanUnitLength) {
  // Runs of 1-3 doubles: units of 8-24 bytes, a 16-byte chunk a thread.
  KernelPlan shortRuns = planUnits(
      "indexed([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3], [0, 4, "
      "8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68], "
      "double)");
  // Another table of short runs: the same source.
  KernelPlan otherShort =
      planUnits("indexed([5, 1, 7, 2], [0, 10, 30, 50], double)");
  // Runs of 40-59 doubles: units of 320-472 bytes, a warp each.
  KernelPlan longRuns = planUnits(
      "indexed([40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, "
      "55, 56, 57, 58, 59], [0, 64, 128, 192, 256, 320, 384, 448, 512, 576, "
      "640, 704, 768, 832, 896, 960, 1024, 1088, 1152, 1216], double)");
  ASSERT_EQ(shortRuns.family, KernelFamily::Units);
  ASSERT_EQ(longRuns.family, KernelFamily::Units);
  EXPECT_TRUE(unitsByChunks(shortRuns));
  EXPECT_TRUE(unitsByChunks(otherShort));
  EXPECT_FALSE(unitsByChunks(longRuns));
  EXPECT_FALSE(unitsByChunks(plan("vector(10, 2, 4, double)")));
  EXPECT_EQ(kernelShapeKey(shortRuns), "units.w8.chunks");
  EXPECT_EQ(kernelShapeKey(longRuns), "units.w8");
  EXPECT_EQ(emitCUDA(shortRuns, "k").source, emitCUDA(otherShort, "k").source);
  const std::string source = emitCUDA(shortRuns, "k").source;
  EXPECT_NE(source.find("__shared__ long long at_s[" +
                        std::to_string(kChunkUnitsGroup) + " + 1];"),
            std::string::npos);
  EXPECT_EQ(emitCUDA(longRuns, "k").source.find("__shared__"),
            std::string::npos);

  // Groups hold about kChunkUnitsPerThread chunks a thread: fewer items
  // for longer units, a power of two from 32 to kChunkUnitsGroup.
  const int64_t gShort = getChunkUnitsGroup(shortRuns);
  const int64_t gLong = getChunkUnitsGroup(longRuns);
  EXPECT_GT(gShort, gLong);
  EXPECT_EQ(gLong, 32);
  for (int64_t g : {gShort, gLong}) {
    EXPECT_EQ(g & (g - 1), 0);
    EXPECT_GE(g, 32);
    EXPECT_LE(g, kChunkUnitsGroup);
  }
  EXPECT_LE(gShort * shortRuns.layout.size /
                static_cast<int64_t>(shortRuns.units.size()),
            shortRuns.threadsPerBlock * 16 * kChunkUnitsPerThread);

  // One block per group of the call's items; the group is the third word
  // from the end, the unpack's word a thread the next (units of 8-24 bytes
  // of doubles: whole aligned words), the table in destination order last.
  EXPECT_TRUE(unitsWordUnpack(shortRuns));
  // Units of 40-64 bytes: a 16-byte chunk a thread both ways.
  KernelPlan medium =
      planUnits("indexed([5, 6, 7, 8], [0, 10, 30, 50], double)");
  EXPECT_TRUE(unitsByChunks(medium));
  EXPECT_FALSE(unitsWordUnpack(medium));
  const int64_t nu = static_cast<int64_t>(shortRuns.units.size());
  for (int64_t count : {1, 7, 1000, 100000}) {
    const int64_t total = count * shortRuns.layout.size;
    LaunchConfig cfg = computeLaunch(shortRuns, count, 0, total, 0);
    ASSERT_TRUE(cfg.error.empty());
    EXPECT_EQ(cfg.params[cfg.params.size() - 3], gShort);
    EXPECT_EQ(cfg.params[cfg.params.size() - 2], 1);
    EXPECT_EQ(cfg.params.back(), 0);
    EXPECT_EQ(cfg.grid, (count * nu + gShort - 1) / gShort) << count;
    EXPECT_EQ(computeLaunch(shortRuns, count, 0, total, 3).grid,
              std::min<int64_t>(3, cfg.grid));
  }
}

/// orderUnpackUnits adds the units by origin offset where packed order
/// scatters the unpack's stores, and nothing where it does not.
TEST(UnitsChunkKernel, UnpackOrderWhereStoresScatter) {
  std::string displs;
  // Half the doubles of 64 slots, shuffled (a fixed permutation).
  for (int i = 0; i < 32; ++i)
    displs += (i ? ", " : "") + std::to_string((i * 37) % 64);
  KernelPlan shuffled =
      planUnits("indexed_block(1, [" + displs + "], double)");
  ASSERT_TRUE(unitsWordUnpack(shuffled));
  ASSERT_TRUE(orderUnpackUnits(shuffled));
  const UnitTable &units = shuffled.units, &by = shuffled.unpackUnits;
  ASSERT_EQ(by.size(), units.size());
  int64_t place = 0;
  for (size_t i = 0; i < by.size(); ++i) {
    // In origin order, at consecutive places, each naming its packed offset.
    EXPECT_EQ(by[i].packed, place);
    if (i)
      EXPECT_LT(by[i - 1].src, by[i].src);
    const auto it =
        std::find_if(units.begin(), units.end(), [&](const WorkUnit &u) {
          return u.packed == by[i].wide;
        });
    ASSERT_NE(it, units.end());
    EXPECT_EQ(it->src, by[i].src);
    EXPECT_EQ(it->length, by[i].length);
    place += by[i].length;
  }
  EXPECT_EQ(place, shuffled.layout.size);
  // The parameter says so, and the table carries both orders.
  EXPECT_EQ(computeLaunch(shuffled, 2, 0, 2 * place, 0).params.back(), 1);
  EXPECT_EQ(encodeUnitTable(shuffled).size(), 8 * units.size());

  // In order already, or units of many words: packed order stays.
  // Irregular gaps of 2 to 5 slots: no vector detection makes it strided.
  std::string sorted;
  for (int i = 0, at = 0; i < 32; ++i, at += 2 + (i * i * 7 + i) % 4)
    sorted += (i ? ", " : "") + std::to_string(at);
  KernelPlan inOrder = planUnits("indexed_block(1, [" + sorted + "], double)");
  ASSERT_TRUE(unitsWordUnpack(inOrder));
  EXPECT_FALSE(orderUnpackUnits(inOrder));
  EXPECT_TRUE(inOrder.unpackUnits.empty());
  KernelPlan medium =
      planUnits("indexed([5, 6, 7, 8], [50, 10, 30, 0], double)");
  EXPECT_FALSE(orderUnpackUnits(medium));
  EXPECT_EQ(computeLaunch(medium, 1, 0, medium.layout.size, 0).params.back(),
            0);
}

/// unitsWordUnpack reads the plan's byte-path flag instead of the table:
/// every units plan without a byte path has only wide units at packed and
/// origin offsets and of lengths that are multiples of its width.
TEST(UnitsChunkKernel, NoBytePathMeansAlignedWideUnits) {
  std::mt19937_64 rng(101);
  RandomDatatypeOptions options;
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    RandomDatatypeCase c = generateRandomDatatype(rng, options);
    KernelPlan p;
    std::string error;
    if (!planKernel(*c.type, p, error) || p.family != KernelFamily::Units ||
        p.needsBytePath)
      continue;
    ++checked;
    for (const WorkUnit &u : p.units) {
      ASSERT_TRUE(u.wide || p.width == 1) << printSpecExpr(*c.type);
      ASSERT_EQ(u.packed % p.width, 0) << printSpecExpr(*c.type);
      ASSERT_EQ(u.src % p.width, 0) << printSpecExpr(*c.type);
      ASSERT_EQ(u.length % p.width, 0) << printSpecExpr(*c.type);
    }
  }
  EXPECT_GT(checked, 50);
}

TEST(NVRTC, CompilesEmittedKernels) {
  std::string error;
  const NVRTCCompiler *nvrtc = NVRTCCompiler::get(error);
  if (!nvrtc)
    GTEST_SKIP() << error;
  EXPECT_GE(nvrtc->major(), 11);
  for (const char *expr :
       {"vector(10, 2, 4, double)", "hvector(64, 3, 7, char)",
        "indexed([1, 2, 3], [0, 5, 11], int)", "contiguous(0, double)",
        "subarray([8, 8, 8], [2, 3, 4], [1, 1, 1], C, float)",
        // Transpose tiles: 8-, 1-, 12- and 16-byte elements, a dimension
        // outside the tile and one inside it.
        "contiguous(4096, resized(0, 8, vector(4096, 1, 4096, double)))",
        "contiguous(70, resized(0, 2, vector(50, 1, 140, char)))",
        "contiguous(40, resized(0, 12, vector(9, 1, 40, "
        "contiguous(3, int))))",
        "hvector(2, 1, 100000, contiguous(33, resized(0, 16, vector(40, 1, "
        "33, contiguous(2, double)))))",
        "contiguous(50, resized(0, 4, hvector(3, 1, 4400, vector(21, 1, 50, "
        "float))))"}) {
    SCOPED_TRACE(expr);
    EmittedKernels k = emitCUDA(plan(expr), "ddtc_t");
    NVRTCResult ptx = nvrtc->compile(k.text(), "t.cu", NVRTCOutput::PTX);
    ASSERT_TRUE(ptx.ok) << ptx.error;
    EXPECT_NE(ptx.binary.find(".entry ddtc_t_pack"), std::string::npos);
    EXPECT_NE(ptx.binary.find(".entry ddtc_t_unpack"), std::string::npos);
    EXPECT_EQ(ptx.options.front(), "--gpu-architecture=compute_90");
  }
  NVRTCResult cubin =
      nvrtc->compile(emitCUDA(plan("vector(10, 2, 4, double)"), "k").source,
                     "k.cu", NVRTCOutput::Cubin, "sm_90");
  ASSERT_TRUE(cubin.ok) << cubin.error;
  EXPECT_EQ(cubin.binary.substr(0, 4), "\x7f"
                                       "ELF");
  EXPECT_EQ(cubin.options.front(), "--gpu-architecture=sm_90");

  NVRTCResult broken = nvrtc->compile("__global__ void f() { undeclared(); }\n",
                                      "broken.cu", NVRTCOutput::PTX);
  EXPECT_FALSE(broken.ok);
  EXPECT_NE(broken.error.find("broken.cu"), std::string::npos);
  EXPECT_NE(broken.log.find("undeclared"), std::string::npos);

  NVRTCResult badArch = nvrtc->compile("", "x.cu", NVRTCOutput::PTX, "bogus");
  EXPECT_FALSE(badArch.ok);
}

TEST(NVRTC, MinimalDeclarationsWithFallback) {
  std::string error;
  const NVRTCCompiler *nvrtc = NVRTCCompiler::get(error);
  if (!nvrtc)
    GTEST_SKIP() << error;
  const bool minimal = nvrtc->major() > 12 ||
                       (nvrtc->major() == 12 && nvrtc->minor() >= 4);
  EXPECT_EQ(nvrtc->minimalDeclarations(), minimal);
  auto hasMinimal = [](const NVRTCResult &r) {
    return std::find(r.options.begin(), r.options.end(), "--minimal") !=
           r.options.end();
  };
  // The emitted kernels need none of the CUDA runtime's device API.
  NVRTCResult kernels =
      nvrtc->compile(emitCUDA(plan("vector(10, 2, 4, double)"), "k").source,
                     "k.cu", NVRTCOutput::Cubin, "sm_90");
  ASSERT_TRUE(kernels.ok) << kernels.error;
  EXPECT_EQ(hasMinimal(kernels), minimal);
  // A source that uses a type --minimal leaves out still compiles: the
  // compiler tries again with the full declarations.
  NVRTCResult runtimeTypes = nvrtc->compile(
      "extern \"C\" __global__ void f(cudaTextureObject_t t, int *out) {\n"
      "  *out = static_cast<int>(sizeof t);\n}\n",
      "texture.cu", NVRTCOutput::PTX);
  ASSERT_TRUE(runtimeTypes.ok) << runtimeTypes.error;
  EXPECT_FALSE(hasMinimal(runtimeTypes));
}

TEST(NVRTC, NumberLines) {
  EXPECT_EQ(numberLines("a\nb\n"), "    1  a\n    2  b\n");
}

} // namespace

TEST(Explain, CountSectors) {
  // Sectors are aligned 32-byte spans; each one counts once however many
  // runs touch it, and offsets below 0 round down.
  EXPECT_EQ(countSectors({}), 0);
  EXPECT_EQ(countSectors({{0, 1}}), 1);
  EXPECT_EQ(countSectors({{31, 2}}), 2);
  EXPECT_EQ(countSectors({{64, 8}, {0, 8}, {4, 8}}), 2);
  EXPECT_EQ(countSectors({{-1, 1}}), 1);
  EXPECT_EQ(countSectors({{-33, 34}}), 3);
  EXPECT_EQ(countSectors({{0, 100}, {40, 10}}), 4);
}
