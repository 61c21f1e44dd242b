//===- Explain.cpp - How the kernels of a type were planned ---------------===//

#include "ddtc/Target/CUDA/Explain.h"

#include "ddtc/Core/CanonicalLayout.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/NestKernel.h"
#include "ddtc/Target/CUDA/RecordPeriodKernel.h"
#include "ddtc/Target/CUDA/RecordUnpackKernel.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <sstream>

namespace ddtc {

namespace {

/// What ddtc_copy does between two buffers of this one type map where the
/// type is no stream nest: the units copy kernel of its work-unit plan
/// (planWorkUnits), when its units are long enough for a warp each.
std::string copyWithinTypeMap(const CanonicalLayout &layout) {
  const char *lead = "; between two buffers of this type: ";
  if (countRuns(layout) > kMaxTableRuns)
    return std::string(lead) + "no (too many runs to list)";
  KernelPlan g;
  std::string error;
  if (!planWorkUnits(layout, g, error))
    return std::string(lead) + "no (" + error + ")";
  const int64_t mean = layout.size / std::max<int64_t>(1, g.units.size());
  if (unitsByChunks(g))
    return std::string(lead) + "no (work units of " + std::to_string(mean) +
           " B on average: too short for a warp each)";
  return std::string(lead) + "yes, the units copy kernel (" +
         std::to_string(g.units.size()) + " work units of " +
         std::to_string(mean) + " B on average, a warp each)";
}

/// Writes `text` with `indent` before every line.
void printIndented(std::ostream &os, const std::string &text,
                   const char *indent) {
  size_t start = 0;
  while (true) {
    size_t end = text.find('\n', start);
    os << indent << text.substr(start, end - start) << "\n";
    if (end == std::string::npos)
      return;
    start = end + 1;
  }
}

/// The decimal digits of n >= 0 (sector counts times 32 pass 2^63).
std::string decimal(__int128 n) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + n % 10));
    n /= 10;
  } while (n > 0);
  return digits;
}

/// "N B", with the size in the largest binary unit that fits after it.
std::string bytes(__int128 n) {
  std::string s = decimal(n) + " B";
  const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  if (u >= 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " (%.1f %s)", v, units[u]);
    s += buf;
  }
  return s;
}
} // namespace

int64_t countSectors(std::vector<Run> runs) {
  const int64_t sector = 32;
  auto floorDiv = [](int64_t a, int64_t b) {
    return a / b - (a % b != 0 && a < 0);
  };
  std::vector<std::pair<int64_t, int64_t>> spans;
  spans.reserve(runs.size());
  for (const Run &r : runs)
    spans.push_back({floorDiv(r.offset, sector),
                     floorDiv(r.offset + r.length - 1, sector)});
  std::sort(spans.begin(), spans.end());
  int64_t count = 0, end = INT64_MIN; // sectors counted up to `end`
  for (auto [a, b] : spans) {
    if (b <= end)
      continue;
    count += b - std::max(a, end == INT64_MIN ? a : end + 1) + 1;
    end = b;
  }
  return count;
}

std::string explainKernels(const std::string &name, const Datatype &type,
                           const KernelPlan &plan, int64_t count) {
  std::ostringstream os;
  const CanonicalLayout &l = plan.layout;
  const bool units = plan.family == KernelFamily::Units;
  os << "type " << name << ": " << printSpecExpr(type) << "\n";
  os << "canonical layout:\n";
  printIndented(os, describeLayout(l), "  ");
  os << "passes:\n";
  for (const std::string &note : plan.notes)
    printIndented(os, note, "  ");
  os << "kernel: " << getKernelFamilyName(plan.family) << " family, width "
     << plan.width << " bytes (buffers aligned to " << plan.width
     << "; less-aligned buffers take the byte path, but libddtc runs a "
        "less-aligned origin through the type shifted by its offset)\n";
  if (units) {
    int64_t wide = 0;
    for (const WorkUnit &u : plan.units)
      wide += u.wide;
    if (unitsByChunks(plan))
      os << "  threads: one per 16-byte chunk of the packed stream (the units "
            "are "
         << plan.layout.size / static_cast<int64_t>(plan.units.size())
         << " bytes on average), " << plan.threadsPerBlock
         << " per block, a block taking " << getChunkUnitsGroup(plan)
         << " consecutive work items at a time"
         << (unitsWordUnpack(plan) ? "; the unpack one " +
                                         std::to_string(plan.width) +
                                         "-byte word per thread"
                                   : std::string())
         << "\n";
    else
      os << "  threads: one warp (32 threads) per work unit, "
         << plan.threadsPerBlock << " per block\n";
    os << "  work units: " << plan.units.size() << " per instance (" << wide
       << " wide), at most " << plan.unitBytes << " bytes each\n";
    if (!plan.unpackUnits.empty())
      os << "  unpack order: by origin offset for calls of whole instances "
            "(libddtc; a second table of the units sorted so, as their "
            "stores in packed order scatter over sectors), packed order "
            "otherwise\n";
  } else if (plan.tileDim >= 0) {
    os << "  kernels: tile pack and unpack (" << kTileElems << "x"
       << kTileElems << " elements of dimension " << plan.tileDim
       << " and the innermost one through shared memory; each side read and "
          "written along the dimension consecutive in its buffer)\n"
       << "  threads: one block of " << plan.threadsPerBlock
       << " per tile (grid-stride over the tiles of the range)\n";
  } else {
    auto variant = [&](bool pack) {
      if (pack && isRecordPeriodPlan(plan))
        return "by period (a block stages its periods' source spans in "
               "shared memory with coalesced word loads; a thread assembles "
               "one period's packed words from fixed words of its span)";
      if (isRecordPeriodPlan(plan))
        return "by period (a block stages its periods' packed words in "
               "shared memory; a thread assembles one period's span words; "
               "the block stores their run bytes, coalesced)";
      if (stridedVariant(plan, pack) == StridedVariant::Wide)
        return "wide (one width-byte access per chunk)";
      if (stridedVariant(plan, pack) == StridedVariant::Window)
        return "window (a block reads the runs of its 16-byte chunks, gaps "
               "included, into a shared window with aligned 16-byte loads)";
      if (stridedVariant(plan, pack) == StridedVariant::RunAligned)
        return hasRecords(plan.layout)
                   ? "run-aligned (one 16-byte destination vector of one "
                     "point per thread, aligned in the destination, its "
                     "pieces loaded at once)"
                   : "run-aligned (one 16-byte destination vector of one run "
                     "per thread, aligned in the destination)";
      if (!pack && stridedUnpackPhase(plan) >= 0)
        return "gather (16-byte chunks aligned in the destination: uniform "
               "phase)";
      return "gather (16-byte chunks aligned in the packed buffer)";
    };
    os << "  kernels: pack " << variant(true) << ", unpack " << variant(false)
       << "\n";
    if (isRecordPeriodPlan(plan)) {
      const PeriodGeometry g = getPeriodGeometry(plan);
      os << "  threads: pack one per period of " << g.points << " point(s) ("
         << g.packed << " packed bytes from " << g.span << " source bytes), "
         << plan.threadsPerBlock << " per block, a block taking " << g.rows
         << " periods a step"
         << (periodRestartsRows(plan)
                 ? " (rows restart: a tile inside one row as one span; "
                   "where rows are at least a tile long, a tile across a "
                   "row end as two spans loaded together; else a row piece "
                   "at a time; no period crosses a row)"
                 : "")
         << "; the same to unpack";
    } else if (stridedVariant(plan, true) == StridedVariant::Window)
      os << "  threads: pack one per " << stridedBatch(plan, true)
         << " chunks of " << stridedLaunchChunkBytes(plan)
         << " bytes of the packed stream, " << plan.threadsPerBlock
         << " per block, a block taking " << stridedBatch(plan, true) << " x "
         << plan.threadsPerBlock
         << " consecutive chunks through its window; unpack one per "
         << (stridedBatch(plan, false) == 1
                 ? std::string("chunk")
                 : std::to_string(stridedBatch(plan, false)) + " chunks");
    else if (const int64_t k = stridedBatch(plan, true); k > 1)
      os << "  threads: one per " << k << " chunks of "
         << stridedLaunchChunkBytes(plan)
         << " bytes of the packed stream, a launch apart, loaded together, "
         << plan.threadsPerBlock << " per block";
    else
      os << "  threads: one per " << stridedLaunchChunkBytes(plan)
         << "-byte chunk of the packed stream, " << plan.threadsPerBlock
         << " per block";
    if (stridedVariant(plan, false) == StridedVariant::RunAligned &&
        !isRecordPeriodPlan(plan))
      os << " (the unpack kernel loops over "
         << runAlignedSlots(getPointSpan(plan)) << " destination vectors per "
         << (hasRecords(plan.layout) ? "point" : "run")
         << (runAlignedPhaseUniform(plan)
                 ? ", one fewer where the runs' common place modulo 16 "
                   "leaves the last out"
                 : "")
         << ")";
    os << "\n";
    if (unpackFillsSectors(plan))
      os << "  unpack: where a run of " << kFillMinRun << " B to "
         << kFillMaxRun / 1024
         << " KiB starts or ends inside a 32-byte sector, the sector is "
            "prefetched into L2 before the stores\n";
    os << "  byte path: "
       << (plan.needsBytePath ? "yes (some chunks straddle runs or start "
                                "unaligned)"
                              : "only at the edges of a partial range")
       << "\n";
  }
  os << "  shape: " << kernelShapeKey(plan)
     << " (layouts of one shape share one compiled kernel)\n";
  std::vector<Nest> nests;
  std::string notSplit;
  if (splitIntoNests(plan.layout, nests, notSplit) &&
      nestsBeatPlan(plan, nests))
    os << "  the runtime launches the built-in nest kernels instead (whole "
          "aligned words, one run per point: faster than the period "
          "kernels)\n";
  // Whether ddtc_copy (and so a pulled message's one copy) serves the type.
  os << "copy between layouts (ddtc_copy): ";
  if (!notSplit.empty() && nests.empty())
    os << "no (" << notSplit << ")\n";
  else if (const Nest *n = streamNest(nests, plan.layout.size))
    os << "yes, blocks of " << n->length
       << " B in pack order (a copy engine moves them where both sides' "
          "blocks are rows of one length of at least DDTC_COPY_ENGINE_ROWS "
          "bytes)\n";
  else
    os << "no (" << nests.size()
       << " nest(s) whose blocks do not follow each other in pack order)"
       << copyWithinTypeMap(plan.layout) << "\n";
  const int64_t packed = packedSize(type, count);
  LaunchConfig cfg = computeLaunch(plan, count, 0, packed, 0, true);
  LaunchConfig unpackCfg = computeLaunch(plan, count, 0, packed, 0, false);
  os << "launch for " << count << " instance(s), whole range: grid " << cfg.grid
     << " x " << cfg.block << " threads";
  if (unpackCfg.grid != cfg.grid)
    os << " to pack, " << unpackCfg.grid << " x " << unpackCfg.block
       << " to unpack";
  os << "\n";
  // Counting sectors lists every run: only for types with a bounded number.
  int64_t runs = 0;
  if (__builtin_mul_overflow(countRuns(plan.layout), count, &runs) ||
      runs > kMaxTableRuns) {
    os << "memory traffic for " << count << " instance(s): not counted (more "
       << "than " << kMaxTableRuns << " runs)\n";
    return os.str();
  }
  // In 128 bits: the bytes of the sectors of a type near 2^63 bytes pass
  // it.
  const __int128 sectors = countSectors(flattenLayout(plan.layout, count));
  const __int128 packedSectors = (__int128(packed) + 31) / 32;
  os << "memory traffic for " << count << " instance(s) (reads in 32-byte "
     << "sectors, buffers 32-byte aligned):\n"
     << "  pack:   reads " << bytes(sectors * 32) << " (" << decimal(sectors)
     << " sectors), writes " << bytes(packed) << "\n"
     << "  unpack: reads " << bytes(packedSectors * 32) << " ("
     << decimal(packedSectors) << " sectors), writes " << bytes(packed)
     << "\n";
  if (sectors > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%",
                  100.0 * static_cast<double>(packed) /
                      static_cast<double>(sectors * 32));
    os << "  useful share of the sectors the pack reads: " << buf << "\n";
  }
  // What libddtc-mpi's pipeline model takes the type's kernels to move.
  char est[96];
  std::snprintf(est, sizeof est,
                "%.2f read by a pack (64-byte pieces), %.2f moved by an "
                "unpack",
                estimateReadAmplification(plan.layout, 64),
                estimateWriteAmplification(plan.layout));
  os << "  model estimates, bytes of memory per packed byte: " << est << "\n";
  return os.str();
}

} // namespace ddtc
