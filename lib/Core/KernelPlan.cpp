//===- KernelPlan.cpp - Access width and work units of a kernel -----------===//

#include "ddtc/Core/KernelPlan.h"

#include <algorithm>

namespace ddtc {

namespace {

/// The largest power of two (<= 16) dividing every value; 16 for none.
int64_t commonAlignment(const std::vector<int64_t> &values) {
  int64_t w = 16;
  for (int64_t v : values)
    while (w > 1 && v % w != 0)
      w /= 2;
  return w;
}

/// Calls `fn(src, packed, length)` for every run of one instance.
template <typename Fn>
void forEachRunOfInstance(const CanonicalLayout &l, Fn fn) {
  int64_t packed = 0;
  for (const Run &r : flattenLayout(l, 1)) {
    fn(r.offset, packed, r.length);
    packed += r.length;
  }
}

std::string str(int64_t v) { return std::to_string(v); }

} // namespace

bool hasRecords(const CanonicalLayout &layout) {
  return std::any_of(layout.segments.begin(), layout.segments.end(),
                     [](const Segment &s) { return !s.isStrided(); });
}

namespace {
/// The runs of one nest point of every segment together.
int64_t countPointRuns(const CanonicalLayout &layout) {
  int64_t runs = 0;
  for (const Segment &s : layout.segments)
    runs += static_cast<int64_t>(s.runs.size());
  return runs;
}
} // namespace

bool fitsStridedFamily(const CanonicalLayout &layout, int64_t maxPointRuns) {
  if (std::any_of(layout.segments.begin(), layout.segments.end(),
                  [](const Segment &s) { return s.runs.empty(); }))
    return false;
  if (hasRecords(layout))
    return countPointRuns(layout) <= std::min(maxPointRuns, kMaxPointRuns);
  return static_cast<int64_t>(layout.segments.size()) <= kMaxStridedSegments ||
         countRuns(layout) > kMaxTableRuns;
}

bool recordAsUnits(const CanonicalLayout &layout, int64_t width) {
  return width >= 4 && hasRecords(layout) &&
         countPointRuns(layout) >= kUnitsRecordMinRuns &&
         countRuns(layout) <= kUnitsRecordMaxRuns;
}

KernelPlan makeInitialPlan(const CanonicalLayout &layout) {
  KernelPlan plan;
  plan.layout = layout;
  return plan;
}

bool alignAccesses(KernelPlan &plan, std::string &error, int64_t maxPointRuns) {
  const CanonicalLayout &l = plan.layout;
  // Every source position of a run (offsets, strides, instance extent) and
  // every run length: when all are multiples of w, every run is w-aligned at
  // both ends on both sides.
  std::vector<int64_t> strict = {l.extent};
  int64_t longest = 0;
  for (const Segment &s : l.segments) {
    for (const Dim &d : s.dims)
      strict.push_back(d.stride);
    for (const Run &r : s.runs) {
      strict.push_back(s.offset + r.offset);
      strict.push_back(r.length);
      longest = std::max(longest, r.length);
    }
  }
  // Only the distance between each run's source and packed positions (and
  // its growth per instance, extent - size): when all are multiples of w, a
  // run's bytes are w-aligned on both sides at the same places, so it splits
  // into a prologue, an aligned body and an epilogue.
  // Both positions are affine in the nest indices, so their distance is too:
  // its value at index 0 for every run, plus its step along every dimension
  // (stride minus the packed bytes the inner dimensions cover).
  std::vector<int64_t> shifted = {l.extent - l.size};
  int64_t segmentStart = 0;
  for (const Segment &s : l.segments) {
    int64_t inPoint = 0;
    for (const Run &r : s.runs) {
      shifted.push_back(s.offset + r.offset - (segmentStart + inPoint));
      inPoint += r.length;
    }
    int64_t inner = s.pointBytes();
    for (size_t d = s.dims.size(); d-- > 0;) {
      shifted.push_back(s.dims[d].stride - inner);
      inner *= s.dims[d].count;
    }
    segmentStart += s.packedBytes();
  }
  int64_t strictWidth = commonAlignment(strict);
  int64_t width = std::max(strictWidth, commonAlignment(shifted));
  // A width longer than every run is never used.
  while (width > 1 && width > longest)
    width /= 2;
  strictWidth = std::min(strictWidth, width);

  const bool asUnits =
      (!fitsStridedFamily(l, maxPointRuns) || recordAsUnits(l, width)) &&
      l.size > 0;
  // A strided kernel moves whole chunks of the width; a chunk that straddles
  // two runs, or starts off the strict alignment, takes the byte path. Where
  // the runs are short, such chunks are many (runs of 40 bytes 56 apart: one
  // 16-byte chunk of every five straddles), so the strict width, at which
  // every chunk lies aligned in one run, is the better choice.
  if (!asUnits && strictWidth >= 4 && strictWidth < width &&
      longest < kWordWidthMaxRun)
    width = strictWidth;

  KernelPlan aligned = plan;
  aligned.width = width;
  aligned.needsBytePath = strictWidth < width || l.size % width != 0;
  aligned.units.clear();
  if (asUnits) {
    int64_t split = 0;
    if (!listPieces(aligned, split, error))
      return false;
    aligned.notes.push_back("alignment-prologues: width " + str(width) + "; " +
                            str(split) +
                            " run(s) split into prologue, wide body, epilogue");
  } else {
    if (static_cast<int64_t>(l.segments.size()) > kMaxStridedSegments) {
      error = "the layout has " + str(l.segments.size()) +
              " segments and more runs than a unit table lists (" +
              str(kMaxTableRuns) + "); a strided kernel takes at most " +
              str(kMaxStridedSegments) + " segments";
      return false;
    }
    aligned.notes.push_back(
        "alignment-prologues: width " + str(width) +
        (aligned.needsBytePath
             ? "; some chunks straddle runs or start unaligned"
             : "; every chunk is aligned and inside one run"));
  }
  plan = std::move(aligned);
  return true;
}

bool listPieces(KernelPlan &plan, int64_t &split, std::string &error) {
  const CanonicalLayout &l = plan.layout;
  const int64_t runs = countRuns(l);
  if (runs > kMaxTableRuns) {
    error = "one instance has " +
            (runs == INT64_MAX ? std::string("more than 2^63")
                               : std::to_string(runs)) +
            " runs, more than the " + std::to_string(kMaxTableRuns) +
            " a work-unit table may list";
    return false;
  }
  const int64_t width = plan.width;
  UnitTable pieces;
  split = 0;
  forEachRunOfInstance(l, [&](int64_t src, int64_t packed, int64_t len) {
    // Bytes before the first source byte aligned to the width.
    int64_t head =
        std::min(len, (width - ((src % width) + width) % width) % width);
    int64_t body = (len - head) / width * width;
    int64_t tail = len - head - body;
    if (head > 0)
      pieces.push_back({packed, src, head, false});
    if (body > 0)
      pieces.push_back({packed + head, src + head, body, width > 1});
    if (tail > 0)
      pieces.push_back({packed + head + body, src + head + body, tail, false});
    split += head > 0 || tail > 0;
  });
  plan.units = std::move(pieces);
  return true;
}

void cutWorkUnits(KernelPlan &plan, int64_t maxCutUnits) {
  int64_t total = 0;
  for (const WorkUnit &piece : plan.units)
    total += piece.length;
  int64_t unit = kUnitBytes;
  while (total / unit > std::max<int64_t>(maxCutUnits, 1))
    unit *= 2;
  UnitTable units;
  for (const WorkUnit &piece : plan.units)
    // Steps that never pass the piece's end: at + unit may not fit in 64
    // bits for a piece close to 2^63 bytes.
    for (int64_t at = 0, len; at < piece.length; at += len) {
      len = std::min(unit, piece.length - at);
      units.push_back({piece.packed + at, piece.src + at, len, piece.wide});
    }
  plan.family = KernelFamily::Units;
  plan.unitBytes = unit;
  plan.units = std::move(units);
}

bool planWorkUnits(const CanonicalLayout &layout, KernelPlan &out,
                   std::string &error) {
  KernelPlan plan = makeInitialPlan(layout);
  if (!alignAccesses(plan, error))
    return false;
  // alignAccesses lists pieces only for layouts that are not all strided
  // nests; work units need them for every layout.
  int64_t split = 0;
  if (plan.units.empty() && layout.size > 0 && !listPieces(plan, split, error))
    return false;
  cutWorkUnits(plan);
  out = std::move(plan);
  return true;
}

bool balanceWorkUnits(KernelPlan &plan) {
  // Alignment listed pieces exactly when the layout does not fit the
  // strided family (at the bound it was given).
  if (plan.units.empty()) {
    bool changed = plan.family != KernelFamily::Strided;
    plan.family = KernelFamily::Strided;
    plan.units.clear();
    plan.unitBytes = 0;
    plan.notes.push_back(
        "stair-balancing: every segment is a strided nest of at most " +
        str(kMaxPointRuns) + " runs per point; one thread per " +
        str(plan.width) + "-byte chunk, no work units");
    return changed;
  }
  int64_t longest = 0, shortest = INT64_MAX;
  for (const WorkUnit &piece : plan.units) {
    longest = std::max(longest, piece.length);
    shortest = std::min(shortest, piece.length);
  }
  const KernelPlan before = plan;
  cutWorkUnits(plan);
  plan.notes.push_back("stair-balancing: " + str(before.units.size()) +
                       " piece(s) of " +
                       str(shortest == INT64_MAX ? 0 : shortest) + ".." +
                       str(longest) + " bytes cut into " +
                       str(plan.units.size()) + " work unit(s) of at most " +
                       str(plan.unitBytes) + " bytes, " +
                       str(plan.layout.size /
                           std::max<int64_t>(1, plan.units.size())) +
                       " on average");
  return before.family != plan.family || before.units != plan.units ||
         before.unitBytes != plan.unitBytes;
}

namespace {

/// The share of the bytes of each 32-byte sector that a warp uses when its
/// lanes move consecutive `len`-byte elements `stride` bytes apart, in
/// 1/32: len / min(max(|stride|, len), 32) sectors' worth.
int64_t sectorUse32(int64_t len, int64_t stride) {
  int64_t step = stride < 0 ? -stride : stride;
  step = std::min<int64_t>(std::max(step, len), 32);
  return 32 * len / step;
}

} // namespace

bool detectTransposeTiles(KernelPlan &plan) {
  const int before = plan.tileDim;
  plan.tileDim = -1;
  const CanonicalLayout &l = plan.layout;
  auto note = [&](const std::string &text) {
    plan.notes.push_back("transpose-tiles: " + text);
    return before != plan.tileDim;
  };
  if (plan.family != KernelFamily::Strided || l.segments.size() != 1)
    return note("no (not a strided plan of one segment)");
  const Segment &seg = l.segments.front();
  if (!seg.isStrided())
    return note("no (a nest point has several runs)");
  const int64_t len = seg.runs.front().length;
  const size_t nd = seg.dims.size();
  // Elements moved with whole aligned accesses: the tile kernel copies an
  // element as len / width accesses and keeps no byte path inside a run.
  if (plan.needsBytePath || len > 16 || len % plan.width != 0 || nd < 2)
    return note("no (the run is not one aligned element of at most 16 bytes "
                "in a nest of two or more dimensions)");
  const Dim &inner = seg.dims.back();
  // The strided kernel's lanes step along the innermost dimension; a tile's
  // along the chosen one on the origin side, and along the innermost one on
  // the packed side (contiguous). Take the dimension that uses sectors
  // best, if that at least doubles the scattered side's use.
  const int64_t scattered = sectorUse32(len, inner.stride);
  int best = -1;
  int64_t bestUse = 0;
  for (size_t d = 0; d + 1 < nd; ++d) {
    const Dim &dim = seg.dims[d];
    const int64_t step = dim.stride < 0 ? -dim.stride : dim.stride;
    if (step == 0 || step % len != 0 || step / len > 4 || dim.count < 4)
      continue;
    const int64_t use = sectorUse32(len, dim.stride);
    if (use >= 2 * scattered && use >= bestUse) {
      best = static_cast<int>(d);
      bestUse = use;
    }
  }
  if (best < 0 || inner.count < 4)
    return note("no (no dimension of 4 or more elements 1 to 4 elements apart "
                "that uses sectors twice as well as the innermost one, of "
                "stride " +
                str(inner.stride) + ")");
  plan.tileDim = best;
  return note("dimension " + str(best) + " (stride " +
              str(seg.dims[best].stride) + ") against the innermost (stride " +
              str(inner.stride) + "): " + str(kTileElems) + "x" +
              str(kTileElems) + " tiles of " + str(len) +
              "-byte elements through shared memory, sector use " +
              str(scattered) + "/32 -> " + str(bestUse) + "/32");
}

bool planKernel(const Datatype &type, KernelPlan &out, std::string &error,
                const PlanOptions &options) {
  CanonicalLayout layout;
  if (!lowerToCanonical(type, layout, error))
    return false;
  KernelPlan plan = makeInitialPlan(layout);
  plan.notes.push_back("normalize: " + describeLayout(layout));
  bool vectors = detectVectors(plan.layout);
  plan.notes.push_back(
      vectors ? "vector-detection: " + describeLayout(plan.layout)
              : "vector-detection: no regular table or segment sequence");
  if (!alignAccesses(plan, error, options.maxPointRuns))
    return false;
  balanceWorkUnits(plan);
  if (options.tiles)
    detectTransposeTiles(plan);
  out = std::move(plan);
  return true;
}

const char *getKernelFamilyName(KernelFamily family) {
  return family == KernelFamily::Strided ? "strided" : "units";
}

} // namespace ddtc
