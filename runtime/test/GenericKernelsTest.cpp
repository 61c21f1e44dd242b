//===- GenericKernelsTest.cpp - The generic kernels, run on the CPU -------===//
//
// Every type can be served by a generic kernel while its specialized kernel
// compiles: the nest kernels for layouts that split into a few strided
// nests, the work-unit kernels for the others. This test builds the nests
// (splitIntoNests) and the work-unit plan (makeUnitsPlan, and with long
// units as very large instances get them) of random types, random strided
// nests and large strided layouts, and runs the generic kernels' very
// source, compiled into this test through CPUEmulation.h, against the
// reference pack and unpack (the KernelCheck harness): whole and partial
// ranges, capped grids, aligned and misaligned buffers, and no wide load
// outside the source bytes the call may read. It prints which kernels each
// fixed case ran and how often each kernel served.
//===----------------------------------------------------------------------===//

#include "TestHarness.h"

#include "GenericPlan.h"

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/NestKernel.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"
#include "ddtc/Testing/KernelCheck.h"
#include "ddtc/Testing/RandomDatatype.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

// The generic kernels, as libddtc's build compiles them with NVRTC, after
// the header that lets the host compiler run them, with their wide loads
// watched.
#define DDTC_EMU_WATCH_READS 1
#include "ddtc/Target/CUDA/CPUEmulation.h"

#include "GenericKernelSources.inc"
#include "ddtc/Testing/EmulatedGenericKernels.h"

using namespace ddtc;
using namespace ddtc::test;

namespace {

/// The kernels each variant served, for the summary line.
std::map<std::string, int> &servedBy() {
  static std::map<std::string, int> counts;
  return counts;
}

/// The random ranges of a case: the whole stream and two random ones.
std::vector<std::pair<int64_t, int64_t>> rangesOf(int64_t total,
                                                  std::mt19937_64 &rng) {
  std::vector<std::pair<int64_t, int64_t>> ranges = {{0, total}};
  for (int i = 0; i < 2; ++i) {
    int64_t a = static_cast<int64_t>(rng() % (total + 1));
    int64_t b = static_cast<int64_t>(rng() % (total + 1));
    ranges.push_back({std::min(a, b), std::max(a, b)});
  }
  return ranges;
}

/// Checks the pack, then the unpack, of packed bytes [lo, hi) with `run`,
/// both buffers shifted by `misalign` bytes; returns the first failure.
std::string checkBothWays(KernelChecker &checker, int64_t lo, int64_t hi,
                          int misalign, const KernelRunner &run) {
  for (bool pack : {true, false}) {
    KernelCall call;
    call.pack = pack;
    call.lo = lo;
    call.hi = hi;
    call.originShift = call.packedShift = misalign;
    std::string r = checker.check(call, run);
    if (!r.empty())
      return r;
  }
  return "";
}

/// Checks the nest kernels on one type, one launch per nest per call as the
/// runtime makes them. Sets `kernels` to the nest kernels used ("nest.w8
/// x2"), or to "" when the layout does not split into few enough nests.
std::string checkNests(const Datatype &type, int64_t count,
                       std::mt19937_64 &rng, std::string &kernels) {
  kernels.clear();
  KernelPlan spec;
  std::string error;
  if (!planKernel(type, spec, error))
    return "planKernel failed: " + error;
  std::vector<Nest> nests;
  if (!splitIntoNests(spec.layout, nests, error))
    return "";
  std::map<int, int> widths;
  int64_t bytes = 0;
  for (const Nest &n : nests) {
    ++widths[n.width];
    int64_t points = 1;
    for (const NestLevel &l : n.levels)
      points *= l.count;
    bytes += points * n.length;
  }
  if (bytes != spec.layout.size)
    return "the nests hold " + std::to_string(bytes) + " of " +
           std::to_string(spec.layout.size) + " bytes";
  for (auto [w, n] : widths) {
    kernels += (kernels.empty() ? "" : ", ") + nestShapeKey(w);
    if (n > 1)
      kernels += " x" + std::to_string(n);
    ++servedBy()[nestShapeKey(w)];
  }
  KernelChecker checker(type, count);
  if (!checker.error().empty())
    return checker.error();
  const int64_t total = checker.packedBytes();
  const int64_t caps[] = {0, 1 + static_cast<int64_t>(rng() % 3)};
  for (int misalign = 0; misalign < 2; ++misalign)
    for (auto [lo, hi] : rangesOf(total, rng))
      for (int64_t cap : caps) {
        auto run = [&](const KernelCall &call,
                       KernelBuffers &b) -> std::string {
          for (const Nest &n : nests) {
            LaunchConfig cfg = computeNestLaunch(n, spec.layout.size,
                                                 spec.layout.extent, count,
                                                 lo, hi, cap);
            if (!cfg.error.empty())
              return "computeNestLaunch: " + cfg.error;
            if (cfg.grid > 0 &&
                !launchNestKernel(call.pack, n.width, cfg,
                                  static_cast<unsigned char *>(b.origin()),
                                  static_cast<unsigned char *>(b.packed())))
              return "no nest kernel of width " + std::to_string(n.width);
          }
          return "";
        };
        std::string r = checkBothWays(checker, lo, hi, misalign, run);
        if (!r.empty())
          return r + " (nest kernels, range [" + std::to_string(lo) + ", " +
                 std::to_string(hi) + "), cap " + std::to_string(cap) +
                 ", misaligned " + std::to_string(misalign) + ")";
      }
  return "";
}

/// A random strided nest as a spec: vectors, hvectors (negative strides
/// too) and subarrays over a primitive or a contiguous block, up to four
/// deep.
std::string randomStridedSpec(std::mt19937_64 &rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  const char *prims[] = {"char", "short", "int", "double", "long double"};
  std::string t = prims[pick(0, 4)];
  if (pick(0, 2) == 0)
    t = "contiguous(" + std::to_string(pick(1, 7)) + ", " + t + ")";
  const int depth = static_cast<int>(pick(1, 4));
  for (int d = 0; d < depth; ++d) {
    const int64_t count = pick(1, d == 0 ? 40 : 6), block = pick(1, 4);
    switch (pick(0, 2)) {
    case 0:
      t = "vector(" + std::to_string(count) + ", " + std::to_string(block) +
          ", " + std::to_string(block + pick(0, 5)) + ", " + t + ")";
      break;
    case 1: {
      int64_t stride = pick(-300, 300);
      t = "hvector(" + std::to_string(count) + ", " + std::to_string(block) +
          ", " + std::to_string(stride) + ", " + t + ")";
      break;
    }
    default: {
      const int64_t n0 = pick(2, 9), n1 = pick(2, 9);
      const int64_t s0 = pick(1, n0), s1 = pick(1, n1);
      t = "subarray([" + std::to_string(n0) + ", " + std::to_string(n1) +
          "], [" + std::to_string(s0) + ", " + std::to_string(s1) + "], [" +
          std::to_string(pick(0, n0 - s0)) + ", " +
          std::to_string(pick(0, n1 - s1)) + "], " +
          (pick(0, 1) ? "C" : "Fortran") + ", " + t + ")";
      break;
    }
    }
  }
  return t;
}

/// The planning passes' plan of `type` and its work-unit plan `g`: the
/// generic kernels' (makeUnitsPlan), or with `maxCutUnits` > 0 its pieces
/// cut as for an instance too large for the usual unit size (cutWorkUnits
/// with that bound: few, long units). Empty, or what went wrong.
std::string unitsPlanOf(const Datatype &type, int64_t maxCutUnits,
                        KernelPlan &spec, KernelPlan &g) {
  std::string error;
  if (!planKernel(type, spec, error))
    return "planKernel failed: " + error;
  if (!rt::makeUnitsPlan(spec.layout, INT64_MAX, g))
    return "makeUnitsPlan refused an unbounded plan";
  if (maxCutUnits <= 0)
    return "";
  g = makeInitialPlan(spec.layout);
  int64_t split = 0;
  if (!alignAccesses(g, error) ||
      (g.units.empty() && !listPieces(g, split, error)))
    return "listing the pieces failed: " + error;
  const int64_t pieces = static_cast<int64_t>(g.units.size());
  cutWorkUnits(g, maxCutUnits);
  if (static_cast<int64_t>(g.units.size()) > pieces + maxCutUnits)
    return "cutWorkUnits made more than pieces + " +
           std::to_string(maxCutUnits) + " units";
  return "";
}

/// Checks one type; returns an empty string or what went wrong. With
/// `maxCutUnits` > 0 the units are cut as for an instance too large for the
/// usual unit size (cutWorkUnits with that bound): few, long units, each
/// looped over by its warp.
std::string checkType(const Datatype &type, int64_t count, std::mt19937_64 &rng,
                      int64_t maxCutUnits = 0) {
  KernelPlan spec, g;
  if (std::string why = unitsPlanOf(type, maxCutUnits, spec, g); !why.empty())
    return why;
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
  if (kernelShapeKey(g) != "units.w" + std::to_string(g.width) +
                              (unitsByChunks(g) ? ".chunks" : ""))
    return "unexpected shape " + kernelShapeKey(g);
  ++servedBy()[kernelShapeKey(g)];

  KernelChecker checker(type, count);
  if (!checker.error().empty())
    return checker.error();
  const int64_t total = checker.packedBytes();
  std::vector<long long> table;
  for (int64_t v : encodeUnitTable(g))
    table.push_back(v);

  const std::vector<std::pair<int64_t, int64_t>> ranges = rangesOf(total, rng);
  const int64_t caps[] = {0, 1 + static_cast<int64_t>(rng() % 3)};
  // The chunk kernels also serve plans of long units (the runtime packs
  // into mapped host memory with them).
  std::vector<UnitsKernels> designs = {UnitsKernels::Planned};
  if (!unitsByChunks(g)) {
    designs.push_back(UnitsKernels::Chunks);
    ++servedBy()["units.w" + std::to_string(g.width) + ".chunks(long)"];
  }
  for (UnitsKernels design : designs) {
    const bool chunks = design == UnitsKernels::Chunks || unitsByChunks(g);
    // The buffers aligned as cudaMalloc's, or both shifted by one byte.
    for (int misalign = 0; misalign < 2; ++misalign) {
      for (auto [lo, hi] : ranges) {
        for (int64_t cap : caps) {
          LaunchConfig cfg =
              computeLaunch(g, count, lo, hi, cap, /*pack=*/true, design);
          if (!cfg.error.empty())
            return "computeLaunch: " + cfg.error;
          std::string where =
              " (range [" + std::to_string(lo) + ", " + std::to_string(hi) +
              "), cap " + std::to_string(cap) + ", misaligned " +
              std::to_string(misalign) + ", width " + std::to_string(g.width) +
              (chunks ? ", a chunk a thread" : "") + ")";
          auto runKernel = [&](const KernelCall &call,
                               KernelBuffers &b) -> std::string {
            ddtcEmuWatchReads(b.sourceBuffer, b.sourceBuffer + b.sourceBytes,
                              b.readBegin, b.readEnd);
            if (cfg.grid > 0 &&
                !launchUnitsKernel(call.pack, g.width, chunks, cfg,
                                   static_cast<unsigned char *>(b.origin()),
                                   static_cast<unsigned char *>(b.packed()),
                                   table.data()))
              return "no generic kernel of width " + std::to_string(g.width);
            const void *at = nullptr;
            unsigned long long bytes = 0;
            if (ddtcEmuStrayRead(at, bytes))
              return b.describeStrayRead(call, at, static_cast<int64_t>(bytes));
            return "";
          };
          std::string r = checkBothWays(checker, lo, hi, misalign, runKernel);
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
      // Units of hundreds of bytes at each width: a warp a unit, and the
      // chunk kernels as for mapped host memory.
      "indexed([300, 200, 500], [1, 400, 1000], char)",
      "indexed([150, 300], [1, 400], short)",
      "indexed([100, 170], [1, 200], int)",
      "indexed([60, 90], [1, 100], double)",
      "indexed([40, 70, 50, 45, 60, 41, 55, 48, 66, 43, 52, 47, 61, 44, 58, "
      "49, 63, 42], [1, 44, 117, 170, 218, 281, 325, 383, 434, 503, 549, 604, "
      "654, 718, 765, 826, 878, 944], double)",
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
        std::string nests;
        report(t, count, checkNests(t, count, rng, nests));
        std::printf("%s x %lld: units; %s\n", f, (long long)count,
                    nests.empty() ? "no nest kernel (too many nests)"
                                  : nests.c_str());
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
    std::string nests;
    report(*c.type, c.count, checkNests(*c.type, c.count, caseRng, nests));
  }
  std::printf("%d type/count cases, %d failed; kernels used:", cases,
              failures);
  for (auto [shape, n] : servedBy())
    std::printf(" %s %d", shape.c_str(), n);
  std::printf("\n");
  return failures ? kFail : kPass;
}

DDTC_TEST("nest-kernels", nestKernels) {
  int failures = 0, cases = 0, refused = 0;
  // Random nests may be too deep for the nest kernels (refused, counted);
  // the large ones must be served.
  auto check = [&](const std::string &text, int64_t count,
                   std::mt19937_64 &rng, bool print, bool mustServe) {
    SpecFile spec;
    std::string error;
    if (!parseSpec("t = " + text + "\n", "nest", spec, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      ++failures;
      return;
    }
    const Datatype &t = *spec.bindings.back().type;
    if (t.layout().size == 0)
      return;
    ++cases;
    std::string nests, why = checkNests(t, count, rng, nests);
    if (why.empty() && nests.empty()) {
      if (mustServe)
        why = "no nest kernel serves a strided layout";
      else
        ++refused;
    }
    if (print || !why.empty())
      std::printf("%s %s x %lld: %s\n", why.empty() ? "ok  " : "FAIL",
                  text.c_str(), (long long)count,
                  why.empty() ? nests.c_str() : why.c_str());
    failures += !why.empty();
  };
  std::mt19937_64 rng(20261123);
  // Large strided layouts, the first two of more blocks than
  // DDTC_GENERIC_MAX_UNITS allows work units for (2^18): only the nest
  // kernels serve them at once.
  const char *large[] = {
      "vector(300000, 1, 3, double)",
      "hvector(270000, 3, 7, char)",
      "subarray([40, 70, 60], [38, 68, 57], [1, 1, 2], C, float)",
      "vector(5000, 2, -4, contiguous(3, short))",
      "hvector(3, 1, 400000, vector(30000, 1, 2, int))",
      "struct([1, 1], [0, 400000], [vector(50000, 1, 2, int), "
      "vector(20000, 3, 5, char)])",
  };
  for (const char *l : large)
    check(l, 1, rng, /*print=*/true, /*mustServe=*/true);
  int64_t n = 200;
  if (const char *e = std::getenv("DDTC_TEST_RANDOM_TYPES"))
    n = std::atoll(e);
  for (int64_t i = 0; i < n; ++i) {
    std::mt19937_64 caseRng(randomCaseSeed(20261123, static_cast<uint64_t>(i)));
    check(randomStridedSpec(caseRng), 1 + static_cast<int64_t>(caseRng() % 3),
          caseRng, /*print=*/i < 8, /*mustServe=*/false);
  }
  std::printf("%d strided cases, %d failed, %d too deep for the nest "
              "kernels; kernels used:",
              cases, failures, refused);
  for (auto [shape, k] : servedBy())
    std::printf(" %s %d", shape.c_str(), k);
  std::printf("\n");
  return failures ? kFail : kPass;
}

/// Ranges the copy test also moved as rows (splitIntoRowBlocks).
int &rowCopies() {
  static int n = 0;
  return n;
}

/// A buffer holding the bytes `count` instances of `type` touch, its origin
/// `shift` bytes past a 16-byte boundary.
struct OriginBuffer {
  std::vector<unsigned char> bytes;
  unsigned char *origin = nullptr;
  OriginBuffer(const Datatype &type, int64_t count, int shift,
               unsigned char fill) {
    int64_t lo = 0, hi = 0;
    std::string error;
    touchedSpan(type, count, lo, hi, error);
    bytes.assign(static_cast<size_t>(hi - lo + 64), fill);
    unsigned char *base = bytes.data() + 16;
    base += (16 - reinterpret_cast<uintptr_t>(base) % 16) % 16;
    origin = base + shift - lo;
  }
};

/// Names the first byte where two destination buffers of one size differ.
std::string firstDifference(const OriginBuffer &got, const OriginBuffer &want) {
  size_t at = 0;
  while (at < got.bytes.size() && got.bytes[at] == want.bytes[at])
    ++at;
  return "destination byte " + std::to_string(at) + " differs";
}

/// Checks the copy kernel from `count` instances of `src` to `dstCount` of
/// `dst` against the reference pack of the one and unpack into the other:
/// whole and partial ranges, capped grids, origins at odd offsets. Empty
/// when it passed or the pair has no copy kernel (`served` says which).
std::string checkCopy(const Datatype &src, int64_t count, const Datatype &dst,
                      int64_t dstCount, std::mt19937_64 &rng, bool &served) {
  served = false;
  KernelPlan sp, dp;
  std::string error;
  if (!planKernel(src, sp, error) || !planKernel(dst, dp, error))
    return "planKernel failed: " + error;
  std::vector<Nest> sn, dn;
  if (!splitIntoNests(sp.layout, sn, error) ||
      !splitIntoNests(dp.layout, dn, error))
    return "";
  const NestSide from = {streamNest(sn, sp.layout.size), sp.layout.size,
                         sp.layout.extent, count};
  const NestSide to = {streamNest(dn, dp.layout.size), dp.layout.size,
                       dp.layout.extent, dstCount};
  if (!from.nest || !to.nest)
    return "";
  served = true;
  const int64_t total = packedSize(src, count);
  if (packedSize(dst, dstCount) != total)
    return "the two sides' packed sizes differ";
  const int width = std::min(from.nest->width, to.nest->width);
  ++servedBy()["nest copy " + nestShapeKey(width)];
  for (int shift : {0, 1 + static_cast<int>(rng() % 15)})
    for (auto [lo, hi] : rangesOf(total, rng))
      for (int64_t cap : {int64_t(0), 1 + static_cast<int64_t>(rng() % 3)}) {
        OriginBuffer in(src, count, shift, 0);
        for (unsigned char &b : in.bytes)
          b = static_cast<unsigned char>(rng());
        std::vector<unsigned char> packed(static_cast<size_t>(total));
        referencePack(src, count, in.origin, packed.data());
        const int dstShift = static_cast<int>(rng() % 16);
        OriginBuffer want(dst, dstCount, dstShift, 0xA5);
        OriginBuffer got(dst, dstCount, dstShift, 0xA5);
        referenceUnpackRange(dst, dstCount, packed.data(), lo, hi, want.origin);
        LaunchConfig cfg = computeNestCopyLaunch(from, to, lo, hi, cap);
        // No load may leave the source instances' span (the kernel loads
        // whole aligned vectors around records only inside it).
        int64_t spanLo = 0, spanHi = 0;
        std::string spanError;
        touchedSpan(src, count, spanLo, spanHi, spanError);
        ddtcEmuWatchReads(in.bytes.data(), in.bytes.data() + in.bytes.size(),
                          in.origin + spanLo, in.origin + spanHi);
        const std::string where =
            " (range [" + std::to_string(lo) + ", " + std::to_string(hi) +
            "), cap " + std::to_string(cap) + ", shifts " +
            std::to_string(shift) + "/" + std::to_string(dstShift) + ")";
        if (!cfg.error.empty())
          return "computeNestCopyLaunch: " + cfg.error + where;
        if (cfg.grid > 0 &&
            !launchNestCopyKernel(width, cfg, in.origin, got.origin))
          return "no copy kernel of width " + std::to_string(width);
        const void *strayAt = nullptr;
        unsigned long long strayBytes = 0;
        if (ddtcEmuStrayRead(strayAt, strayBytes))
          return "a load of " + std::to_string(strayBytes) +
                 " bytes outside the source's span" + where;
        if (got.bytes != want.bytes)
          return firstDifference(got, want) + where;
        // The same range as rows for a copy engine (rows of any length
        // here), the edges that cut a row by the kernel.
        std::vector<RowBlock> rows;
        int64_t rowsLo = 0, rowsHi = 0;
        if (!splitIntoRowBlocks(from, to, lo, hi, 1, rows, rowsLo, rowsHi))
          continue;
        ++rowCopies();
        OriginBuffer byRows(dst, dstCount, dstShift, 0xA5);
        int64_t covered = rowsLo;
        for (const RowBlock &r : rows) {
          if (r.lo != covered || r.hi <= r.lo ||
              r.hi - r.lo != r.width * r.height * r.depth)
            return "row blocks do not tile [" + std::to_string(rowsLo) + ", " +
                   std::to_string(rowsHi) + ")" + where;
          covered = r.hi;
          for (int64_t z = 0; z < r.depth; ++z)
            for (int64_t y = 0; y < r.height; ++y)
              std::memcpy(byRows.origin + r.dstOffset + y * r.dstPitch +
                              z * r.dstRowsPerPlane * r.dstPitch,
                          in.origin + r.srcOffset + y * r.srcPitch +
                              z * r.srcRowsPerPlane * r.srcPitch,
                          static_cast<size_t>(r.width));
        }
        if (covered != rowsHi || rowsLo < lo || rowsHi > hi)
          return "row blocks cover [" + std::to_string(rowsLo) + ", " +
                 std::to_string(covered) + ")" + where;
        for (auto [a, b] : {std::pair{lo, rowsLo}, std::pair{rowsHi, hi}}) {
          LaunchConfig edge = computeNestCopyLaunch(from, to, a, b, cap);
          if (!edge.error.empty())
            return "computeNestCopyLaunch: " + edge.error + where;
          if (edge.grid > 0 &&
              !launchNestCopyKernel(width, edge, in.origin, byRows.origin))
            return "no copy kernel of width " + std::to_string(width);
        }
        if (byRows.bytes != want.bytes)
          return firstDifference(byRows, want) + ", rows by a copy engine" +
                 where;
      }
  return "";
}

DDTC_TEST("nest-copy", nestCopy) {
  int failures = 0, cases = 0, served = 0;
  auto parse = [&](const std::string &text,
                   SpecFile &spec) -> const Datatype * {
    std::string error;
    if (!parseSpec("t = " + text + "\n", "copy", spec, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      ++failures;
      return nullptr;
    }
    return spec.bindings.back().type.get();
  };
  auto check = [&](const std::string &a, int64_t ca, const std::string &b,
                   int64_t cb, std::mt19937_64 &rng, bool print,
                   bool mustServe) {
    SpecFile sa, sb;
    const Datatype *ta = parse(a, sa), *tb = parse(b, sb);
    if (!ta || !tb || ta->layout().size == 0)
      return;
    ++cases;
    bool ok = false;
    std::string why = checkCopy(*ta, ca, *tb, cb, rng, ok);
    if (why.empty() && !ok && mustServe)
      why = "no copy kernel for a pair of stream nests";
    served += ok;
    if (print || !why.empty())
      std::printf(
          "%s %s x %lld -> %s x %lld: %s\n", why.empty() ? "ok  " : "FAIL",
          a.c_str(), (long long)ca, b.c_str(), (long long)cb,
          why.empty() ? (ok ? "copied" : "no copy kernel") : why.c_str());
    failures += !why.empty();
  };
  std::mt19937_64 rng(20261129);
  // The shapes of the transfers between GPUs: the same vector both sides,
  // a vector into contiguous memory and back, a face of a cube, records
  // whose length no word divides, a column of blocks at a 4-byte offset.
  check("vector(1000, 2, 3, double)", 2, "vector(1000, 2, 3, double)", 2, rng,
        true, true);
  check("vector(1000, 2, 3, double)", 1, "contiguous(2000, double)", 1, rng,
        true, true);
  check("double", 3000, "vector(1000, 3, 7, double)", 1, rng, true, true);
  check("subarray([30, 40, 50], [30, 40, 1], [0, 0, 7], C, double)", 1,
        "subarray([30, 40, 50], [30, 40, 1], [0, 0, 42], C, double)", 1, rng,
        true, true);
  // Rows in planes (the interior of a cube) into the same and into a
  // column of rows.
  check("subarray([12, 10, 40], [10, 8, 33], [1, 1, 3], C, double)", 2,
        "subarray([12, 10, 40], [10, 8, 33], [1, 1, 3], C, double)", 2, rng,
        true, true);
  check("subarray([12, 10, 40], [10, 8, 33], [1, 1, 3], C, double)", 1,
        "vector(80, 33, 40, double)", 1, rng, true, true);
  check("hvector(300, 1, 48, contiguous(41, char))", 1,
        "hvector(300, 1, 44, contiguous(41, char))", 1, rng, true, true);
  check("hvector(500, 1, 260, contiguous(64, int))", 1,
        "hvector(64000, 2, 3, char)", 1, rng, true, true);
  int64_t n = 120;
  if (const char *e = std::getenv("DDTC_TEST_RANDOM_TYPES"))
    n = std::atoll(e);
  for (int64_t i = 0; i < n; ++i) {
    std::mt19937_64 caseRng(randomCaseSeed(20261129, static_cast<uint64_t>(i)));
    const std::string a = randomStridedSpec(caseRng);
    const int64_t ca = 1 + static_cast<int64_t>(caseRng() % 3);
    SpecFile sa;
    const Datatype *ta = parse(a, sa);
    if (!ta || ta->layout().size == 0)
      continue;
    const int64_t total = ta->layout().size * ca;
    // The same type, contiguous bytes, or blocks of bytes that divide the
    // stream, spread apart.
    std::string b = a;
    int64_t cb = ca;
    switch (caseRng() % 3) {
    case 1:
      b = "contiguous(" + std::to_string(total) + ", char)";
      cb = 1;
      break;
    case 2: {
      int64_t block = 1 + static_cast<int64_t>(caseRng() % 40);
      while (total % block != 0)
        --block;
      b = "hvector(" + std::to_string(total / block) + ", " +
          std::to_string(block) + ", " +
          std::to_string(block + static_cast<int64_t>(caseRng() % 9)) +
          ", char)";
      cb = 1;
      break;
    }
    default:
      break;
    }
    check(a, ca, b, cb, caseRng, /*print=*/i < 6, /*mustServe=*/false);
  }
  std::printf("%d pairs, %d copied by one kernel, %d ranges also as rows, "
              "%d failed; kernels used:",
              cases, served, rowCopies(), failures);
  for (auto [shape, k] : servedBy())
    std::printf(" %s %d", shape.c_str(), k);
  std::printf("\n");
  // Random strided types mostly are stream nests: a test that copied none
  // would prove nothing.
  return failures || served < cases / 4 || rowCopies() < cases / 4 ? kFail
                                                                   : kPass;
}

/// Checks the units copy kernel between `srcCount` and `dstCount` instances
/// of one type map against the reference pack of the one and unpack into the
/// other: whole and partial ranges, capped grids, each side at its own offset
/// past a 16-byte boundary, and the units cut long as for very large
/// instances. Loads outside the unit's source bytes fail it.
std::string checkUnitsCopy(const Datatype &type, int64_t srcCount,
                           int64_t dstCount, std::mt19937_64 &rng, bool &served,
                           int64_t maxCutUnits = 0) {
  served = false;
  KernelPlan spec, g;
  if (std::string why = unitsPlanOf(type, maxCutUnits, spec, g); !why.empty())
    return why;
  std::string error;
  // Short units have chunk kernels, which have no copy (ddtc_copy leaves
  // such types to a pack and an unpack).
  if (unitsByChunks(g))
    return "";
  served = true;
  ++servedBy()["units copy w" + std::to_string(g.width)];
  std::vector<long long> table;
  for (int64_t v : encodeUnitTable(g))
    table.push_back(v);
  const int64_t count = std::min(srcCount, dstCount);
  const int64_t total = packedSize(type, count);
  for (int shift : {0, 1 + static_cast<int>(rng() % 15)})
    for (auto [lo, hi] : rangesOf(total, rng))
      for (int64_t cap : {int64_t(0), 1 + static_cast<int64_t>(rng() % 3)}) {
        OriginBuffer in(type, srcCount, shift, 0);
        for (unsigned char &b : in.bytes)
          b = static_cast<unsigned char>(rng());
        std::vector<unsigned char> packed(
            static_cast<size_t>(packedSize(type, srcCount)));
        referencePack(type, srcCount, in.origin, packed.data());
        const int dstShift = static_cast<int>(rng() % 16);
        OriginBuffer want(type, dstCount, dstShift, 0xA5);
        OriginBuffer got(type, dstCount, dstShift, 0xA5);
        referenceUnpackRange(type, dstCount, packed.data(), lo, hi,
                             want.origin);
        LaunchConfig cfg = computeLaunch(g, count, lo, hi, cap, /*pack=*/true,
                                         UnitsKernels::Planned);
        const std::string where =
            " (range [" + std::to_string(lo) + ", " + std::to_string(hi) +
            "), cap " + std::to_string(cap) + ", shifts " +
            std::to_string(shift) + "/" + std::to_string(dstShift) +
            ", width " + std::to_string(g.width) + ")";
        if (!cfg.error.empty())
          return "computeLaunch: " + cfg.error + where;
        // The source bytes the call may read: the instances' touched span.
        int64_t spanLo = 0, spanHi = 0;
        touchedSpan(type, srcCount, spanLo, spanHi, error);
        ddtcEmuWatchReads(in.bytes.data(), in.bytes.data() + in.bytes.size(),
                          in.origin + spanLo, in.origin + spanHi);
        if (cfg.grid > 0 && !launchUnitsCopyKernel(g.width, cfg, in.origin,
                                                   got.origin, table.data()))
          return "no units copy kernel of width " + std::to_string(g.width);
        const void *at = nullptr;
        unsigned long long bytes = 0;
        if (ddtcEmuStrayRead(at, bytes))
          return "a load of " + std::to_string(bytes) +
                 " bytes outside the source's span" + where;
        if (got.bytes != want.bytes)
          return firstDifference(got, want) + where;
      }
  return "";
}

/// The units copy kernel (ddtc_copy between two buffers of one type map
/// that are not stream nests) on fixed and random types.
DDTC_TEST("units-copy", unitsCopy) {
  int64_t n = 120;
  if (const char *e = std::getenv("DDTC_TEST_RANDOM_TYPES"))
    n = std::atoll(e);
  int failures = 0, cases = 0, served = 0;
  auto check = [&](const Datatype &t, int64_t a, int64_t b, std::mt19937_64 &r,
                   int64_t maxCutUnits, bool print) {
    ++cases;
    bool ok = false;
    const std::string why = checkUnitsCopy(t, a, b, r, ok, maxCutUnits);
    served += ok;
    failures += !why.empty();
    if (print || !why.empty())
      std::printf("%s %s x %lld -> x %lld: %s\n", why.empty() ? "ok  " : "FAIL",
                  printSpecExpr(t).c_str(), (long long)a, (long long)b,
                  !why.empty() ? why.c_str()
                  : ok         ? "copied"
                               : "short units: no copy kernel");
  };
  std::mt19937_64 rng(20261130);
  // A lower triangle of columns (the shape of a pulled triangle), records
  // of several fields, short irregular runs, blocks of bytes at odd places.
  const char *fixed[] = {
      "indexed([9, 8, 7, 6, 5, 4, 3, 2, 1], [0, 10, 20, 30, 40, 50, 60, 70, "
      "80], double)",
      "contiguous(50, resized(0, 48, struct([3, 3, 1, 1], [0, 24, 36, 40], "
      "[double, float, int, char])))",
      "indexed([1, 3, 2, 1, 2, 3, 1], [0, 2, 7, 11, 13, 17, 22], double)",
      "indexed([300, 200, 500], [1, 400, 1000], char)",
      "hindexed([5, 17, 33, 2], [3, 40, 90, 200], int)",
  };
  for (const char *f : fixed) {
    SpecFile spec;
    std::string error;
    if (!parseSpec(std::string("t = ") + f + "\n", "fixed", spec, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return kFail;
    }
    const Datatype &t = *spec.bindings.back().type;
    for (auto [a, b] : {std::pair<int64_t, int64_t>{1, 1}, {3, 2}}) {
      check(t, a, b, rng, 0, true);
      check(t, a, b, rng, /*maxCutUnits=*/1, false);
    }
  }
  RandomDatatypeOptions opts;
  opts.maxDepth = 4;
  opts.maxSpan = 1 << 15;
  opts.maxPackedSize = 1 << 14;
  opts.maxPieces = 600;
  for (int64_t i = 0; i < n; ++i) {
    std::mt19937_64 caseRng(randomCaseSeed(20261130, static_cast<uint64_t>(i)));
    RandomDatatypeCase c = generateRandomDatatype(caseRng, opts);
    if (c.type->layout().size == 0)
      continue;
    const int64_t dstCount = 1 + static_cast<int64_t>(caseRng() % 3);
    check(*c.type, c.count, dstCount, caseRng, i % 4 == 0 ? 2 : 0, false);
    // Runs long enough for warps: columns of a triangle or random blocks of
    // words at random places.
    const int64_t blocks = 1 + static_cast<int64_t>(caseRng() % 40);
    const char *elems[] = {"char", "short", "int", "double", "long double"};
    std::string lens, displs;
    for (int64_t k = 0, at = 0; k < blocks; ++k) {
      const int64_t len = 8 + static_cast<int64_t>(caseRng() % 300);
      at += static_cast<int64_t>(caseRng() % 50);
      lens += (k ? ", " : "") + std::to_string(len);
      displs += (k ? ", " : "") + std::to_string(at);
      at += len;
    }
    SpecFile spec;
    std::string error;
    if (!parseSpec("t = indexed([" + lens + "], [" + displs + "], " +
                       elems[caseRng() % 5] + ")\n",
                   "random", spec, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return kFail;
    }
    check(*spec.bindings.back().type, 1 + static_cast<int64_t>(caseRng() % 3),
          dstCount, caseRng, 0, false);
  }
  std::printf("%d pairs, %d copied by the units copy kernel, %d failed; "
              "kernels used:",
              cases, served, failures);
  for (auto [shape, k] : servedBy())
    std::printf(" %s %d", shape.c_str(), k);
  std::printf("\n");
  // Most long-run cases take the kernel: a test that copied few would
  // prove little.
  return failures || served < cases / 4 ? kFail : kPass;
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
