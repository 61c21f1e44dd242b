//===- CanonicalLayout.cpp - Normalization of datatype trees --------------===//
//
// lowerToCanonical walks the constructor tree once. Every constructor places
// copies of its old type; copies at a constant stride become a dimension of
// a strided nest, irregular placements a sequence of segments. When a nest
// would have to repeat several segments, those are flattened into one run
// table first (the nest repeats a single table). That flattening is the only
// step whose cost grows with the runs rather than the description, so it is
// the one that checks kMaxTableRuns.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/CanonicalLayout.h"
#include "CheckedMath.h"
#include "Layout.h"

#include <algorithm>
#include <sstream>

namespace ddtc {

int64_t Segment::points() const {
  int64_t n = 1;
  for (const Dim &d : dims)
    n *= d.count;
  return n;
}

int64_t Segment::pointBytes() const {
  int64_t n = 0;
  for (const Run &r : runs)
    n += r.length;
  return n;
}

int64_t Segment::packedBytes() const { return points() * pointBytes(); }

int64_t countRuns(const CanonicalLayout &layout) {
  int64_t total = 0;
  for (const Segment &s : layout.segments) {
    int64_t points = 1, n = 0;
    for (const Dim &d : s.dims)
      if (__builtin_mul_overflow(points, std::max<int64_t>(d.count, 0),
                                 &points))
        return INT64_MAX;
    if (__builtin_mul_overflow(points, static_cast<int64_t>(s.runs.size()),
                               &n) ||
        __builtin_add_overflow(total, n, &total))
      return INT64_MAX;
  }
  return total;
}

namespace {

using Segments = std::vector<Segment>;

/// Calls `fn(point offset)` for the nest points of `seg`, in pack order,
/// while it returns true.
template <typename Fn> void forEachPointWhile(const Segment &seg, Fn fn) {
  size_t nd = seg.dims.size();
  for (const Dim &d : seg.dims)
    if (d.count <= 0)
      return;
  std::vector<int64_t> idx(nd, 0);
  int64_t at = seg.offset;
  while (true) {
    if (!fn(at))
      return;
    size_t k = nd;
    while (k-- > 0) {
      at += seg.dims[k].stride;
      if (++idx[k] < seg.dims[k].count)
        break;
      at -= seg.dims[k].stride * seg.dims[k].count;
      idx[k] = 0;
    }
    if (k == static_cast<size_t>(-1))
      return;
  }
}

/// Calls `fn(point offset)` for every nest point of `seg`, in pack order.
template <typename Fn> void forEachPoint(const Segment &seg, Fn fn) {
  forEachPointWhile(seg, [&](int64_t at) {
    fn(at);
    return true;
  });
}

void shift(Segments &segs, int64_t by) {
  for (Segment &s : segs)
    s.offset += by;
}

void append(Segments &to, Segments from) {
  for (Segment &s : from)
    to.push_back(std::move(s));
}

/// A repeated group of segments is flattened into one table, unless the
/// table would hold more than kMinRunsToUnroll runs and copying the group
/// takes at most kMaxUnrolledSegments segments (each costs the strided
/// kernel a few parameters).
constexpr int64_t kMinRunsToUnroll = 1024;
constexpr int64_t kMaxUnrolledSegments = 64;

/// One walk of a constructor tree. After a failure (a table over
/// kMaxTableRuns) every step returns nothing and `error` says why.
class Lowering {
public:
  std::string error;

  Segments lower(const Datatype &t);

private:
  /// The runs of `segs` (one instance, origin 0), merged; fails (empty)
  /// when they would be more than kMaxTableRuns.
  std::vector<Run> materialize(const Segments &segs);
  /// `count` copies of `segs`, `stride` bytes apart.
  Segments repeat(Segments segs, int64_t count, int64_t stride);
  /// `n` copies of `old` one extent apart, from `disp`.
  Segments block(const Datatype &old, int64_t n, int64_t disp);
  /// Subarray and darray: `owned[d]` are the owned index blocks of
  /// dimension d; dimensions nest from the slowest (outermost) to the
  /// fastest.
  Segments lowerArray(const Datatype &t,
                      const std::vector<std::vector<IndexBlockRun>> &owned);
};

std::vector<Run> Lowering::materialize(const Segments &segs) {
  CanonicalLayout probe;
  probe.segments = segs;
  int64_t n = countRuns(probe);
  if (n > kMaxTableRuns) {
    error =
        "repeating a group of " + std::to_string(segs.size()) +
        " differently shaped pieces needs a table of " +
        (n == INT64_MAX ? std::string("more than 2^63") : std::to_string(n)) +
        " runs, more than the " + std::to_string(kMaxTableRuns) +
        " a plan may list";
    return {};
  }
  std::vector<Run> runs;
  std::function<void(const Run &)> push = [&](const Run &r) {
    runs.push_back(r);
  };
  RunMerger merger(push);
  for (const Segment &seg : segs)
    forEachPoint(seg, [&](int64_t at) {
      for (const Run &r : seg.runs)
        merger.add(at + r.offset, r.length);
    });
  merger.flush();
  return runs;
}

Segments Lowering::repeat(Segments segs, int64_t count, int64_t stride) {
  if (count <= 0 || segs.empty() || !error.empty())
    return {};
  if (count == 1)
    return segs;
  Segment seg;
  if (segs.size() == 1) {
    seg = std::move(segs.front());
  } else {
    // A few copies of a group whose table would be long (a cyclic darray
    // row of many blocks that ends with a shorter one, repeated by a short
    // outer dimension) stay nests, one segment per copy.
    CanonicalLayout probe;
    probe.segments = segs;
    int64_t copies = 0;
    if (!__builtin_mul_overflow(count, static_cast<int64_t>(segs.size()),
                                &copies) &&
        copies <= kMaxUnrolledSegments && countRuns(probe) > kMinRunsToUnroll) {
      Segments out;
      for (int64_t i = 0; i < count; ++i)
        for (Segment s : segs) {
          s.offset += i * stride;
          out.push_back(std::move(s));
        }
      return out;
    }
    seg.runs = materialize(segs);
    if (!error.empty())
      return {};
    seg.offset = 0;
  }
  seg.dims.insert(seg.dims.begin(), Dim{count, stride});
  return {std::move(seg)};
}

Segments Lowering::block(const Datatype &old, int64_t n, int64_t disp) {
  Segments segs = repeat(lower(old), n, old.layout().extent);
  shift(segs, disp);
  return segs;
}

Segments
Lowering::lowerArray(const Datatype &t,
                     const std::vector<std::vector<IndexBlockRun>> &owned) {
  const TypeArgs &a = t.args();
  const Datatype &old = *t.child();
  int64_t ext = old.layout().extent;
  size_t nd = a.sizes.size();
  std::vector<int64_t> weight(nd);
  int64_t w = 1;
  for (size_t k = 0; k < nd; ++k) {
    size_t d = a.order == Order::C ? nd - 1 - k : k;
    weight[d] = w;
    w *= a.sizes[d];
  }
  Segments inner = lower(old);
  for (size_t k = 0; k < nd; ++k) { // from the fastest dimension out
    size_t d = a.order == Order::C ? nd - 1 - k : k;
    const int64_t step = weight[d] * ext;
    Segments level;
    for (const IndexBlockRun &b : owned[d]) {
      // A block of consecutive indices, then `count` such blocks at a
      // constant step: two nest dimensions however many blocks there are.
      Segments part =
          repeat(repeat(inner, b.length, step), b.count, b.step * step);
      shift(part, b.start * step);
      append(level, std::move(part));
    }
    inner = std::move(level);
  }
  return inner;
}

Segments Lowering::lower(const Datatype &t) {
  if (!error.empty())
    return {};
  const TypeArgs &a = t.args();
  switch (a.kind) {
  case Kind::Primitive: {
    const PrimitiveInfo &p = getPrimitiveInfo(a.primitive);
    Segment seg;
    seg.runs.push_back({0, p.len0});
    if (p.len1 > 0)
      seg.runs.push_back({p.off1, p.len1});
    return {seg};
  }
  case Kind::Contiguous:
    return block(*t.child(), a.count, 0);
  case Kind::Vector:
  case Kind::HVector: {
    int64_t stride = a.kind == Kind::Vector
                         ? a.stride * t.child()->layout().extent
                         : a.stride;
    return repeat(block(*t.child(), a.blocklen, 0), a.count, stride);
  }
  case Kind::Indexed:
  case Kind::HIndexed:
  case Kind::IndexedBlock:
  case Kind::HIndexedBlock: {
    int64_t ext = t.child()->layout().extent;
    Segments segs;
    for (size_t i = 0; i < a.displs.size(); ++i)
      append(segs, block(*t.child(), getBlockLength(a, i),
                         getBlockDisplacement(a, i, ext)));
    return segs;
  }
  case Kind::Struct: {
    Segments segs;
    for (size_t i = 0; i < a.displs.size(); ++i)
      append(segs, block(*t.child(i), a.blocklens[i], a.displs[i]));
    return segs;
  }
  case Kind::Subarray: {
    std::vector<std::vector<IndexBlockRun>> owned(a.sizes.size());
    for (size_t d = 0; d < a.sizes.size(); ++d)
      owned[d] = {{a.starts[d], a.subsizes[d], 1, 0}};
    return lowerArray(t, owned);
  }
  case Kind::Darray: {
    std::vector<std::vector<IndexBlockRun>> owned(a.sizes.size());
    for (unsigned d = 0; d < a.sizes.size(); ++d)
      owned[d] = darrayOwnedRuns(a, d);
    return lowerArray(t, owned);
  }
  case Kind::Resized:
  case Kind::Dup:
    return lower(*t.child());
  }
  return {};
}

/// Merges touching runs of one table.
bool mergeRuns(std::vector<Run> &runs) {
  std::vector<Run> out;
  for (const Run &r : runs) {
    if (r.length <= 0)
      continue;
    if (!out.empty() && out.back().offset + out.back().length == r.offset)
      out.back().length += r.length;
    else
      out.push_back(r);
  }
  bool changed = out != runs;
  runs = std::move(out);
  return changed;
}

/// Folds dimensions that add nothing or continue a run or an outer step.
bool foldDims(Segment &seg) {
  bool changed = false;
  // Count-1 dimensions place one copy at index 0.
  for (size_t i = 0; i < seg.dims.size();) {
    if (seg.dims[i].count == 1) {
      seg.dims.erase(seg.dims.begin() + i);
      changed = true;
    } else {
      ++i;
    }
  }
  // The innermost dimension continues a single run.
  while (!seg.dims.empty() && seg.runs.size() == 1 &&
         seg.dims.back().stride == seg.runs.front().length) {
    seg.runs.front().length *= seg.dims.back().count;
    seg.dims.pop_back();
    changed = true;
  }
  // An outer step that equals the whole inner dimension.
  for (size_t i = 0; i + 1 < seg.dims.size();) {
    Dim &outer = seg.dims[i], &inner = seg.dims[i + 1];
    if (outer.stride == inner.count * inner.stride) {
      inner.count *= outer.count;
      seg.dims.erase(seg.dims.begin() + i);
      changed = true;
    } else {
      ++i;
    }
  }
  return changed;
}

/// Makes a table start at offset 0 relative to the segment.
bool anchorRuns(Segment &seg) {
  int64_t first = seg.runs.front().offset;
  if (first == 0)
    return false;
  seg.offset += first;
  for (Run &r : seg.runs)
    r.offset -= first;
  return true;
}

} // namespace

bool simplifyLayout(CanonicalLayout &layout) {
  bool changed = false;
  Segments out;
  for (Segment &seg : layout.segments) {
    changed |= mergeRuns(seg.runs);
    bool empty = seg.runs.empty();
    for (const Dim &d : seg.dims)
      empty |= d.count <= 0;
    if (empty) {
      changed = true;
      continue;
    }
    changed |= foldDims(seg);
    changed |= anchorRuns(seg);
    // Two point segments in a row are one table.
    if (!out.empty() && out.back().dims.empty() && seg.dims.empty()) {
      // Appended run by run (merging at the seam only): a table built from
      // many blocks stays linear to build.
      Segment &prev = out.back();
      for (const Run &r : seg.runs) {
        Run shifted{seg.offset + r.offset - prev.offset, r.length};
        Run &last = prev.runs.back();
        if (last.offset + last.length == shifted.offset)
          last.length += shifted.length;
        else
          prev.runs.push_back(shifted);
      }
      changed = true;
      continue;
    }
    out.push_back(std::move(seg));
  }
  layout.segments = std::move(out);
  return changed;
}

bool lowerToCanonical(const Datatype &type, CanonicalLayout &out,
                      std::string &error) {
  CanonicalLayout layout;
  layout.size = type.layout().size;
  layout.lb = type.layout().lb;
  layout.extent = type.layout().extent;
  Lowering lowering;
  layout.segments = lowering.lower(type);
  if (!lowering.error.empty()) {
    error = lowering.error;
    return false;
  }
  while (simplifyLayout(layout)) {
  }
  out = std::move(layout);
  return true;
}

namespace {

/// Rewrites a run table made of `groups` equal groups of runs, each group
/// the first one shifted by a constant step, as a dimension over one group.
/// Takes the smallest group (the most regular reading).
bool tableToDim(Segment &seg) {
  size_t n = seg.runs.size();
  for (size_t p = 1; p * 2 <= n; ++p) {
    if (n % p != 0)
      continue;
    int64_t step = seg.runs[p].offset - seg.runs[0].offset;
    bool regular = true;
    for (size_t i = p; i < n && regular; ++i) {
      const Run &r = seg.runs[i], &base = seg.runs[i - p];
      regular = r.length == base.length && r.offset - base.offset == step;
    }
    if (!regular)
      continue;
    seg.runs.resize(p);
    seg.dims.push_back(Dim{static_cast<int64_t>(n / p), step});
    return true;
  }
  return false;
}

/// Rewrites consecutive segments that are the same nest at a constant step
/// as one segment with one more (outer) dimension.
bool segmentsToDim(Segments &segs) {
  bool changed = false;
  Segments out;
  for (size_t i = 0; i < segs.size();) {
    size_t j = i + 1;
    int64_t step = 0;
    if (j < segs.size() && segs[j].dims == segs[i].dims &&
        segs[j].runs == segs[i].runs) {
      step = segs[j].offset - segs[i].offset;
      while (j < segs.size() && segs[j].dims == segs[i].dims &&
             segs[j].runs == segs[i].runs &&
             segs[j].offset - segs[j - 1].offset == step)
        ++j;
    }
    Segment seg = std::move(segs[i]);
    if (j - i >= 2) {
      seg.dims.insert(seg.dims.begin(), Dim{static_cast<int64_t>(j - i), step});
      changed = true;
    } else {
      j = i + 1;
    }
    out.push_back(std::move(seg));
    i = j;
  }
  segs = std::move(out);
  return changed;
}

} // namespace

bool detectVectors(CanonicalLayout &layout) {
  bool changed = false, again = true;
  while (again) {
    again = false;
    for (Segment &seg : layout.segments)
      while (tableToDim(seg))
        again = true;
    again |= segmentsToDim(layout.segments);
    again |= simplifyLayout(layout);
    changed |= again;
  }
  return changed;
}

std::vector<Run> flattenLayout(const CanonicalLayout &layout, int64_t count) {
  std::vector<Run> runs;
  std::function<void(const Run &)> push = [&](const Run &r) {
    runs.push_back(r);
  };
  RunMerger merger(push);
  for (int64_t i = 0; i < count; ++i)
    for (const Segment &seg : layout.segments)
      forEachPoint(seg, [&](int64_t at) {
        for (const Run &r : seg.runs)
          merger.add(i * layout.extent + at + r.offset, r.length);
      });
  merger.flush();
  return runs;
}

std::string describeLayout(const CanonicalLayout &layout) {
  std::ostringstream os;
  os << "size " << layout.size << ", lb " << layout.lb << ", extent "
     << layout.extent << ", " << layout.segments.size() << " segment(s)";
  for (const Segment &seg : layout.segments) {
    os << "\n  at " << seg.offset << ": ";
    for (const Dim &d : seg.dims)
      os << d.count << " x " << d.stride << "B, ";
    if (seg.isStrided())
      os << "run of " << seg.runs.front().length << "B";
    else
      os << "table of " << seg.runs.size() << " runs (" << seg.pointBytes()
         << "B)";
  }
  return os.str();
}

double estimateReadAmplification(const CanonicalLayout &layout,
                                 int64_t granule) {
  const double g = static_cast<double>(granule);
  double read = 0, packed = 0;
  for (const Segment &seg : layout.segments) {
    // A nest point: its bytes, the memory from its first byte to its last
    // (span), and what reading it costs.
    double bytes = 0, runs = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Run &r : seg.runs) {
      bytes += static_cast<double>(r.length);
      runs += static_cast<double>(r.length) + g - 1;
      lo = std::min(lo, r.offset);
      hi = std::max(hi, r.offset + r.length);
    }
    double span = static_cast<double>(hi - lo);
    double cost = std::max(bytes, std::min(runs, span + g - 1));
    // Each dimension, innermost first, repeats the block below it: the
    // copies cost what they cost apart, but no more than the memory they
    // span together (copies closer than a piece share it).
    for (size_t d = seg.dims.size(); d-- > 0;) {
      const double n = static_cast<double>(seg.dims[d].count);
      const int64_t stride = seg.dims[d].stride;
      const double step = static_cast<double>(stride < 0 ? -stride : stride);
      bytes *= n;
      span += (n - 1) * step;
      cost = std::max(bytes, std::min(n * cost, span + g - 1));
    }
    read += cost;
    packed += bytes;
  }
  return packed > 0 ? read / packed : 1.0;
}

double countedStridedRead(const CanonicalLayout &layout, int64_t count,
                          int64_t granule) {
  if (granule <= 0 || count <= 0 || layout.segments.size() != 1 ||
      layout.size <= 0)
    return 0;
  const Segment &seg = layout.segments[0];
  if (!seg.isStrided())
    return 0;
  const int64_t len = seg.runs[0].length;
  const int64_t r = (seg.offset + seg.runs[0].offset) % granule;
  // Every block starts r bytes into a piece and touches this many.
  const int64_t pieces =
      ((r < 0 ? r + granule : r) + len + granule - 1) / granule;
  // Innermost level first, the instances outermost: each level's stride a
  // multiple of the piece and beyond the span of the levels inside it, so
  // no two blocks share a piece.
  std::vector<Dim> levels(seg.dims.rbegin(), seg.dims.rend());
  if (count > 1)
    levels.push_back({count, layout.extent});
  int64_t span = pieces * granule;
  Checked c;
  for (const Dim &d : levels) {
    if (d.count <= 1)
      continue;
    const int64_t stride = d.stride < 0 ? -d.stride : d.stride;
    if (stride % granule != 0 || stride < span)
      return 0;
    span = c.add(c.mul(d.count - 1, stride), span);
    if (c.overflowed)
      return 0;
  }
  return static_cast<double>(pieces * granule) / static_cast<double>(len);
}

double estimateWriteAmplification(const CanonicalLayout &layout,
                                  int64_t maxRuns) {
  constexpr int64_t kSector = 32, kSectorsPerLine = 4, kLineRead = 96;
  // The sample: whole instances' runs (an instance may fill the sectors of
  // the one before) until maxRuns are listed.
  std::vector<Run> runs;
  const size_t cap = static_cast<size_t>(std::max<int64_t>(maxRuns, 1));
  for (int64_t i = 0; runs.size() < cap; ++i) {
    const size_t before = runs.size();
    for (const Segment &seg : layout.segments) {
      forEachPointWhile(seg, [&](int64_t at) {
        for (const Run &r : seg.runs)
          runs.push_back({i * layout.extent + at + r.offset, r.length});
        return runs.size() < cap;
      });
      if (runs.size() >= cap)
        break;
    }
    if (runs.size() == before || layout.extent <= 0)
      break;
  }
  if (runs.empty())
    return 1.0;
  auto byOffset = [](const Run &a, const Run &b) {
    return a.offset < b.offset;
  };
  if (!std::is_sorted(runs.begin(), runs.end(), byOffset)) // most are
    std::sort(runs.begin(), runs.end(), byOffset);
  auto floorDiv = [](int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
  };
  double bytes = 0, sectors = 0, partialLines = 0;
  int64_t sector = INT64_MIN, filled = 0, lastPartialLine = INT64_MIN;
  auto close = [&]() {
    if (sector == INT64_MIN)
      return;
    ++sectors;
    const int64_t line = floorDiv(sector, kSectorsPerLine);
    if (filled < kSector && line != lastPartialLine) {
      ++partialLines;
      lastPartialLine = line;
    }
  };
  int64_t end = INT64_MIN; // the end of the runs so far (they may overlap)
  for (const Run &r : runs) {
    const int64_t a = std::max(r.offset, end), b = r.offset + r.length;
    if (b <= a)
      continue;
    end = b;
    bytes += static_cast<double>(b - a);
    const int64_t first = floorDiv(a, kSector), last = floorDiv(b - 1, kSector);
    if (first != sector) {
      close();
      sector = first;
      filled = 0;
    }
    if (first == last) {
      filled += b - a;
      continue;
    }
    filled += (first + 1) * kSector - a;
    close();
    sectors += static_cast<double>(last - first - 1); // whole ones
    sector = last;
    filled = b - last * kSector;
  }
  close();
  return (static_cast<double>(kSector) * sectors +
          static_cast<double>(kLineRead) * partialLines) /
         bytes;
}

} // namespace ddtc
