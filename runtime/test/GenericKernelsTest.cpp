//===- GenericKernelsTest.cpp - The generic kernels, run on the CPU -------===//
//
// Every type can be served by a generic (work-unit) kernel while its
// specialized kernel compiles. This test builds the work-unit plan of random
// types (makeUnitsPlan, and with long units as very large instances get
// them) and runs the generic kernels' very source, compiled
// into this test through CPUEmulation.h, against the reference pack and
// unpack (the KernelCheck harness): whole and partial ranges, capped grids,
// aligned and misaligned buffers, and no wide load outside the source bytes
// the call may read.
//===----------------------------------------------------------------------===//

#include "TestHarness.h"

#include "GenericPlan.h"

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Testing/KernelCheck.h"
#include "ddtc/Testing/RandomDatatype.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// The generic kernels, as libddtc's build compiles them with NVRTC, after
// the header that lets the host compiler run them, with their wide loads
// watched.
#define DDTC_EMU_WATCH_READS 1
#include "ddtc/Target/CUDA/CPUEmulation.h"

#include "GenericKernelSources.inc"

using namespace ddtc;
using namespace ddtc::test;

namespace {

template <typename P>
void runPack(void (*k)(const unsigned char *, unsigned char *, P,
                       const long long *),
             const LaunchConfig &cfg, const unsigned char *origin,
             unsigned char *packed, const long long *units) {
  P params;
  std::memcpy(&params, cfg.params.data(), sizeof params);
  ddtcEmulateLaunch(k, static_cast<unsigned>(cfg.grid),
                    static_cast<unsigned>(cfg.block), origin, packed, params,
                    units);
}
template <typename P>
void runUnpack(void (*k)(unsigned char *, const unsigned char *, P,
                         const long long *),
               const LaunchConfig &cfg, unsigned char *origin,
               const unsigned char *packed, const long long *units) {
  P params;
  std::memcpy(&params, cfg.params.data(), sizeof params);
  ddtcEmulateLaunch(k, static_cast<unsigned>(cfg.grid),
                    static_cast<unsigned>(cfg.block), origin, packed, params,
                    units);
}

/// Runs the generic pack (or unpack) kernel of `width`.
bool launch(bool pack, int64_t width, const LaunchConfig &cfg,
            unsigned char *origin, unsigned char *packed,
            const long long *units) {
#define DDTC_WIDTH_CASE(W)                                                     \
  case W:                                                                      \
    if (cfg.params.size() * 8 != sizeof(ddtc_units_w##W##_params))             \
      return false;                                                            \
    if (pack)                                                                  \
      runPack(ddtc_units_w##W##_pack, cfg, origin, packed, units);             \
    else                                                                       \
      runUnpack(ddtc_units_w##W##_unpack, cfg, origin, packed, units);         \
    return true;
  switch (width) {
    DDTC_WIDTH_CASE(1)
    DDTC_WIDTH_CASE(2)
    DDTC_WIDTH_CASE(4)
    DDTC_WIDTH_CASE(8)
    DDTC_WIDTH_CASE(16)
  }
#undef DDTC_WIDTH_CASE
  return false;
}

/// Checks one type; returns an empty string or what went wrong. With
/// `maxCutUnits` > 0 the units are cut as for an instance too large for the
/// usual unit size (cutWorkUnits with that bound): few, long units, each
/// looped over by its warp.
std::string checkType(const Datatype &type, int64_t count, std::mt19937_64 &rng,
                      int64_t maxCutUnits = 0) {
  KernelPlan spec;
  std::string planError;
  if (!planKernel(type, spec, planError))
    return "planKernel failed: " + planError;
  KernelPlan g;
  if (!rt::makeUnitsPlan(spec.layout, INT64_MAX, g))
    return "makeUnitsPlan refused an unbounded plan";
  if (maxCutUnits > 0) {
    g = makeInitialPlan(spec.layout);
    int64_t split = 0;
    if (!alignAccesses(g, planError) ||
        (g.units.empty() && !listPieces(g, split, planError)))
      return "listing the pieces failed: " + planError;
    const int64_t pieces = static_cast<int64_t>(g.units.size());
    cutWorkUnits(g, maxCutUnits);
    if (static_cast<int64_t>(g.units.size()) > pieces + maxCutUnits)
      return "cutWorkUnits made more than pieces + " +
             std::to_string(maxCutUnits) + " units";
  }
  const int64_t size = type.layout().size;
  // The units tile one instance's packed bytes, in order.
  int64_t at = 0;
  for (const WorkUnit &u : g.units) {
    if (u.packed != at || u.length <= 0 || u.length > g.unitBytes)
      return "units do not tile the packed instance";
    if (u.wide && (u.src % g.width != 0 || u.length % g.width != 0))
      return "a wide unit is not aligned to the width";
    at += u.length;
  }
  if (at != size)
    return "units cover " + std::to_string(at) + " of " + std::to_string(size) +
           " bytes";
  if (rt::estimateUnits(spec.layout) < static_cast<int64_t>(g.units.size()))
    return "estimateUnits is below the real count";
  if (kernelShapeKey(g) != "units.w" + std::to_string(g.width))
    return "unexpected shape " + kernelShapeKey(g);

  KernelChecker checker(type, count);
  if (!checker.error().empty())
    return checker.error();
  const int64_t total = checker.packedBytes();
  std::vector<long long> table;
  for (int64_t v : encodeUnitTable(g))
    table.push_back(v);

  std::vector<std::pair<int64_t, int64_t>> ranges = {{0, total}};
  for (int i = 0; i < 2; ++i) {
    int64_t a = static_cast<int64_t>(rng() % (total + 1));
    int64_t b = static_cast<int64_t>(rng() % (total + 1));
    ranges.push_back({std::min(a, b), std::max(a, b)});
  }
  const int64_t caps[] = {0, 1 + static_cast<int64_t>(rng() % 3)};
  // The buffers aligned as cudaMalloc's, or both shifted by one byte.
  for (int misalign = 0; misalign < 2; ++misalign) {
    for (auto [lo, hi] : ranges) {
      for (int64_t cap : caps) {
        LaunchConfig cfg = computeLaunch(g, count, lo, hi, cap);
        if (!cfg.error.empty())
          return "computeLaunch: " + cfg.error;
        std::string where = " (range [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "), cap " +
                            std::to_string(cap) + ", misaligned " +
                            std::to_string(misalign) + ", width " +
                            std::to_string(g.width) + ")";
        auto runKernel = [&](const KernelCall &call,
                             KernelBuffers &b) -> std::string {
          ddtcEmuWatchReads(b.sourceBuffer, b.sourceBuffer + b.sourceBytes,
                            b.readBegin, b.readEnd);
          if (cfg.grid > 0 &&
              !launch(call.pack, g.width, cfg,
                      static_cast<unsigned char *>(b.origin()),
                      static_cast<unsigned char *>(b.packed()), table.data()))
            return "no generic kernel of width " + std::to_string(g.width);
          const void *at = nullptr;
          unsigned long long bytes = 0;
          if (ddtcEmuStrayRead(at, bytes))
            return b.describeStrayRead(call, at, static_cast<int64_t>(bytes));
          return "";
        };
        for (bool pack : {true, false}) {
          KernelCall call;
          call.pack = pack;
          call.lo = lo;
          call.hi = hi;
          call.originShift = call.packedShift = misalign;
          std::string r = checker.check(call, runKernel);
          if (!r.empty())
            return r + where;
        }
      }
    }
  }
  return "";
}

} // namespace

DDTC_TEST("generic-kernels", genericKernels) {
  int64_t n = 150;
  if (const char *e = std::getenv("DDTC_TEST_RANDOM_TYPES"))
    n = std::atoll(e);
  RandomDatatypeOptions opts;
  opts.maxDepth = 4;
  opts.maxSpan = 1 << 15;
  opts.maxPackedSize = 1 << 14;
  opts.maxPieces = 600;
  const char *fixed[] = {
      "vector(3, 2, 5, double)",
      "indexed([1, 2, 3], [0, 5, 11], double)",
      "subarray([16, 16, 16], [3, 9, 10], [1, 2, 3], C, float)",
      "struct([1, 2, 1], [0, 8, 16], [double, int, char])",
      "resized(-8, 40, struct([3, 1], [1, 20], [char, double]))",
      "hvector(5, 3, -40, contiguous(7, char))",
      "contiguous(1000, short)",
      "indexed_block(33, [0, 40, 200], long double)",
  };
  int failures = 0, cases = 0;
  auto report = [&](const Datatype &t, int64_t count, const std::string &why) {
    ++cases;
    if (why.empty())
      return;
    ++failures;
    std::fprintf(stderr, "FAIL %s x %lld: %s\n", printSpecExpr(t).c_str(),
                 (long long)count, why.c_str());
  };
  std::mt19937_64 rng(1234);
  for (const char *f : fixed) {
    SpecFile spec;
    std::string error;
    if (!parseSpec(std::string("t = ") + f + "\n", "fixed", spec, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return kFail;
    }
    const Datatype &t = *spec.bindings.back().type;
    if (t.layout().size > 0)
      for (int64_t count : {1, 3}) {
        report(t, count, checkType(t, count, rng));
        // Long units split across warps, as for very large instances.
        report(t, count, checkType(t, count, rng, /*maxCutUnits=*/1));
      }
  }
  for (int64_t i = 0; i < n; ++i) {
    std::mt19937_64 caseRng(randomCaseSeed(20261121, static_cast<uint64_t>(i)));
    RandomDatatypeCase c = generateRandomDatatype(caseRng, opts);
    if (c.type->layout().size == 0)
      continue;
    report(*c.type, c.count, checkType(*c.type, c.count, caseRng));
    if (i % 4 == 0)
      report(*c.type, c.count, checkType(*c.type, c.count, caseRng, 2));
  }
  std::printf("%d type/count cases, %d failed\n", cases, failures);
  return failures ? kFail : kPass;
}

DDTC_TEST("generic-plan-limit", genericPlanLimit) {
  SpecFile spec;
  std::string error;
  CHECK(parseSpec("t = vector(100000, 1, 2, double)\n", "t", spec, error));
  KernelPlan p;
  CHECK(planKernel(*spec.bindings.back().type, p, error));
  KernelPlan g;
  CHECK(!rt::makeUnitsPlan(p.layout, 1000, g));
  CHECK(g.units.empty());
  CHECK(rt::makeUnitsPlan(p.layout, 1 << 20, g));
  CHECK(g.units.size() == 100000);
  CHECK(rt::kernelSymbolPrefix("strided.w8.bytes.d2-1") ==
        "ddtc_strided_w8_bytes_d2_1");
  return kPass;
}
