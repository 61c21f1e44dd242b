//===- CUDAEmitter.cpp - CUDA C++ pack/unpack kernels from a plan ----------===//
//
// The parameter struct is described once (forEachParam) and used twice: the
// emitter prints its member names, computeLaunch fills in their values, so
// the two cannot disagree on the order.
//
// Byte loops carry `#pragma unroll 1`: they only handle the edges of a range,
// misaligned buffers and narrow units, and unrolling them doubles NVRTC's
// compile time for no measurable gain.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/CUDAEmitter.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <sstream>

namespace ddtc {

//===----------------------------------------------------------------------===//
// Magic division
//===----------------------------------------------------------------------===//

// For 0 <= n < 2^N (N = 63) and l with 2^l >= d, m = ceil(2^(N+l) / d)
// satisfies 2^(N+l) <= m * d <= 2^(N+l) + 2^l, so floor(n / d) =
// floor(m * n / 2^(N+l)) (Granlund and Montgomery, theorem 4.2). With the
// smallest such l, m < 2^64 for every d >= 2, and the kernel computes
// mulhi64(n, m) >> (l - 1).
MagicDivisor makeMagicDivisor(int64_t divisor) {
  MagicDivisor d;
  d.divisor = divisor;
  if (divisor <= 1)
    return d;
  int l = 0;
  while (l < 63 && (uint64_t(1) << l) < static_cast<uint64_t>(divisor))
    ++l;
  unsigned __int128 num = static_cast<unsigned __int128>(1) << (63 + l);
  unsigned __int128 m =
      (num + static_cast<uint64_t>(divisor) - 1) / static_cast<uint64_t>(divisor);
  d.mul = static_cast<int64_t>(static_cast<uint64_t>(m));
  d.shift = l - 1;
  return d;
}

int64_t applyMagicDivisor(int64_t n, const MagicDivisor &d) {
  if (d.mul == 0)
    return n;
  unsigned __int128 p = static_cast<unsigned __int128>(static_cast<uint64_t>(n)) *
                        static_cast<uint64_t>(d.mul);
  return static_cast<int64_t>(static_cast<uint64_t>(p >> 64) >> d.shift);
}

namespace {

//===----------------------------------------------------------------------===//
// The parameter struct
//===----------------------------------------------------------------------===//

/// Where a call's values come from when computeLaunch fills the struct; the
/// emitter passes zeros (it needs only the names).
struct CallValues {
  int64_t lo = 0, hi = 0;
  int64_t chunkBegin = 0, chunkEnd = 0;
  int64_t firstItem = 0, numItems = 0;
};

std::string segName(size_t s, const char *what) {
  return "s" + std::to_string(s) + "_" + what;
}
std::string dimName(size_t s, const char *what, size_t d) {
  return "s" + std::to_string(s) + "_" + what + std::to_string(d);
}

/// Calls fn(name, value, comment) for every member of the parameter struct
/// of `plan`, in order. The names and their number depend only on the
/// plan's shape (kernelShapeKey).
template <typename Fn>
void forEachParam(const KernelPlan &plan, const CallValues &v, Fn fn) {
  const CanonicalLayout &l = plan.layout;
  auto divisor = [&](const std::string &name, int64_t value,
                     const char *comment) {
    MagicDivisor m = makeMagicDivisor(value);
    fn(name, value, comment);
    fn(name + "_mul", m.mul, "");
    fn(name + "_shift", m.shift, "");
  };
  fn("lo", v.lo, "first packed byte moved (packed[0] is byte lo)");
  fn("hi", v.hi, "end of the packed bytes moved");
  divisor("size", l.size, "packed bytes of one instance");
  fn("extent", l.extent, "distance between instances");
  if (plan.family == KernelFamily::Units) {
    divisor("num_units", static_cast<int64_t>(plan.units.size()),
            "work units of one instance");
    fn("first_item", v.firstItem,
       "first (instance, unit) item overlapping [lo, hi)");
    fn("num_items", v.numItems, "items from first_item on");
    return;
  }
  fn("chunk_begin", v.chunkBegin, "first chunk: lo / width");
  fn("chunk_end", v.chunkEnd, "end of the chunks: ceil(hi / width)");
  const std::vector<Segment> &segs = l.segments;
  int64_t end = 0;
  for (size_t s = 0; s < segs.size(); ++s) {
    const Segment &seg = segs[s];
    end += seg.packedBytes();
    if (s + 1 < segs.size())
      fn(segName(s, "end"), end, "end of the segment in the packed instance");
    fn(segName(s, "base"), seg.offset + seg.runs.front().offset,
       "origin offset of the first run");
    if (seg.dims.empty())
      fn(segName(s, "len"), seg.runs.front().length, "run length");
    else
      divisor(segName(s, "len"), seg.runs.front().length, "run length");
    for (size_t d = 1; d < seg.dims.size(); ++d)
      divisor(dimName(s, "n", d), seg.dims[d].count, "count of a dimension");
    for (size_t d = 0; d < seg.dims.size(); ++d)
      fn(dimName(s, "st", d), seg.dims[d].stride, "stride of a dimension");
  }
}

const char *accessType(int64_t width) {
  switch (width) {
  case 16:
    return "uint4";
  case 8:
    return "uint2";
  case 4:
    return "unsigned int";
  case 2:
    return "unsigned short";
  default:
    return "unsigned char";
  }
}

const char *kHelpers = R"(#ifndef DDTC_KERNEL_HELPERS
#define DDTC_KERNEL_HELPERS
// n / d for 0 <= n < 2^63, with the multiplier and shift of d computed at
// launch (mul == 0 stands for d == 1): no 64-bit division in the kernels.
__device__ __forceinline__ long long ddtc_div(long long n, long long mul,
                                              long long shift) {
  return mul == 0 ? n
                  : (long long)(__umul64hi((unsigned long long)n,
                                           (unsigned long long)mul) >>
                                shift);
}
__device__ __forceinline__ long long ddtc_min(long long a, long long b) {
  return a < b ? a : b;
}
__device__ __forceinline__ long long ddtc_max(long long a, long long b) {
  return a > b ? a : b;
}
#endif // DDTC_KERNEL_HELPERS
)";

class Emitter {
public:
  Emitter(const KernelPlan &plan, const std::string &prefix)
      : plan_(plan), p_(prefix), w_(plan.width) {}

  EmittedKernels run();

private:
  void emitParams();
  void emitLocate();
  void emitStridedKernel(bool pack);
  void emitUnitsKernel(bool pack);
  /// The kernel's signature up to the opening brace.
  void emitSignature(bool pack);
  /// "dst = src" for one access of `type` between the origin byte at `o` and
  /// the packed byte at `k`, in the direction of the kernel.
  std::string copy(bool pack, const std::string &type, const std::string &o,
                   const std::string &k) const;
  /// The check that origin and packed byte 0 are aligned to the width.
  std::string alignedCheck() const;

  const KernelPlan &plan_;
  std::string p_;
  int64_t w_;
  std::ostringstream os_;
};

std::string Emitter::copy(bool pack, const std::string &type,
                          const std::string &o, const std::string &k) const {
  std::string origin = "origin + (" + o + ")";
  std::string packed = "packed + (" + k + " - p.lo)";
  if (type == "unsigned char") {
    origin = "origin[" + o + "]";
    packed = "packed[" + k + " - p.lo]";
    return pack ? packed + " = " + origin : origin + " = " + packed;
  }
  std::string dst = pack ? packed : origin, src = pack ? origin : packed;
  return "*(" + type + " *)(" + dst + ") = *(const " + type + " *)(" + src +
         ")";
}

std::string Emitter::alignedCheck() const {
  return "(((unsigned long long)origin |\n"
         "                         ((unsigned long long)packed - "
         "(unsigned long long)p.lo)) &\n"
         "                        " +
         std::to_string(w_ - 1) + ") == 0";
}

void Emitter::emitParams() {
  os_ << "struct " << p_ << "_params {\n";
  forEachParam(plan_, CallValues(),
               [&](const std::string &name, int64_t, const char *comment) {
                 os_ << "  long long " << name << ";";
                 if (*comment)
                   os_ << " // " << comment;
                 os_ << "\n";
               });
  os_ << "};\n\n";
}

void Emitter::emitLocate() {
  const std::vector<Segment> &segs = plan_.layout.segments;
  os_ << "// The origin offset of packed byte q (0 <= q < count * size), and in\n"
         "// `left` the bytes of its run from q on.\n"
      << "__device__ __forceinline__ long long " << p_ << "_locate(const " << p_
      << "_params &p, long long q,\n"
      << "    long long &left) {\n";
  if (segs.empty()) {
    os_ << "  (void)p;\n  left = 1;\n  return q - q;\n}\n\n";
    return;
  }
  os_ << "  const long long inst = ddtc_div(q, p.size_mul, p.size_shift);\n"
         "  long long r = q - inst * p.size;\n"
         "  long long off = inst * p.extent;\n";
  for (size_t s = 0; s < segs.size(); ++s) {
    const Segment &seg = segs[s];
    const size_t nd = seg.dims.size();
    std::string ind = segs.size() == 1 ? "  " : "    ";
    if (segs.size() > 1) {
      if (s == 0)
        os_ << "  if (r < p." << segName(0, "end") << ") {\n";
      else if (s + 1 < segs.size())
        os_ << "  } else if (r < p." << segName(s, "end") << ") {\n";
      else
        os_ << "  } else {\n";
      if (s > 0)
        os_ << ind << "r -= p." << segName(s - 1, "end") << ";\n";
    }
    os_ << ind << "// segment " << s << ": " << nd
        << "-d strided nest of runs\n";
    std::string len = "p." + segName(s, "len");
    if (nd == 0) {
      os_ << ind << "left = " << len << " - r;\n"
          << ind << "off += p." << segName(s, "base") << " + r;\n";
      continue;
    }
    os_ << ind << "long long pt = ddtc_div(r, " << len << "_mul, " << len
        << "_shift);\n"
        << ind << "const long long b = r - pt * " << len << ";\n"
        << ind << "left = " << len << " - b;\n"
        << ind << "off += p." << segName(s, "base") << " + b;\n";
    for (size_t d = nd - 1; d >= 1; --d) {
      std::string n = "p." + dimName(s, "n", d);
      os_ << ind << "{\n"
          << ind << "  const long long t = ddtc_div(pt, " << n << "_mul, " << n
          << "_shift);\n"
          << ind << "  off += (pt - t * " << n << ") * p." << dimName(s, "st", d)
          << ";\n"
          << ind << "  pt = t;\n"
          << ind << "}\n";
    }
    os_ << ind << "off += pt * p." << dimName(s, "st", 0) << ";\n";
  }
  if (segs.size() > 1)
    os_ << "  }\n";
  os_ << "  return off;\n}\n\n";
}

void Emitter::emitSignature(bool pack) {
  os_ << "extern \"C\" __global__ void " << p_ << (pack ? "_pack" : "_unpack")
      << "(\n"
      << (pack ? "    const unsigned char *__restrict__ origin,\n"
                 "    unsigned char *__restrict__ packed,\n"
               : "    unsigned char *__restrict__ origin,\n"
                 "    const unsigned char *__restrict__ packed,\n")
      << "    const " << p_ << "_params p";
  if (plan_.family == KernelFamily::Units)
    os_ << ", const long long *__restrict__ units";
  os_ << ") {\n";
}

void Emitter::emitStridedKernel(bool pack) {
  const std::string W = std::to_string(w_);
  const char *T = accessType(w_);
  emitSignature(pack);
  os_ << "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      << "  const long long first =\n"
         "      p.chunk_begin + (long long)blockIdx.x * blockDim.x + "
         "threadIdx.x;\n";
  if (w_ == 1) {
    os_ << "  for (long long q = first; q < p.chunk_end; q += step) {\n"
        << "    long long left;\n"
        << "    const long long o = " << p_ << "_locate(p, q, left);\n"
        << "    " << copy(pack, T, "o", "q") << ";\n"
        << "  }\n}\n\n";
    return;
  }
  os_ << "  // Wide accesses need origin and packed byte 0 aligned to " << W
      << ".\n"
      << "  const bool aligned = " << alignedCheck() << ";\n"
      << "  for (long long c = first; c < p.chunk_end; c += step) {\n"
      << "    // Chunk c is packed bytes [q, q + " << W
      << "), clipped to [lo, hi).\n"
      << "    const long long q = c * " << W << ";\n"
      << "    long long a = ddtc_max(q, p.lo);\n"
      << "    const long long b = ddtc_min(q + " << W << ", p.hi);\n"
      << "    long long left;\n"
      << "    long long o = " << p_ << "_locate(p, a, left);\n";
  if (plan_.needsBytePath)
    os_ << "    if (aligned && a == q && b == q + " << W << " && left >= " << W
        << " && (o & " << (w_ - 1) << ") == 0) {\n";
  else
    os_ << "    // Every whole chunk lies in one run, aligned (the plan proves "
           "it).\n"
        << "    if (aligned && a == q && b == q + " << W << ") {\n";
  os_ << "      " << copy(pack, T, "o", "q") << ";\n"
      << "      continue;\n"
      << "    }\n"
      << "    // Byte path: a clipped chunk at an edge of [lo, hi), "
         "misaligned\n"
      << "    // buffers"
      << (plan_.needsBytePath ? ", or a chunk across runs or unaligned" : "")
      << ".\n"
      << "    for (;;) {\n"
      << "      const long long n = ddtc_min(left, b - a);\n"
      << "      #pragma unroll 1\n"
      << "      for (long long k = 0; k < n; ++k)\n"
      << "        " << copy(pack, "unsigned char", "o + k", "a + k") << ";\n"
      << "      a += n;\n"
      << "      if (a >= b)\n"
      << "        break;\n"
      << "      o = " << p_ << "_locate(p, a, left);\n"
      << "    }\n"
      << "  }\n}\n\n";
}

void Emitter::emitUnitsKernel(bool pack) {
  const std::string W = std::to_string(w_);
  emitSignature(pack);
  os_ << "  const long long lane = threadIdx.x & 31;\n"
      << "  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;\n";
  if (w_ > 1)
    os_ << "  // Wide accesses need origin and packed byte 0 aligned to " << W
        << ".\n"
        << "  const bool aligned = " << alignedCheck() << ";\n";
  os_ << "  // One warp per (instance, unit) item.\n"
      << "  for (long long it = ((long long)blockIdx.x * blockDim.x + "
         "threadIdx.x) >> 5;\n"
      << "       it < p.num_items; it += warps) {\n"
      << "    const long long item = p.first_item + it;\n"
      << "    const long long inst = ddtc_div(item, p.num_units_mul, "
         "p.num_units_shift);\n"
      << "    const long long *u = units + 4 * (item - inst * p.num_units);\n"
      << "    // The unit is packed bytes [at, at + u[2]); packed byte k is at\n"
      << "    // origin offset k + delta.\n"
      << "    const long long at = inst * p.size + u[0];\n"
      << "    const long long delta = inst * p.extent + u[1] - at;\n"
      << "    const long long a = ddtc_max(at, p.lo);\n"
      << "    const long long b = ddtc_min(at + u[2], p.hi);\n";
  if (w_ > 1) {
    const char *T = accessType(w_);
    os_ << "    if (u[3] != 0 && aligned && ((at | (at + delta)) & " << (w_ - 1)
        << ") == 0) {\n"
        << "      // Wide unit: lanes take " << W
        << "-byte chunks; clipped ones go byte by byte.\n"
        << "      for (long long q = (a & ~(long long)" << (w_ - 1)
        << ") + lane * " << W << "; q < b;\n"
        << "           q += 32 * " << W << ") {\n"
        << "        if (q >= a && q + " << W << " <= b) {\n"
        << "          " << copy(pack, T, "q + delta", "q") << ";\n"
        << "        } else {\n"
        << "          const long long e = ddtc_min(q + " << W << ", b);\n"
        << "          #pragma unroll 1\n"
        << "          for (long long k = ddtc_max(q, a); k < e; ++k)\n"
        << "            " << copy(pack, "unsigned char", "k + delta", "k")
        << ";\n"
        << "        }\n"
        << "      }\n"
        << "      continue;\n"
        << "    }\n";
  }
  os_ << "    #pragma unroll 1\n"
      << "    for (long long k = a + lane; k < b; k += 32)\n"
      << "      " << copy(pack, "unsigned char", "k + delta", "k") << ";\n"
      << "  }\n}\n\n";
}

EmittedKernels Emitter::run() {
  EmittedKernels out;
  out.packName = p_ + "_pack";
  out.unpackName = p_ + "_unpack";
  out.paramsName = p_ + "_params";
  out.takesUnits = plan_.family == KernelFamily::Units;

  const CanonicalLayout &l = plan_.layout;
  std::ostringstream banner;
  banner << "// ddtc kernels " << out.packName << " and " << out.unpackName
         << "\n// layout: ";
  std::string layout = describeLayout(l);
  for (char c : layout) {
    banner << c;
    if (c == '\n')
      banner << "//";
  }
  banner << "\n// plan: "
         << (out.takesUnits ? "units" : "strided") << " family, width "
         << plan_.width << ", " << plan_.threadsPerBlock
         << " threads per block";
  if (out.takesUnits)
    banner << ", " << plan_.units.size() << " work unit(s) of at most "
           << plan_.unitBytes << " bytes";
  else
    banner << (plan_.needsBytePath ? ", with byte path" : ", no byte path");
  banner << "\n";
  out.banner = banner.str();

  os_ << "// Kernel shape " << kernelShapeKey(plan_)
      << ": sizes, strides and offsets\n// come in " << out.paramsName
      << " at launch.\n"
      << kHelpers << "\n";
  emitParams();
  if (out.takesUnits) {
    emitUnitsKernel(true);
    emitUnitsKernel(false);
  } else {
    emitLocate();
    emitStridedKernel(true);
    emitStridedKernel(false);
  }
  out.source = os_.str();
  return out;
}

/// Ceiling of a / b for a >= 0, b > 0, without overflow.
int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

std::string kernelShapeKey(const KernelPlan &plan) {
  std::string key;
  if (plan.family == KernelFamily::Units)
    return "units.w" + std::to_string(plan.width);
  // The dimensions of each segment, as in "d2-0"; "empty" without segments.
  key = "strided.w" + std::to_string(plan.width) +
        (plan.needsBytePath ? ".bytes" : "") +
        (plan.layout.segments.empty() ? ".empty" : ".d");
  for (size_t s = 0; s < plan.layout.segments.size(); ++s)
    key += (s ? "-" : "") + std::to_string(plan.layout.segments[s].dims.size());
  return key;
}

EmittedKernels emitCUDA(const KernelPlan &plan, const std::string &symbolPrefix) {
  // What the planning passes guarantee (balanceWorkUnits, alignAccesses).
  assert((plan.width == 1 || plan.width == 2 || plan.width == 4 ||
          plan.width == 8 || plan.width == 16) &&
         "the access width must be a power of two up to 16");
  assert((plan.family != KernelFamily::Strided ||
          std::all_of(plan.layout.segments.begin(), plan.layout.segments.end(),
                      [](const Segment &s) { return s.isStrided(); })) &&
         "the strided family needs one run per nest point");
  return Emitter(plan, symbolPrefix).run();
}

std::vector<ParamMember> describeParams(const KernelPlan &plan) {
  // Filled twice, with two different sets of call values: the members that
  // differ are the per-call ones.
  std::vector<ParamMember> members;
  forEachParam(plan, CallValues(),
               [&](const std::string &name, int64_t value,
                   const char *comment) {
                 members.push_back({name, comment, value, false});
               });
  CallValues other;
  other.lo = 1;
  other.hi = 2;
  other.chunkBegin = 3;
  other.chunkEnd = 4;
  other.firstItem = 5;
  other.numItems = 6;
  size_t i = 0;
  forEachParam(plan, other,
               [&](const std::string &, int64_t value, const char *) {
                 ParamMember &m = members[i++];
                 if (value != m.value) {
                   m.perCall = true;
                   m.value = 0;
                 }
               });
  return members;
}

std::vector<int64_t> encodeUnitTable(const KernelPlan &plan) {
  std::vector<int64_t> table;
  table.reserve(plan.units.size() * 4);
  for (const WorkUnit &u : plan.units) {
    table.push_back(u.packed);
    table.push_back(u.src);
    table.push_back(u.length);
    table.push_back(u.wide ? 1 : 0);
  }
  return table;
}

LaunchConfig computeLaunch(const KernelPlan &plan, int64_t count, int64_t lo,
                           int64_t hi, int64_t maxBlocks) {
  LaunchConfig cfg;
  cfg.takesUnits = plan.family == KernelFamily::Units;
  cfg.block = plan.threadsPerBlock;
  const int64_t size = plan.layout.size;
  const int64_t width = std::max<int64_t>(plan.width, 1);
  int64_t total = 0;
  if (count < 0 || __builtin_mul_overflow(count, size, &total))
    cfg.error = "the packed size of " + std::to_string(count) +
                " instances overflows";
  else if (lo < 0 || lo > hi || hi > total)
    cfg.error = "the range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                ") is not inside the " + std::to_string(total) +
                " packed bytes";
  else if (cfg.block <= 0 || cfg.block % 32 != 0 || cfg.block > 1024)
    cfg.error = "threads per block must be a multiple of 32 up to 1024, not " +
                std::to_string(cfg.block);
  CallValues v;
  v.lo = lo;
  v.hi = hi;
  int64_t threads = 0;
  if (cfg.error.empty() && lo < hi) {
    if (cfg.takesUnits) {
      const std::vector<WorkUnit> &units = plan.units;
      const int64_t nu = static_cast<int64_t>(units.size());
      int64_t items = 0;
      if (nu == 0 || __builtin_mul_overflow(count, nu, &items)) {
        cfg.error = nu == 0 ? "the plan has no work units"
                            : "too many work items";
      } else {
        auto start = [&](int64_t i) {
          return (i / nu) * size + units[i % nu].packed;
        };
        // The first item ending after lo and the first starting at hi or
        // later: units are in packed order, so both are monotone.
        int64_t a = 0, b = items;
        while (a < b) {
          int64_t m = a + (b - a) / 2;
          if (start(m) + units[m % nu].length > lo)
            b = m;
          else
            a = m + 1;
        }
        v.firstItem = a;
        b = items;
        while (a < b) {
          int64_t m = a + (b - a) / 2;
          if (start(m) >= hi)
            b = m;
          else
            a = m + 1;
        }
        v.numItems = a - v.firstItem;
        if (__builtin_mul_overflow(v.numItems, int64_t(32), &threads))
          threads = std::numeric_limits<int64_t>::max();
      }
    } else {
      v.chunkBegin = lo / width;
      v.chunkEnd = ceilDiv(hi, width);
      threads = v.chunkEnd - v.chunkBegin;
    }
  }
  forEachParam(plan, v, [&](const std::string &, int64_t value, const char *) {
    cfg.params.push_back(value);
  });
  if (!cfg.error.empty() || threads == 0)
    return cfg;
  int64_t blocks = ceilDiv(threads, cfg.block);
  if (maxBlocks > 0)
    blocks = std::min(blocks, maxBlocks);
  cfg.grid = std::min<int64_t>(blocks, std::numeric_limits<int32_t>::max());
  return cfg;
}

} // namespace ddtc
