//===- PlanCache.cpp - Kernel plans kept on disk --------------------------===//
//
// Encoding: 64-bit integers in native byte order (a cache belongs to one
// machine):
//   kPlanFormatVersion, family, width, needsBytePath, unitBytes,
//   threadsPerBlock, size, lb, extent,
//   segments, then per segment: offset, dims, (count, stride) per dim,
//     runs, (offset, length) per run,
//   units (how many work units the pieces cut into),
//   pieces, then (packed, src, length, wide) per piece: the work units with
//     each run of full units (unitBytes long) that continue one another
//     joined, so that cutting the pieces at unitBytes, as cutWorkUnits
//     does, gives the units back exactly, from a file a fraction the size.
// Reading cuts the pieces once into the plan's units, which are the unit
// table the kernels read as they lie in memory, sized once from the unit
// count: a new process builds no table and grows no array item by item.
// Every count is checked against the bytes left (or, for the units,
// the most a plan may hold) before anything is sized by it, and the decoded
// plan against the type, in one pass over it, before it is used.
//===----------------------------------------------------------------------===//

#include "PlanCache.h"

#include "Config.h"

#include <algorithm>
#include <cstring>

#ifndef DDTC_VERSION
#error "DDTC_VERSION must be defined by the build"
#endif

namespace ddtc::rt {

namespace {

class Reader {
public:
  explicit Reader(const std::string &bytes) : bytes_(bytes) {}
  bool next(int64_t &v) {
    if (bytes_.size() - at_ < sizeof v)
      return false;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return true;
  }
  /// A count of items of `words` integers each that the bytes left can hold.
  bool count(int64_t &n, size_t words) {
    return next(n) && n >= 0 &&
           static_cast<uint64_t>(n) <= (bytes_.size() - at_) / (8 * words);
  }
  bool done() const { return at_ == bytes_.size(); }

private:
  const std::string &bytes_;
  size_t at_ = 0;
};

bool decodeRaw(const std::string &bytes, KernelPlan &p, std::string &why) {
  Reader r(bytes);
  int64_t version = -1, family, width, bytePath, segments, units, pieces;
  if (!r.next(version) || version != kPlanFormatVersion) {
    why = "plan format " + std::to_string(version) + ", expected " +
          std::to_string(kPlanFormatVersion);
    return false;
  }
  int64_t threads;
  why = "truncated or malformed plan";
  if (!r.next(family) || !r.next(width) || !r.next(bytePath) ||
      !r.next(p.unitBytes) || !r.next(threads) || !r.next(p.layout.size) ||
      !r.next(p.layout.lb) || !r.next(p.layout.extent) || !r.count(segments, 3))
    return false;
  if (family != static_cast<int64_t>(KernelFamily::Strided) &&
      family != static_cast<int64_t>(KernelFamily::Units))
    return false;
  p.family = static_cast<KernelFamily>(family);
  p.width = width;
  p.needsBytePath = bytePath != 0;
  p.threadsPerBlock = static_cast<int>(threads);
  if (threads != p.threadsPerBlock)
    return false;
  p.layout.segments.resize(static_cast<size_t>(segments));
  for (Segment &s : p.layout.segments) {
    int64_t dims, runs;
    if (!r.next(s.offset) || !r.count(dims, 2))
      return false;
    s.dims.resize(static_cast<size_t>(dims));
    for (Dim &d : s.dims)
      if (!r.next(d.count) || !r.next(d.stride))
        return false;
    if (!r.count(runs, 2))
      return false;
    s.runs.resize(static_cast<size_t>(runs));
    for (Run &run : s.runs)
      if (!r.next(run.offset) || !r.next(run.length))
        return false;
  }
  // The unit count sizes the arrays: bounded by what a plan may hold, then
  // met exactly by the pieces.
  if (!r.next(units) || units < 0 || units > kMaxTableRuns + kMaxCutUnits ||
      !r.count(pieces, 4) || pieces > units)
    return false;
  if (units > 0 && p.unitBytes <= 0)
    return false;
  const size_t n = static_cast<size_t>(units);
  p.units.reserve(n);
  for (int64_t i = 0; i < pieces; ++i) {
    int64_t packed, src, length, wide;
    if (!r.next(packed) || !r.next(src) || !r.next(length) || !r.next(wide) ||
        length <= 0 || (wide != 0 && wide != 1))
      return false;
    // Cut as cutWorkUnits does; steps that never pass the piece's end.
    for (int64_t off = 0, len; off < length; off += len) {
      if (p.units.size() == n)
        return false;
      len = std::min(p.unitBytes, length - off);
      p.units.push_back({packed + off, src + off, len, wide});
    }
  }
  return p.units.size() == n && r.done();
}

/// Whether `p` is a plan of `type` that the kernels can run safely.
bool checkAgainst(const KernelPlan &p, const Datatype &type, std::string &why) {
  const LayoutInfo &info = type.layout();
  const CanonicalLayout &l = p.layout;
  if (l.size != info.size || l.lb != info.lb || l.extent != info.extent) {
    why = "the plan's size, lb or extent differ from the type's";
    return false;
  }
  if (!(p.width == 1 || p.width == 2 || p.width == 4 || p.width == 8 ||
        p.width == 16) ||
      p.threadsPerBlock <= 0 || p.threadsPerBlock > 1024 ||
      p.threadsPerBlock % 32 != 0) {
    why = "the plan's width or block size is not one the planner picks";
    return false;
  }
  const __int128 lo = info.trueLb, hi = info.trueUb();
  __int128 packed = 0;
  if (p.family == KernelFamily::Strided && !fitsStridedFamily(l)) {
    why = "the plan's segments have more runs than its family takes";
    return false;
  }
  for (const Segment &s : l.segments) {
    if (s.runs.empty()) {
      why = "a segment of the plan has no runs";
      return false;
    }
    __int128 low = s.offset, high = s.offset, points = 1, pointBytes = 0;
    __int128 first = INT64_MAX, last = INT64_MIN;
    for (const Run &r : s.runs) {
      if (r.length <= 0) {
        why = "a run of the plan is empty";
        return false;
      }
      first = std::min<__int128>(first, r.offset);
      last =
          std::max<__int128>(last, static_cast<__int128>(r.offset) + r.length);
      pointBytes += r.length;
    }
    for (const Dim &d : s.dims) {
      if (d.count <= 0) {
        why = "a dimension of the plan is empty";
        return false;
      }
      const __int128 span = static_cast<__int128>(d.count - 1) * d.stride;
      (span < 0 ? low : high) += span;
      points *= d.count;
      if (points > INT64_MAX) {
        why = "a segment of the plan is too large";
        return false;
      }
    }
    if (low + first < lo || high + last > hi) {
      why = "the plan reaches outside the type's true bounds";
      return false;
    }
    packed += points * pointBytes;
    if (packed > INT64_MAX)
      break;
  }
  if (packed != l.size) {
    why = "the plan's segments do not add up to the type's size";
    return false;
  }
  if (p.family == KernelFamily::Strided) {
    if (!p.units.empty()) {
      why = "a strided plan lists work units";
      return false;
    }
    return true;
  }
  int64_t at = 0;
  // The width is a power of two (checked above): a mask, not a division per
  // unit, which cost this loop most of its time.
  const int64_t mask = p.width - 1;
  for (const WorkUnit &u : p.units) {
    if (u.packed != at || u.length <= 0 || u.length > p.unitBytes ||
        (u.wide != 0 && u.wide != 1) ||
        u.src < lo || static_cast<__int128>(u.src) + u.length > hi ||
        (u.wide && ((u.src | u.length) & mask) != 0)) {
      why = "the plan's work units do not tile the instance within its bounds";
      return false;
    }
    at += u.length;
  }
  if (at != l.size) {
    why = "the plan's work units do not cover the instance";
    return false;
  }
  return true;
}

} // namespace

Hash128 planCacheKey(const Hash128 &tree) {
  Hasher h;
  h.add("ddtc plan cache key");
  h.add(static_cast<int64_t>(kCacheFormatVersion));
  h.add(kPlanFormatVersion);
  h.add(DDTC_VERSION);
  h.add(&tree, sizeof tree);
  return h.finish();
}

std::string encodePlan(const KernelPlan &p) {
  std::vector<int64_t> w = {kPlanFormatVersion,
                            static_cast<int64_t>(p.family),
                            p.width,
                            p.needsBytePath ? 1 : 0,
                            p.unitBytes,
                            p.threadsPerBlock,
                            p.layout.size,
                            p.layout.lb,
                            p.layout.extent,
                            static_cast<int64_t>(p.layout.segments.size())};
  for (const Segment &s : p.layout.segments) {
    w.push_back(s.offset);
    w.push_back(static_cast<int64_t>(s.dims.size()));
    for (const Dim &d : s.dims) {
      w.push_back(d.count);
      w.push_back(d.stride);
    }
    w.push_back(static_cast<int64_t>(s.runs.size()));
    for (const Run &r : s.runs) {
      w.push_back(r.offset);
      w.push_back(r.length);
    }
  }
  w.push_back(static_cast<int64_t>(p.units.size()));
  const size_t piecesAt = w.size();
  w.push_back(0);
  int64_t pieces = 0;
  for (size_t i = 0; i < p.units.size(); ++i) {
    const WorkUnit &u = p.units[i];
    const size_t last = w.size() - 4;
    if (i > 0 && p.units[i - 1].length == p.unitBytes &&
        w[last] + w[last + 2] == u.packed &&
        w[last + 1] + w[last + 2] == u.src && w[last + 3] == u.wide) {
      w[last + 2] += u.length;
      continue;
    }
    w.push_back(u.packed);
    w.push_back(u.src);
    w.push_back(u.length);
    w.push_back(u.wide);
    ++pieces;
  }
  w[piecesAt] = pieces;
  return std::string(reinterpret_cast<const char *>(w.data()), w.size() * 8);
}

bool decodePlan(const std::string &bytes, const Datatype &type, KernelPlan &out,
                std::string &why) {
  KernelPlan p;
  if (!decodeRaw(bytes, p, why) || !checkAgainst(p, type, why))
    return false;
  p.notes.push_back("plan read from the disk cache");
  out = std::move(p);
  return true;
}

bool loadPlan(const DiskCache &disk, const Hash128 &tree, const Datatype &type,
              const std::string &name, KernelPlan &out) {
  const Hash128 key = planCacheKey(tree);
  std::string payload, why;
  switch (disk.load(key, payload, why)) {
  case DiskCache::Lookup::Missing:
    return false;
  case DiskCache::Lookup::Rejected:
    logVerbose("disk cache plan of type " + name + " ignored: " + why);
    return false;
  case DiskCache::Lookup::Hit:
    break;
  }
  if (!decodePlan(payload, type, out, why)) {
    logVerbose("disk cache plan of type " + name + " in " +
               disk.entryPath(key) + " ignored: " + why);
    return false;
  }
  logVerbose("plan of type " + name + " read from " + disk.entryPath(key));
  return true;
}

bool storePlan(const DiskCache &disk, const Hash128 &tree,
               const std::string &name, const KernelPlan &plan) {
  std::string why;
  const std::string meta = "ddtc " DDTC_VERSION "\nplan of type " + name +
                           "\nfamily " + getKernelFamilyName(plan.family) +
                           "\nunits " + std::to_string(plan.units.size()) +
                           "\n";
  if (disk.store(planCacheKey(tree), meta, encodePlan(plan), why))
    return true;
  logVerbose("cannot write the plan of type " + name +
             " to the disk cache: " + why);
  return false;
}

} // namespace ddtc::rt
