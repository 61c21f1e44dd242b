//===- CUDAEmitter.cpp - CUDA C++ pack/unpack kernels from a plan ---------===//
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

#include "ddtc/Core/PackRange.h"
#include "ddtc/Target/CUDA/RecordPeriodKernel.h"
#include "ddtc/Target/CUDA/RecordUnpackKernel.h"
#include "ddtc/Target/CUDA/TileKernel.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"
#include "ddtc/Target/CUDA/WindowKernel.h"

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
  unsigned __int128 m = (num + static_cast<uint64_t>(divisor) - 1) /
                        static_cast<uint64_t>(divisor);
  d.mul = static_cast<int64_t>(static_cast<uint64_t>(m));
  d.shift = l - 1;
  return d;
}

int64_t applyMagicDivisor(int64_t n, const MagicDivisor &d) {
  if (d.mul == 0)
    return n;
  unsigned __int128 p =
      static_cast<unsigned __int128>(static_cast<uint64_t>(n)) *
      static_cast<uint64_t>(d.mul);
  return static_cast<int64_t>(static_cast<uint64_t>(p >> 64) >> d.shift);
}

namespace {

/// How the lanes of a units kernel (a warp a unit) move their unit: the
/// chunks a lane loads before it stores any, and the threads per SM its
/// launch bounds keep resident, which bounds its registers.
struct UnitsLanes {
  int chunks;
  int64_t residentThreads;
};

/// The pack: a unit (kUnitBytes) in one step of kChunksPerLane chunks a
/// lane, four blocks of 256 per SM (64 registers a thread). On an H200 the
/// triangles of doubles packed at 0.95 of memcpy this way, at 0.87 with
/// the same units a chunk a step at six blocks per SM, and at 0.83 with
/// units of 1 KiB (bench/results/2026-11-25-NVIDIA-H200-units).
constexpr UnitsLanes kUnitsPack{static_cast<int>(kChunksPerLane), 1024};

/// The unpack: two chunks a lane per step, six blocks per SM (40
/// registers); with four chunks at four blocks it unpacked the triangles
/// and the random hindexed type 4-11% slower than this on an H200.
constexpr UnitsLanes kUnitsUnpack{2, 1536};

/// Statements, at `indent`, that fill the 16-byte chunk `r` from the words
/// of `width` (4 or 8) bytes at `src`, a word-aligned address: the same
/// aligned accesses in every lane, reading only the chunk's bytes.
std::string wordChunkLoad(int64_t width, const std::string &src,
                          const std::string &indent) {
  std::string T = cudaWordType(width);
  std::string w = "((const " + T + " *)(" + src + "))";
  if (width == 8)
    return indent + "r.x = " + w + "[0];\n" + indent + "r.y = " + w + "[1];\n";
  auto pair = [&](int i) {
    return "(unsigned long long)" + w + "[" + std::to_string(i) +
           "] | ((unsigned long long)" + w + "[" + std::to_string(i + 1) +
           "] << 32)";
  };
  return indent + "r.x = " + pair(0) + ";\n" + indent + "r.y = " + pair(2) +
         ";\n";
}

//===----------------------------------------------------------------------===//
// The parameter struct
//===----------------------------------------------------------------------===//

/// Where a call's values come from when computeLaunch fills the struct; the
/// emitter passes zeros (it needs only the names).
struct CallValues {
  int64_t lo = 0, hi = 0;
  int64_t chunkBegin = 0, chunkEnd = 0;
  /// Origin offsets of the first byte the call's instances hold and past
  /// their last (their true bounds).
  int64_t srcLo = 0, srcHi = 0;
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
/// plan's shape (kernelShapeKey); `chunks` says whether a units plan's
/// kernels are the chunk kernels (unitsByChunks, unless a launch asks for
/// them whatever the plan's units).
template <typename Fn>
void forEachParam(const KernelPlan &plan, const CallValues &v, Fn fn,
                  bool chunks) {
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
    if (chunks) {
      fn("group", getChunkUnitsGroup(plan),
         "items a block takes per step of its loop");
      fn("word_unpack", unitsWordUnpack(plan) ? 1 : 0,
         "unpack: a word a thread (every unit whole aligned words)");
      fn("dest_order", plan.unpackUnits.empty() ? 0 : 1,
         "unpack of whole instances: the units in destination order follow");
    }
    return;
  }
  if (plan.tileDim >= 0) {
    const TileGeometry g = getTileGeometry(plan);
    const Segment &seg = l.segments.front();
    fn("chunk_begin", v.chunkBegin, "first tile (of the first band)");
    fn("chunk_end", v.chunkEnd, "end of the tiles (of the last band)");
    fn("base", seg.offset + seg.runs.front().offset,
       "origin offset of the first element");
    divisor("tiles_a", g.tilesA, "tiles along the tile dimension");
    divisor("tiles_b", g.tilesB, "tiles along the innermost dimension");
    for (size_t d = 0; d < seg.dims.size(); ++d) {
      const std::string D = std::to_string(d);
      if (static_cast<int>(d) == g.a || static_cast<int>(d) == g.b)
        fn("n" + D, seg.dims[d].count, "count of a dimension");
      else
        divisor("n" + D, seg.dims[d].count, "count of a dimension");
      fn("st" + D, seg.dims[d].stride, "stride of a dimension");
      fn("pk" + D, g.packedStride[d], "packed bytes of one step");
    }
    return;
  }
  if (stridedLaunchExtraChunk(plan)) {
    fn("chunk_begin", v.chunkBegin, "first chunk: lo / 16");
    fn("chunk_end", v.chunkEnd, "end of the chunks: ceil(hi / 16) + 1");
    fn("unpack_phase", stridedUnpackPhase(plan),
       "unpack chunks end where origin + phase + byte is 16-aligned; -1: "
       "aligned in the packed buffer");
    fn("src_lo", v.srcLo, "origin offset of the first byte the call holds");
    fn("src_hi", v.srcHi, "origin offset past the last byte the call holds");
    if (stridedVariant(plan, false) == StridedVariant::RunAligned) {
      divisor("run_slots", runAlignedSlots(getPointSpan(plan)),
              "unpack: destination vectors per point");
      if (runAlignedPhaseUniform(plan))
        divisor("run_slots_lo", runAlignedSlots(getPointSpan(plan)) - 1,
                "unpack: destination vectors per run where the runs' "
                "common place modulo 16 leaves one out");
    }
  } else {
    fn("chunk_begin", v.chunkBegin, "first chunk: lo / width");
    fn("chunk_end", v.chunkEnd, "end of the chunks: ceil(hi / width)");
  }
  const std::vector<Segment> &segs = l.segments;
  int64_t end = 0;
  for (size_t s = 0; s < segs.size(); ++s) {
    const Segment &seg = segs[s];
    end += seg.packedBytes();
    if (s + 1 < segs.size())
      fn(segName(s, "end"), end, "end of the segment in the packed instance");
    fn(segName(s, "base"), seg.offset + seg.runs.front().offset,
       "origin offset of the first run");
    if (!seg.isStrided()) {
      // A record: the point's runs, relative to its first.
      if (!seg.dims.empty())
        divisor(segName(s, "pb"), seg.pointBytes(),
                "packed bytes of a nest point");
      int64_t prefix = 0;
      for (size_t j = 0; j < seg.runs.size(); ++j) {
        const Run &run = seg.runs[j];
        if (j > 0) {
          fn(dimName(s, "rp", j), prefix, "packed start of a run in its point");
          fn(dimName(s, "ro", j), run.offset - seg.runs.front().offset,
             "origin offset of a run from the first");
        }
        fn(dimName(s, "rl", j), run.length, "length of a run");
        prefix += run.length;
      }
    } else if (seg.dims.empty()) {
      fn(segName(s, "len"), seg.runs.front().length, "run length");
    } else {
      divisor(segName(s, "len"), seg.runs.front().length, "run length");
    }
    // The period kernels whose rows restart divide by the first count too.
    const size_t firstDivided =
        isRecordPeriodPlan(plan) && periodRestartsRows(plan) ? 0 : 1;
    for (size_t d = firstDivided; d < seg.dims.size(); ++d)
      divisor(dimName(s, "n", d), seg.dims[d].count, "count of a dimension");
    for (size_t d = 0; d < seg.dims.size(); ++d)
      fn(dimName(s, "st", d), seg.dims[d].stride, "stride of a dimension");
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
// 16-byte values are ulonglong2, little-endian: byte k of x:y is byte k of x
// for k < 8, byte k - 8 of y otherwise.
// Bytes [k, k + 16) of the 32 bytes x:y, 0 <= k < 16.
__device__ __forceinline__ ulonglong2 ddtc_shr(ulonglong2 x, ulonglong2 y,
                                               unsigned k) {
  unsigned long long w0 = x.x, w1 = x.y, w2 = y.x;
  if (k >= 8) {
    w0 = x.y;
    w1 = y.x;
    w2 = y.y;
  }
  // (w << 1) << (63 - s) is w << (64 - s), and 0 for s == 0.
  const unsigned s = 8 * (k & 7);
  ulonglong2 r;
  r.x = (w0 >> s) | ((w1 << 1) << (63 - s));
  r.y = (w1 >> s) | ((w2 << 1) << (63 - s));
  return r;
}
// x moved up by f bytes (0 <= f < 16), zeros below.
__device__ __forceinline__ ulonglong2 ddtc_shl(ulonglong2 x, unsigned f) {
  const unsigned s = 8 * (f & 7);
  ulonglong2 r;
  if (f >= 8) {
    r.x = 0;
    r.y = x.x << s;
  } else {
    r.x = x.x << s;
    r.y = (x.y << s) | ((x.x >> 1) >> (63 - s));
  }
  return r;
}
// Bytes [i, i + 8) of t |= x, 0 <= i < 16; x's bytes past byte 15 - i are
// zero.
__device__ __forceinline__ void ddtc_put(ulonglong2 &t, unsigned i,
                                         unsigned long long x) {
  const unsigned s = 8 * (i & 7);
  if (i >= 8) {
    t.y |= x << s;
  } else {
    t.x |= x << s;
    t.y |= (x >> 1) >> (63 - s);
  }
}
// The n bytes at s (1 <= n <= 16) in bytes [0, n) of the result, zeros
// above, read with the widest aligned accesses inside [s, s + n): no byte
// outside them is read. For the edges of a source, where an aligned 16-byte
// vector would reach past the bytes a datatype touches.
__device__ __forceinline__ ulonglong2 ddtc_load_exact(const unsigned char *s,
                                                      unsigned n) {
  ulonglong2 t;
  t.x = 0;
  t.y = 0;
  const unsigned long long a0 = (unsigned long long)s;
  unsigned a = (unsigned)a0;
  #pragma unroll 1
  for (unsigned i = 0; i < n;) {
    unsigned long long x;
    unsigned w;
    if (n - i >= 8 && (a & 7) == 0) {
      x = *(const unsigned long long *)s;
      w = 8;
    } else if (n - i >= 4 && (a & 3) == 0) {
      x = *(const unsigned int *)s;
      w = 4;
    } else if (n - i >= 2 && (a & 1) == 0) {
      x = *(const unsigned short *)s;
      w = 2;
    } else {
      x = *s;
      w = 1;
    }
    ddtc_put(t, i, x);
    a += w;
    s += w;
    i += w;
  }
  return t;
}
// Whether the aligned 16-byte vectors from v up to v_end lie inside the
// readable bytes [lo, hi).
__device__ __forceinline__ bool ddtc_inside(const ulonglong2 *v,
                                            const ulonglong2 *v_end,
                                            const unsigned char *lo,
                                            const unsigned char *hi) {
  return (unsigned long long)v >= (unsigned long long)lo &&
         (unsigned long long)v_end <= (unsigned long long)hi;
}
// 16 bytes at any address s, reading nothing outside [lo, hi), which holds
// [s, s + 16): one aligned 16-byte load when s is aligned, else the two
// aligned vectors that hold [s, s + 16), joined by funnel shifts, when both
// lie inside [lo, hi); narrower loads of exactly [s, s + 16) at its edges.
__device__ __forceinline__ ulonglong2 ddtc_load16(const unsigned char *s,
                                                  const unsigned char *lo,
                                                  const unsigned char *hi) {
  const unsigned long long a = (unsigned long long)s;
  const unsigned m = (unsigned)a & 15;
  const ulonglong2 *v = (const ulonglong2 *)(s - m);
  if (m == 0)
    return v[0];
  if (ddtc_inside(v, v + 2, lo, hi))
    return ddtc_shr(v[0], v[1], m);
  return ddtc_load_exact(s, 16);
}
// OR the n bytes at s (1 <= n, f + n <= 16) into bytes [f, f + n) of r,
// whose bytes there are zero, reading nothing outside [lo, hi), which holds
// [s, s + n): the aligned vectors holding [s, s + n) where they lie inside
// [lo, hi), else exactly [s, s + n) with narrower loads.
__device__ __forceinline__ void ddtc_gather(ulonglong2 &r, unsigned f,
                                            const unsigned char *s,
                                            unsigned n,
                                            const unsigned char *lo,
                                            const unsigned char *hi) {
  const unsigned long long a = (unsigned long long)s;
  const unsigned m = (unsigned)a & 15;
  const ulonglong2 *v = (const ulonglong2 *)(s - m);
  ulonglong2 t;
  if (ddtc_inside(v, v + (m + n > 16 ? 2 : 1), lo, hi)) {
    ulonglong2 y;
    y.x = 0;
    y.y = 0;
    if (m + n > 16)
      y = v[1];
    t = ddtc_shr(v[0], y, m);
    if (n < 8) {
      t.x &= (1ull << (8 * n)) - 1;
      t.y = 0;
    } else if (n < 16) {
      t.y &= (1ull << (8 * (n - 8))) - 1;
    }
  } else {
    t = ddtc_load_exact(s, n);
  }
  t = ddtc_shl(t, f);
  r.x |= t.x;
  r.y |= t.y;
}
// Store bytes [f, f + n) of r (f + n <= 16) at d with the widest accesses
// that d's alignment allows; no other byte is written. A fixed sequence of
// predicated stores (1, 2 and 4 bytes up to 8-byte alignment, up to two
// 8-byte words, then 4, 2 and 1 bytes), each moving t on by a constant:
// lanes do not diverge in a loop of variable shifts.
__device__ __forceinline__ void ddtc_scatter(unsigned char *d,
                                             ulonglong2 r, unsigned f,
                                             unsigned n) {
  ulonglong2 z;
  z.x = 0;
  z.y = 0;
  ulonglong2 t = ddtc_shr(r, z, f);
  // Pointers, not integers, so that NVRTC keeps the global state space.
  const unsigned long long a0 = (unsigned long long)d;
  unsigned a = (unsigned)a0;
  if (n == 16 && (a & 15) == 0) {
    *(ulonglong2 *)d = t;
    return;
  }
  if ((a & 1) != 0 && n >= 1) {
    *d = (unsigned char)t.x;
    t.x = (t.x >> 8) | (t.y << 56);
    t.y >>= 8;
    d += 1;
    a += 1;
    n -= 1;
  }
  if ((a & 2) != 0 && n >= 2) {
    *(unsigned short *)d = (unsigned short)t.x;
    t.x = (t.x >> 16) | (t.y << 48);
    t.y >>= 16;
    d += 2;
    a += 2;
    n -= 2;
  }
  if ((a & 4) != 0 && n >= 4) {
    *(unsigned int *)d = (unsigned int)t.x;
    t.x = (t.x >> 32) | (t.y << 32);
    t.y >>= 32;
    d += 4;
    n -= 4;
  }
  // d is 8-aligned here unless fewer bytes than the step skipped are left.
  if (n >= 8) {
    *(unsigned long long *)d = t.x;
    t.x = t.y;
    t.y = 0;
    d += 8;
    n -= 8;
  }
  if (n >= 8) {
    *(unsigned long long *)d = t.x;
    t.x = 0;
    d += 8;
    n -= 8;
  }
  if (n >= 4) {
    *(unsigned int *)d = (unsigned int)t.x;
    t.x >>= 32;
    d += 4;
    n -= 4;
  }
  if (n >= 2) {
    *(unsigned short *)d = (unsigned short)t.x;
    t.x >>= 16;
    d += 2;
    n -= 2;
  }
  if (n >= 1)
    *d = (unsigned char)t.x;
}
// Bytes [f, f + n) of t from the W-aligned words at s (f and n multiples of
// W, 4 or 8): one piece of a chunk that straddles two runs.
template <int W>
__device__ __forceinline__ void ddtc_take_words(ulonglong2 &t, unsigned f,
                                                const unsigned char *s,
                                                unsigned n) {
  #pragma unroll
  for (unsigned i = 0; i < 16; i += W)
    if (i >= f && i < f + n) {
      const unsigned long long x =
          W == 8 ? *(const unsigned long long *)(s + (i - f))
                 : *(const unsigned int *)(s + (i - f));
      if (i < 8)
        t.x |= x << (8 * i);
      else
        t.y |= x << (8 * (i - 8));
    }
}
// Bytes [f, f + n) of r into the W-aligned words at d (f and n multiples of
// W, 4 or 8).
template <int W>
__device__ __forceinline__ void ddtc_give_words(unsigned char *d, ulonglong2 r,
                                                unsigned f, unsigned n) {
  #pragma unroll
  for (unsigned i = 0; i < 16; i += W)
    if (i >= f && i < f + n) {
      const unsigned long long x = i < 8 ? r.x >> (8 * i) : r.y >> (8 * (i - 8));
      if (W == 8)
        *(unsigned long long *)(d + (i - f)) = x;
      else
        *(unsigned int *)(d + (i - f)) = (unsigned int)x;
    }
}
// Store the 16 bytes of r at d: one vector where d is 16-aligned, else two
// or three accesses of fixed widths and places where d is 4-aligned (blocks
// at a word offset), else the widest accesses d allows.
__device__ __forceinline__ void ddtc_store16(unsigned char *d, ulonglong2 r) {
  const unsigned a = (unsigned)(unsigned long long)d;
  if ((a & 15) == 0) {
    *(ulonglong2 *)d = r;
  } else if ((a & 7) == 0) {
    *(unsigned long long *)d = r.x;
    *(unsigned long long *)(d + 8) = r.y;
  } else if ((a & 3) == 0) {
    *(unsigned int *)d = (unsigned int)r.x;
    *(unsigned long long *)(d + 4) = (r.x >> 32) | (r.y << 32);
    *(unsigned int *)(d + 12) = (unsigned int)(r.y >> 32);
  } else {
    ddtc_scatter(d, r, 0, 16);
  }
}

// Store bytes [f0, f) of the chunk r, whose byte 0 belongs at d: one aligned
// 16-byte store when the chunk is whole (d is then 16-aligned in the packed
// buffer), else byte by byte (a chunk cut by lo or hi).
__device__ __forceinline__ void ddtc_store_chunk(unsigned char *d,
                                                 ulonglong2 r, unsigned f0,
                                                 unsigned f) {
  if (f0 == 0 && f == 16) {
    *(ulonglong2 *)d = r;
    return;
  }
  #pragma unroll 1
  for (unsigned i = f0; i < f; ++i)
    d[i] = (unsigned char)(i < 8 ? r.x >> (8 * i) : r.y >> (8 * (i - 8)));
}

// Ask the L2 cache for the sector holding d, ahead of a store that writes
// only part of it (a run's first or last bytes): the cache then merges the
// store into a whole sector, where a sector written in part has to be read
// from memory when it is written back, in the middle of the writes. Done
// for runs of ddtc_fill_run lengths: shorter ones share their sectors with
// their neighbours (blocks of a few words), and in longer ones the few
// partial sectors cost less than the extra bytes a prefetch reads.
__device__ __forceinline__ bool ddtc_fill_run(long long len) {
  return len >= DDTC_FILL_MIN_RUN && len < DDTC_FILL_MAX_RUN;
}
__device__ __forceinline__ void ddtc_fill_sector(const unsigned char *d) {
#ifdef __CUDA_ARCH__
  asm volatile("prefetch.L2 [%0];" ::"l"(d));
#endif
}
// The n bytes at d, `left` bytes before the end of their run of len bytes,
// about to be stored: fill the run's first sector if they start the run
// there, and its last if they end it, where those sectors are partial.
__device__ __forceinline__ void ddtc_fill_edges(const unsigned char *d,
                                                long long n, long long left,
                                                long long len) {
  if (!ddtc_fill_run(len))
    return;
  if (left == len && ((unsigned long long)d & 31) != 0)
    ddtc_fill_sector(d);
  if (n == left && ((unsigned long long)(d + n) & 31) != 0)
    ddtc_fill_sector(d + n - 1);
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
  /// `<prefix>_next_run`, after `<prefix>_locate`: the walks' step from a
  /// run that is done to the next (the gather kernels, the window pack's
  /// blocks that leave their row).
  void emitNextRun();
  /// The part of the locate function for segment `s`, a nest of points of
  /// several runs (a record), at indent `ind`: r is the byte's place in the
  /// segment of its instance.
  void emitRecordLocate(size_t s, const std::string &ind);
  void emitStridedKernel(bool pack);
  void emitWideKernel(bool pack);
  /// The RunAligned unpack kernel (StridedVariant::RunAligned).
  void emitRunAlignedUnpack();
  /// `copy`: the pack's loads, stored at the same origin offset of a
  /// second buffer (`<prefix>_copy`, for ddtc_copy between two layouts of
  /// one type map).
  void emitUnitsKernel(bool pack, bool copy = false);
  /// The kernel's signature up to the opening brace.
  void emitSignature(bool pack, bool copy = false);
  /// "dst = src" for one access of `type` between the origin byte at `o` and
  /// the packed byte at `k`, in the direction of the kernel.
  std::string copy(bool pack, const std::string &type, const std::string &o,
                   const std::string &k) const;

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

void Emitter::emitParams() {
  os_ << "struct " << p_ << "_params {\n";
  forEachParam(
      plan_, CallValues(),
      [&](const std::string &name, int64_t, const char *comment) {
        os_ << "  long long " << name << ";";
        if (*comment)
          os_ << " // " << comment;
        os_ << "\n";
      },
      unitsByChunks(plan_));
  os_ << "};\n\n";
}

void Emitter::emitLocate() {
  const std::vector<Segment> &segs = plan_.layout.segments;
  os_ << "// The origin offset of packed byte q (0 <= q < count * size); in\n"
         "// `left` the bytes of its run from q on, in `span` the packed bytes "
         "from q\n"
         "// to the end of its row (the runs of the innermost dimension), in "
         "`len`\n"
         "// and `st` the run length and the innermost stride: the next run "
         "of the\n"
         "// row starts st bytes after the start of this one.\n"
      << "__device__ __forceinline__ long long " << p_ << "_locate(const " << p_
      << "_params &p, long long q,\n"
      << "    long long &left, long long &span, long long &len, long long "
         "&st) {\n";
  if (segs.empty()) {
    os_ << "  (void)p;\n  left = span = len = 1;\n  st = 0;\n"
           "  return q - q;\n}\n\n";
    emitNextRun();
    return;
  }
  // A call inside the first instance (one instance: the usual case) skips
  // the division: a uniform branch, where the division and its products
  // are 64-bit multiplications every thread pays.
  os_ << "  const long long inst =\n"
         "      p.hi <= p.size ? 0 : ddtc_div(q, p.size_mul, p.size_shift);\n"
         "  long long r = q - inst * p.size;\n"
         "  long long off = inst * p.extent;\n";
  for (size_t s = 0; s < segs.size(); ++s) {
    const Segment &seg = segs[s];
    const size_t nd = seg.dims.size();
    std::string ind = segs.size() == 1 ? "  " : "    ";
    // The packed bytes of the segment.
    std::string end = s + 1 < segs.size() ? "p." + segName(s, "end") : "p.size";
    std::string bytes =
        s == 0 ? end : "(" + end + " - p." + segName(s - 1, "end") + ")";
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
    if (!seg.isStrided()) {
      emitRecordLocate(s, ind);
      continue;
    }
    os_ << ind << "// segment " << s << ": " << nd
        << "-d strided nest of runs\n";
    std::string len = "p." + segName(s, "len");
    os_ << ind << "len = " << len << ";\n";
    if (nd == 0) {
      os_ << ind << "left = span = " << len << " - r;\n"
          << ind << "st = 0;\n"
          << ind << "off += p." << segName(s, "base") << " + r;\n";
      continue;
    }
    os_ << ind << "long long pt = ddtc_div(r, " << len << "_mul, " << len
        << "_shift);\n"
        << ind << "const long long b = r - pt * " << len << ";\n"
        << ind << "left = " << len << " - b;\n"
        << ind << "st = p." << dimName(s, "st", nd - 1) << ";\n"
        << ind << "off += p." << segName(s, "base") << " + b;\n";
    if (nd == 1)
      os_ << ind << "span = " << bytes << " - r;\n";
    for (size_t d = nd - 1; d >= 1; --d) {
      std::string n = "p." + dimName(s, "n", d);
      os_ << ind << "{\n"
          << ind << "  const long long t = ddtc_div(pt, " << n << "_mul, " << n
          << "_shift);\n";
      if (d == nd - 1)
        os_ << ind << "  span = (" << n << " - (pt - t * " << n << ")) * "
            << len << " - b;\n";
      os_ << ind << "  off += (pt - t * " << n << ") * p."
          << dimName(s, "st", d) << ";\n"
          << ind << "  pt = t;\n"
          << ind << "}\n";
    }
    os_ << ind << "off += pt * p." << dimName(s, "st", 0) << ";\n";
  }
  if (segs.size() > 1)
    os_ << "  }\n";
  os_ << "  return off;\n}\n\n";
  emitNextRun();
}

void Emitter::emitNextRun() {
  os_ << "// A walk's step to packed byte a when its run is done (left == 0): "
         "the\n"
         "// next run of the row, st bytes after this one's start, or a "
         "locate.\n"
      << "__device__ __forceinline__ void " << p_ << "_next_run(const " << p_
      << "_params &p, long long a,\n"
      << "    long long &o, long long &left, long long &span, long long &len,\n"
      << "    long long &st) {\n"
      << "  if (left != 0)\n"
      << "    return;\n"
      << "  if (span > 0) {\n"
      << "    o += st - len;\n"
      << "    left = len;\n"
      << "  } else {\n"
      << "    o = " << p_ << "_locate(p, a, left, span, len, st);\n"
      << "  }\n"
      << "}\n\n";
}

void Emitter::emitRecordLocate(size_t s, const std::string &ind) {
  const Segment &seg = plan_.layout.segments[s];
  const size_t nd = seg.dims.size();
  const size_t k = seg.runs.size();
  os_ << ind << "// segment " << s << ": " << nd << "-d strided nest of " << k
      << " runs per point; a run ends its row (span = left).\n";
  if (nd == 0) {
    os_ << ind << "long long b = r;\n";
  } else {
    const std::string pb = "p." + segName(s, "pb");
    os_ << ind << "long long pt = ddtc_div(r, " << pb << "_mul, " << pb
        << "_shift);\n"
        << ind << "long long b = r - pt * " << pb << ";\n";
  }
  // The point's run holding b: the last whose packed start is at most b.
  os_ << ind << "long long ro = 0;\n"
      << ind << "len = p." << dimName(s, "rl", 0) << ";\n";
  for (size_t j = k; j-- > 1;) {
    os_ << ind << (j + 1 == k ? "if" : "} else if") << " (b >= p."
        << dimName(s, "rp", j) << ") {\n"
        << ind << "  b -= p." << dimName(s, "rp", j) << ";\n"
        << ind << "  ro = p." << dimName(s, "ro", j) << ";\n"
        << ind << "  len = p." << dimName(s, "rl", j) << ";\n";
  }
  os_ << ind << "}\n"
      << ind << "left = span = len - b;\n"
      << ind << "st = 0;\n"
      << ind << "off += p." << segName(s, "base") << " + ro + b;\n";
  for (size_t d = nd; d-- > 1;) {
    const std::string n = "p." + dimName(s, "n", d);
    os_ << ind << "{\n"
        << ind << "  const long long t = ddtc_div(pt, " << n << "_mul, " << n
        << "_shift);\n"
        << ind << "  off += (pt - t * " << n << ") * p." << dimName(s, "st", d)
        << ";\n"
        << ind << "  pt = t;\n"
        << ind << "}\n";
  }
  if (nd > 0)
    os_ << ind << "off += pt * p." << dimName(s, "st", 0) << ";\n";
}

void Emitter::emitSignature(bool pack, bool copy) {
  // The units kernels keep their UnitsLanes' threads per SM, which bounds
  // the registers a lane has for the chunks it holds at once. Left to
  // itself, ptxas gave them 44 registers with the word copies of their
  // edges when a lane held one chunk, one block less per SM, and the large
  // triangles lost 2-5% on an H200. (Eight blocks, 32 registers, spill; for
  // the strided kernels that cost 10-35%.)
  std::string bounds;
  if (plan_.family == KernelFamily::Units)
    bounds = "__launch_bounds__(" + std::to_string(plan_.threadsPerBlock) +
             ", " +
             std::to_string(std::max<int64_t>(
                 1, (pack ? kUnitsPack : kUnitsUnpack).residentThreads /
                        plan_.threadsPerBlock)) +
             ") ";
  if (copy)
    os_ << "extern \"C\" __global__ void " << bounds << p_ << "_copy(\n"
        << "    const unsigned char *__restrict__ src,\n"
        << "    unsigned char *__restrict__ dst,\n";
  else
    printKernelHead(os_, p_, pack, bounds);
  os_ << "    const " << p_ << "_params p";
  if (plan_.family == KernelFamily::Units)
    os_ << ", const long long *__restrict__ units";
  os_ << ") {\n";
}

void Emitter::emitWideKernel(bool pack) {
  const std::string W = std::to_string(w_);
  const char *T = cudaAccessType(w_);
  emitSignature(pack);
  os_ << "  const long long step = (long long)gridDim.x * blockDim.x;\n";
  if (stridedVariant(plan_, true) == StridedVariant::Wide) {
    os_ << "  const long long first =\n"
           "      p.chunk_begin + (long long)blockIdx.x * blockDim.x + "
           "threadIdx.x;\n"
        << "  const long long chunk_end = p.chunk_end;\n";
  } else {
    // The launch counts the pack kernel's 16-byte chunks; this one walks
    // its own width-byte chunks over the same grid.
    os_ << "  // The launch counts 16-byte chunks; this kernel takes " << W
        << "-byte ones.\n"
        << "  const long long first =\n"
           "      p.lo / "
        << W
        << " + (long long)blockIdx.x * blockDim.x + "
           "threadIdx.x;\n"
        << "  const long long chunk_end = p.hi / " << W << " + (p.hi % " << W
        << " != 0);\n";
  }
  os_ << "  long long left, span, len, st;\n";
  if (w_ == 1) {
    os_ << "  for (long long q = first; q < chunk_end; q += step) {\n"
        << "    const long long o = " << p_
        << "_locate(p, q, left, span, len, st);\n"
        << "    " << copy(pack, T, "o", "q") << ";\n"
        << "  }\n}\n\n";
    return;
  }
  os_ << "  // Wide accesses need origin and packed byte 0 aligned to " << W
      << ".\n"
      << "  const bool aligned = (((unsigned long long)origin |\n"
         "                         ((unsigned long long)packed - "
         "(unsigned long long)p.lo)) &\n"
         "                        "
      << (w_ - 1) << ") == 0;\n"
      << "  for (long long c = first; c < chunk_end; c += step) {\n"
      << "    // Chunk c is packed bytes [q, q + " << W
      << "), clipped to [lo, hi).\n"
      << "    const long long q = c * " << W << ";\n"
      << "    long long a = ddtc_max(q, p.lo);\n"
      << "    const long long b = ddtc_min(q + " << W << ", p.hi);\n"
      << "    long long o = " << p_ << "_locate(p, a, left, span, len, st);\n";
  if (plan_.needsBytePath)
    os_ << "    if (aligned && a == q && b == q + " << W << " && left >= " << W
        << " && (o & " << (w_ - 1) << ") == 0) {\n";
  else
    os_ << "    // Every whole chunk lies in one run, aligned (the plan proves "
           "it).\n"
        << "    if (aligned && a == q && b == q + " << W << ") {\n";
  if (!pack)
    os_ << "      ddtc_fill_edges(origin + o, " << W << ", left, len);\n";
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
      << "      o = " << p_ << "_locate(p, a, left, span, len, st);\n"
      << "    }\n"
      << "  }\n}\n\n";
}

void Emitter::emitRunAlignedUnpack() {
  const Segment &seg = plan_.layout.segments.front();
  // The run holding packed byte q: runs are len bytes each, one after the
  // other in the stream (a segment without dimensions is one run an
  // instance).
  const std::string len = seg.dims.empty() ? "size" : segName(0, "len");
  auto runOf = [&](const std::string &q) {
    return "ddtc_div(" + q + ", p." + len + "_mul, p." + len + "_shift)";
  };
  emitSignature(false);
  os_ << "  if (p.lo >= p.hi)\n"
      << "    return;\n"
      << "  const long long len = p." << len << ";\n"
      << "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      << "  // Runs [r0, r1) hold the packed bytes [lo, hi); run r gets the "
         "slots\n"
      << "  // [r * run_slots, (r + 1) * run_slots), one aligned destination "
         "vector\n"
      << "  // each (the launch counts packed chunks: the loop covers the "
         "rest).\n"
      << "  const long long r0 = " << runOf("p.lo") << ";\n"
      << "  const long long r1 = " << runOf("p.hi - 1") << " + 1;\n";
  if (runAlignedPhaseUniform(plan_))
    os_ << "  // Every run starts at the same place modulo 16 (its strides "
           "and the\n"
        << "  // extent are multiples of 16): where that place leaves a "
           "run's last\n"
        << "  // vector out, a run gets one slot fewer (the particles' 41 "
           "bytes every\n"
        << "  // 48 from an aligned start: 3 vectors, not 4).\n"
        << "  const long long ph0 =\n"
        << "      (long long)(((unsigned long long)origin + p."
        << segName(0, "base") << ") & 15);\n"
        << "  const bool fewer = (ph0 + len + 15) / 16 < p.run_slots;\n"
        << "  const long long run_slots = fewer ? p.run_slots_lo : "
           "p.run_slots;\n"
        << "  const long long run_slots_mul =\n"
        << "      fewer ? p.run_slots_lo_mul : p.run_slots_mul;\n"
        << "  const long long run_slots_shift =\n"
        << "      fewer ? p.run_slots_lo_shift : p.run_slots_shift;\n";
  else
    os_ << "  const long long run_slots = p.run_slots;\n"
        << "  const long long run_slots_mul = p.run_slots_mul;\n"
        << "  const long long run_slots_shift = p.run_slots_shift;\n";
  os_ << "  const long long slot_end = r1 * run_slots;\n"
      << "  const unsigned char *packed_end = packed + (p.hi - p.lo);\n";
  // The unpack's launch has a thread for stridedBatch chunks: each thread
  // takes that many slots a step, a launch apart, their loads issued before
  // their stores. K is 1 for every plan now, but keep the shape: the same
  // kernel written as one straight step (one load, then one store, no
  // arrays) unpacked the particles at 0.39-0.40 of memcpy on an H200
  // against 0.45-0.46, and 201-byte records at 0.53-0.54 against 0.61
  // (bench/results/2026-11-24-NVIDIA-H200-record-window/unpack-straight/).
  const int64_t K = stridedBatch(plan_, false);
  const std::string KS = std::to_string(K);
  os_ << "  for (long long s0 = r0 * run_slots + (long long)blockIdx.x * "
         "blockDim.x +\n"
      << "                      threadIdx.x;\n"
      << "       s0 < slot_end; s0 += " << KS << " * step) {\n"
      << "    ulonglong2 t[" << KS << "];\n"
      << "    unsigned char *dst[" << KS << "];\n"
      << "    unsigned f[" << KS << "], n[" << KS << "];\n"
      << "    #pragma unroll\n"
      << "    for (int u = 0; u < " << KS << "; ++u) {\n"
      << "      const long long s = s0 + u * step;\n"
      << "      n[u] = 0;\n"
      << "      if (s >= slot_end)\n"
      << "        continue;\n"
      << "      const long long r = ddtc_div(s, run_slots_mul, "
         "run_slots_shift);\n"
      << "      const long long k = s - r * run_slots;\n"
      << "      const long long q = r * len;\n"
      << "      long long left, span, rlen, st;\n"
      << "      const long long o = " << p_
      << "_locate(p, q, left, span, rlen, st);\n"
      << "      // Vector k of the run: origin offsets [v, v + 16), v + origin "
         "aligned.\n"
      << "      const long long v =\n"
      << "          o - (long long)(((unsigned long long)origin + o) & 15) + "
         "16 * k;\n"
      << "      // Its bytes in the run and in [lo, hi), as packed bytes [a, "
         "b).\n"
      << "      const long long a = ddtc_max(q + (v - o), ddtc_max(q, "
         "p.lo));\n"
      << "      const long long b =\n"
      << "          ddtc_min(q + (v + 16 - o), ddtc_min(q + len, p.hi));\n"
      << "      if (a >= b)\n"
      << "        continue;\n"
      << "      const unsigned char *src = packed + (a - p.lo);\n"
      << "      dst[u] = origin + (o + (a - q));\n"
      << "      // Bytes [f, f + n) of the vector: all of it, or the run's "
         "first or\n"
      << "      // last vector, or one cut by lo or hi. Where the packed "
         "bytes around\n"
      << "      // them are the call's, the whole vector is loaded as for a "
         "full one.\n"
      << "      f[u] = (unsigned)(o + (a - q) - v);\n"
      << "      n[u] = (unsigned)(b - a);\n"
      << "      if (n[u] == 16 || (a - f[u] >= p.lo && a - f[u] + 16 <= "
         "p.hi)) {\n"
      << "        t[u] = ddtc_load16(src - f[u], packed, packed_end);\n"
      << "      } else {\n"
      << "        t[u].x = 0;\n"
      << "        t[u].y = 0;\n"
      << "        ddtc_gather(t[u], f[u], src, n[u], packed, packed_end);\n"
      << "      }\n"
      << "    }\n"
      << "    #pragma unroll\n"
      << "    for (int u = 0; u < " << KS << "; ++u) {\n"
      << "      if (n[u] == 16)\n"
      << "        *(ulonglong2 *)dst[u] = t[u];\n"
      << "      else if (n[u] > 0)\n"
      << "        ddtc_scatter(dst[u], t[u], f[u], n[u]);\n"
      << "    }\n"
      << "  }\n}\n\n";
}

void Emitter::emitStridedKernel(bool pack) {
  if (!pack && isRecordPeriodPlan(plan_)) {
    emitRecordPeriodUnpack(plan_, p_, os_);
    return;
  }
  if (stridedVariant(plan_, pack) == StridedVariant::Wide) {
    emitWideKernel(pack);
    return;
  }
  if (stridedVariant(plan_, pack) == StridedVariant::RunAligned) {
    if (hasRecords(plan_.layout))
      emitRecordAlignedUnpack(plan_, p_, os_);
    else
      emitRunAlignedUnpack();
    return;
  }
  if (stridedVariant(plan_, pack) == StridedVariant::Window) {
    emitWindowPack(plan_, p_, os_);
    return;
  }
  const std::string G = std::to_string(kStridedGroupBytes);
  emitSignature(pack);
  os_ << "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      << "  const long long first =\n"
         "      p.chunk_begin + (long long)blockIdx.x * blockDim.x + "
         "threadIdx.x;\n"
      << "  // A chunk starts at each packed byte k with (k + pa) % 16 == 0.\n";
  if (pack)
    os_ << "  // Chunks are aligned in the packed buffer (aligned stores).\n"
        << "  const long long pa =\n"
           "      (long long)(((unsigned long long)packed - (unsigned long "
           "long)p.lo) & 15);\n"
        << "  // Loads stay inside the bytes the call's instances span: every "
           "16-byte\n"
        << "  // vector read holds a byte of a run, so a gap inside the span "
           "is read\n"
        << "  // only within vectors that hold the type's own bytes.\n"
        << "  const unsigned char *src_lo = origin + p.src_lo;\n"
        << "  const unsigned char *src_hi = origin + p.src_hi;\n";
  else
    os_ << "  // Chunks are aligned in the destination where the phase is "
           "uniform\n"
        << "  // (aligned stores, shifted loads), else in the packed buffer.\n"
        << "  const long long pa = p.unpack_phase >= 0\n"
        << "      ? (long long)(((unsigned long long)origin + "
           "p.unpack_phase) & 15)\n"
        << "      : (long long)(((unsigned long long)packed - (unsigned long "
           "long)p.lo) & 15);\n"
        << "  const unsigned char *packed_end = packed + (p.hi - p.lo);\n";
  // K chunks a thread: the launch of this direction (stridedBatch).
  const int64_t K = stridedBatch(plan_, pack);
  // r = the whole chunk at `src`: as its words where the plan's words are
  // aligned but the chunk is not, else ddtc_load16 within `bounds`.
  auto wholeChunkLoad = [&](const std::string &src, const std::string &bounds) {
    const std::string load16 = "r = ddtc_load16(" + src + ", " + bounds + ");\n";
    if (w_ != 4 && w_ != 8)
      return "      " + load16;
    return "      const unsigned long long sa = (unsigned long long)(" + src +
           ");\n      if ((sa & 15) != 0 && (sa & " + std::to_string(w_ - 1) +
           ") == 0) {\n" + wordChunkLoad(w_, src, "        ") +
           "      } else {\n        " + load16 + "      }\n";
  };
  // The unpack kernel always takes this loop (K may be 1): a whole chunk
  // inside one run is loaded, located and stored without the walk (a third
  // fewer instructions for blocks at an offset; the cube interior's unpack
  // 4% faster), and the partial sectors of its runs are filled ahead.
  const bool batchLoop = K > 1 || !pack;
  // Where runs are whole words (width 4 or 8), a chunk across the end of a
  // run and the start of the next (runs whose length is not a multiple of
  // 16) moves as two pieces of words in the batch, instead of the walk:
  // such chunks are few, but most warps held one and waited for its walk.
  const bool straddleWords = batchLoop && (w_ == 4 || w_ == 8);
  if (batchLoop) {
    if (K > 1)
      os_ << "  // Batches of " << K << " chunks a thread, step apart: their loads "
             "are all\n"
          << "  // issued before any store (" << K
          << " loads in flight a thread).\n";
    else
      os_ << "  // A whole chunk inside one run is loaded, located and stored "
             "at once;\n"
          << "  // the others are walked run by run.\n";
    os_ << "  for (long long g0 = first; g0 < p.chunk_end; g0 += " << K
        << " * step) {\n"
        << "    ulonglong2 rr[" << K << "];\n"
        << "    bool whole[" << K << "];\n";
    if (!pack)
      os_ << "    long long oo[" << K << "];\n"
          << "    bool inrun[" << K << "];\n";
    if (!pack && straddleWords)
      os_ << "    long long oo2[" << K << "];\n"
          << "    unsigned cut[" << K
          << "]; // bytes of the first piece, 0: none\n";
    os_ << "    #pragma unroll\n"
        << "    for (int u = 0; u < " << K << "; ++u) {\n"
        << "      const long long g = g0 + u * step;\n"
        << "      const long long cq = g * 16 - pa;\n"
        << "      whole[u] = false;\n"
        << (pack ? "" : "      inrun[u] = false;\n")
        << (!pack && straddleWords ? "      cut[u] = 0;\n" : "")
        << "      rr[u].x = 0;\n"
        << "      rr[u].y = 0;\n"
        << "      if (g >= p.chunk_end || cq < p.lo || cq + 16 > p.hi)\n"
        << "        continue;\n"
        << "      ulonglong2 r;\n";
    if (pack) {
      os_ << "      long long left, span, len, st;\n"
          << "      const long long o = " << p_
          << "_locate(p, cq, left, span, len, st);\n";
      if (straddleWords)
        os_ << "      if (left < 16) {\n"
            << "        // The end of a run and the start of the next of its "
               "row: two\n"
            << "        // pieces of whole words, without the walk.\n"
            << "        const long long o2 = o + left + st - len;\n"
            << "        if (span < 16 || len < 16 - left ||\n"
            << "            (((unsigned long long)(origin + o) |\n"
               "              (unsigned long long)(origin + o2) |\n"
            << "              (unsigned long long)left) & " << (w_ - 1)
            << ") != 0)\n"
            << "          continue;\n"
            << "        r.x = 0;\n"
            << "        r.y = 0;\n"
            << "        ddtc_take_words<" << w_
            << ">(r, 0, origin + o, (unsigned)left);\n"
            << "        ddtc_take_words<" << w_
            << ">(r, (unsigned)left, origin + o2, (unsigned)(16 - left));\n"
            << "        rr[u] = r;\n"
            << "        whole[u] = true;\n"
            << "        continue;\n"
            << "      }\n";
      else
        os_ << "      if (left < 16)\n"
            << "        continue;\n";
      os_ << wholeChunkLoad("origin + o", "src_lo, src_hi");
    } else {
      os_ << wholeChunkLoad("packed + (cq - p.lo)", "packed, packed_end");
    }
    os_ << "      rr[u] = r;\n"
        << "      whole[u] = true;\n";
    if (!pack) {
      os_ << "      long long left, span, len, st;\n"
          << "      oo[u] = " << p_ << "_locate(p, cq, left, span, len, st);\n"
          << "      inrun[u] = left >= 16;\n"
          << "      if (inrun[u])\n"
          << "        ddtc_fill_edges(origin + oo[u], 16, left, len);\n";
      if (straddleWords)
        os_ << "      // The end of a run and the start of the next of "
               "its row: two\n"
            << "      // pieces of whole words, without the walk.\n"
            << "      if (!inrun[u] && span >= 16 && len >= 16 - left) {\n"
            << "        oo2[u] = oo[u] + left + st - len;\n"
            << "        if ((((unsigned long long)(origin + oo[u]) | (unsigned "
               "long long)(origin + oo2[u]) |\n"
            << "              (unsigned long long)left) & " << (w_ - 1)
            << ") == 0) {\n"
            << "          cut[u] = (unsigned)left;\n"
            << "          ddtc_fill_edges(origin + oo[u], left, left, len);\n"
            << "          ddtc_fill_edges(origin + oo2[u], 16 - left, len, "
               "len);\n"
            << "        }\n"
            << "      }\n";
    }
    os_ << "    }\n"
        << "    #pragma unroll\n"
        << "    for (int u = 0; u < " << K << "; ++u) {\n"
        << "    const long long g = g0 + u * step;\n"
        << "    if (g >= p.chunk_end)\n"
        << "      continue;\n";
    if (pack)
      os_ << "    if (whole[u]) {\n"
          << "      *(ulonglong2 *)(packed + (g * 16 - pa - p.lo)) = rr[u];\n"
          << "      continue;\n"
          << "    }\n";
    else
      os_ << "    if (inrun[u]) {\n"
          << "      ddtc_store16(origin + oo[u], rr[u]);\n"
          << "      continue;\n"
          << "    }\n";
    if (!pack && straddleWords)
      os_ << "    if (cut[u] != 0) {\n"
          << "      ddtc_give_words<" << w_
          << ">(origin + oo[u], rr[u], 0, cut[u]);\n"
          << "      ddtc_give_words<" << w_
          << ">(origin + oo2[u], rr[u], cut[u], 16 - cut[u]);\n"
          << "      continue;\n"
          << "    }\n";
  } else {
    os_ << "  for (long long g = first; g < p.chunk_end; g += step) {\n";
  }
  os_ << "    // Group g: the " << kStridedGroupBytes / 16
      << " chunks of packed bytes [q0, q0 + " << G
      << "), clipped to [lo, hi);\n"
      << "    // located once, then walked run by run.\n"
      << "    const long long q0 = g * " << G << " - pa;\n"
      << "    long long a = ddtc_max(q0, p.lo);\n"
      << "    const long long e = ddtc_min(q0 + " << G << ", p.hi);\n"
      << "    if (a >= e)\n"
      << "      continue;\n"
      << "    long long left, span, len, st;\n"
      << "    long long o = " << p_ << "_locate(p, a, left, span, len, st);\n"
      << "    #pragma unroll\n"
      << "    for (int j = 0; j < " << kStridedGroupBytes / 16 << "; ++j) {\n"
      << "      const long long cq = q0 + 16 * j;\n"
      << "      const long long b = ddtc_min(cq + 16, e);\n"
      << "      if (a >= b)\n"
      << "        continue; // wholly before lo, or after hi\n"
      << "      // Bytes [f0, b - cq) of the chunk are in [lo, hi); a is byte "
         "f0.\n"
      << "      const unsigned f0 = (unsigned)(a - cq);\n"
      << "      unsigned f = f0;\n"
      << "      ulonglong2 r;\n"
      << "      r.x = 0;\n"
      << "      r.y = 0;\n";
  if (!pack)
    // A chunk the batch did not load is cut by lo or hi: its bytes there.
    os_ << "      if (whole[u]) {\n"
        << "        r = rr[u];\n"
        << "      } else {\n"
        << "        #pragma unroll 1\n"
        << "        for (long long k = a; k < b; ++k) {\n"
        << "          const unsigned long long v = packed[k - p.lo];\n"
        << "          const unsigned i = (unsigned)(k - cq);\n"
        << "          if (i < 8)\n"
        << "            r.x |= v << (8 * i);\n"
        << "          else\n"
        << "            r.y |= v << (8 * (i - 8));\n"
        << "        }\n"
        << "      }\n";
  if (pack && shortWordRuns(plan_)) {
    // A whole chunk of runs of one or two words of one row takes their four
    // words with loads issued together; the walk below waits for each word
    // before it asks for the next. On an H200 4-byte blocks went from 0.51
    // to 0.66 of memcpy (aligned) and 0.44 to 0.55 (at an offset), 8-byte
    // blocks at an offset from 0.61 to 0.63; the same test in kernels of
    // longer runs cost 3-4% (16-32 B blocks), so it is emitted only here.
    os_ << "      if (f0 == 0 && b == cq + 16 && left == len && span >= 16 &&\n"
        << "          (len == 4 || len == 8) &&\n"
        << "          (((unsigned long long)(origin + o) | (unsigned long "
           "long)st) & 3) == 0) {\n"
        << "        const unsigned int *w0 = (const unsigned int *)(origin + "
           "o);\n"
        << "        const unsigned int *w1 = (const unsigned int *)(origin + o "
           "+ st);\n"
        << "        unsigned int v0, v1, v2, v3;\n"
        << "        if (len == 4) {\n"
        << "          v0 = *w0;\n"
        << "          v1 = *w1;\n"
        << "          v2 = *(const unsigned int *)(origin + o + 2 * st);\n"
        << "          v3 = *(const unsigned int *)(origin + o + 3 * st);\n"
        << "        } else {\n"
        << "          v0 = w0[0];\n"
        << "          v1 = w0[1];\n"
        << "          v2 = w1[0];\n"
        << "          v3 = w1[1];\n"
        << "        }\n"
        << "        r.x = (unsigned long long)v0 | ((unsigned long long)v1 << "
           "32);\n"
        << "        r.y = (unsigned long long)v2 | ((unsigned long long)v3 << "
           "32);\n"
        << "        *(ulonglong2 *)(packed + (cq - p.lo)) = r;\n"
        << "        continue;\n"
        << "      }\n";
  }
  os_ << "      #pragma unroll 1\n"
      << "      for (;;) {\n"
      << "        " << p_ << "_next_run(p, a, o, left, span, len, st);\n"
      << "        const long long n = ddtc_min(left, b - a);\n";
  if (!pack)
    os_ << "        ddtc_fill_edges(origin + o, n, left, len);\n";
  // A whole chunk inside one run: one (pack) or up to three (unpack,
  // misaligned origin) accesses, no byte assembly. Pack reads nothing
  // outside the run, [o - (len - left), o + left).
  if (pack && (w_ == 4 || w_ == 8)) {
    // A whole chunk whose source is word-aligned but not 16-aligned: its
    // words, all inside the run, where ddtc_load16 would join two aligned
    // vectors with variable funnel shifts (integer work that bounded the
    // pack of blocks at a word offset).
    os_ << "        const unsigned long long sm = (unsigned long long)(origin "
           "+ o);\n"
        << "        if (n == 16 && (sm & 15) != 0 && (sm & " << (w_ - 1)
        << ") == 0) {\n"
        << wordChunkLoad(w_, "origin + o", "          ")
        << "        } else if (n == " << w_ << " && ((f | (unsigned)sm) & "
        << (w_ - 1) << ") == 0) {\n"
        << "          // A run of one word (blocks of one element): the word\n"
        << "          // itself, at its place in the chunk.\n"
        << "          ddtc_put(r, f, *(const " << cudaWordType(w_)
        << " *)(origin + o));\n";
    if (w_ == 4)
      os_ << "        } else if (n == 8 && ((f | (unsigned)sm) & 3) == 0) {\n"
          << "          // A run of two words.\n"
          << "          ddtc_put(r, f, (unsigned long long)((const unsigned int "
             "*)(origin + o))[0] |\n"
          << "                             ((unsigned long long)((const "
             "unsigned int *)(origin + o))[1] << 32));\n";
    os_
        << "        } else if (n == 16) {\n";
  } else if (pack) {
    os_ << "        if (n == 16) {\n";
  }
  if (pack)
    os_ << "          r = ddtc_load16(origin + o, src_lo, src_hi);\n"
        << "        } else {\n"
        << "          ddtc_gather(r, f, origin + o, (unsigned)n, src_lo, "
           "src_hi);\n"
        << "        }\n";
  else {
    os_ << "        if (n == 16 && ((unsigned long long)(origin + o) & 15) == "
           "0) "
           "{\n"
        << "          *(ulonglong2 *)(origin + o) = r;\n";
    if (w_ >= 2 && w_ < 16) {
      // A piece of whole words at a word-aligned place (at this width
      // every piece is, unless lo, hi or the buffers cut words): one
      // predicated store per word of the chunk instead of ddtc_scatter
      // (then a divergent loop of variable shifts, which made these
      // kernels bound by integer work).
      const std::string W = std::to_string(w_);
      const char *T = cudaWordType(w_);
      os_ << "        } else if (((f | (unsigned)n | (unsigned)(unsigned long "
             "long)(origin + o)) & "
          << (w_ - 1) << ") == 0) {\n"
          << "          unsigned char *vec = origin + (o - f);\n"
          << "          #pragma unroll\n"
          << "          for (unsigned i = 0; i < 16; i += " << W << ")\n"
          << "            if (i >= f && i < f + (unsigned)n)\n"
          << "              *(" << T << " *)(vec + i) = (" << T
          << ")(i < 8 ? r.x >> (8 * i) : r.y >> (8 * (i - 8)));\n";
    }
    os_ << "        } else {\n"
        << "          ddtc_scatter(origin + o, r, f, (unsigned)n);\n"
        << "        }\n";
  }
  os_ << "        f += (unsigned)n;\n"
      << "        a += n;\n"
      << "        o += n;\n"
      << "        left -= n;\n"
      << "        span -= n;\n"
      << "        if (a >= b)\n"
      << "          break;\n"
      << "      }\n";
  if (pack)
    os_ << "      ddtc_store_chunk(packed + (cq - p.lo), r, f0, f);\n";
  os_ << "    }\n"
      << "  }\n";
  if (batchLoop)
    os_ << "  }\n";
  os_ << "}\n\n";
}

void Emitter::emitUnitsKernel(bool pack, bool copy) {
  emitSignature(pack, copy);
  os_ << "  const long long lane = threadIdx.x & 31;\n"
      << "  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;\n"
      << "  // One warp per (instance, unit) item.\n"
      << "  for (long long it = ((long long)blockIdx.x * blockDim.x + "
         "threadIdx.x) >> 5;\n"
      << "       it < p.num_items; it += warps) {\n"
      << "    const long long item = p.first_item + it;\n"
      << "    const long long inst = ddtc_div(item, p.num_units_mul, "
         "p.num_units_shift);\n"
      << "    const long long *u = units + 4 * (item - inst * p.num_units);\n"
      << "    // The unit is packed bytes [at, at + u[2]); packed byte k is "
         "at\n"
      << "    // origin offset k + delta.\n"
      << "    const long long at = inst * p.size + u[0];\n"
      << "    const long long delta = inst * p.extent + u[1] - at;\n"
      << "    const long long a = ddtc_max(at, p.lo);\n"
      << "    const long long b = ddtc_min(at + u[2], p.hi);\n"
      << "    // Byte k of [a, b) is read at sa + k and written at da + k.\n";
  // Loads stay inside [sa_lo, sa_hi): pack, the unit's bytes in the origin;
  // unpack, the packed bytes [lo, hi).
  if (copy)
    os_ << "    // Both buffers hold the type map: the unit's bytes lie at the "
           "same\n"
        << "    // origin offsets in both.\n"
        << "    const unsigned char *sa = src + delta;\n"
        << "    unsigned char *da = dst + delta;\n"
        << "    const unsigned char *sa_lo = sa + at, *sa_hi = sa + (at + "
           "u[2]);\n";
  else if (pack)
    os_ << "    const unsigned char *sa = origin + delta;\n"
        << "    unsigned char *da = packed - p.lo;\n"
        << "    const unsigned char *sa_lo = sa + at, *sa_hi = sa + (at + "
           "u[2]);\n";
  else
    os_ << "    const unsigned char *sa = packed - p.lo;\n"
        << "    unsigned char *da = origin + delta;\n"
        << "    const unsigned char *sa_lo = packed, *sa_hi = sa + p.hi;\n";
  // A lane takes its UnitsLanes' chunks a step, all loaded before any is
  // stored: each step waits for the memory once.
  const int K = (pack ? kUnitsPack : kUnitsUnpack).chunks;
  const std::string KS = std::to_string(K);
  os_ << "    // Lanes take 16-byte chunks aligned at the destination: one "
         "store each,\n"
      << "    // loads as wide as the source allows; the chunks cut by a or b "
         "store\n"
      << "    // only their bytes.";
  if (K > 1)
    os_ << " A lane takes " << K << " chunks a warp apart per step, and\n"
        << "    // loads every whole one before it stores any.";
  os_ << "\n"
      << "    const long long dm = (long long)((unsigned long long)da & 15);\n"
      << "    for (long long cq0 = ((a + dm) & ~15ll) - dm + 16 * lane; cq0 < "
         "b;\n"
      << "         cq0 += " << KS << " * 16 * 32) {\n"
      << "      ulonglong2 v[" << KS << "];\n"
      << "      bool full[" << KS << "];\n"
      << "      #pragma unroll\n"
      << "      for (int k = 0; k < " << KS << "; ++k) {\n"
      << "        const long long cq = cq0 + 16 * 32 * k;\n"
      << "        full[k] = cq >= a && cq + 16 <= b;\n"
      << "        if (!full[k])\n"
      << "          continue;\n"
      << "        ulonglong2 r;\n";
  if (pack && (w_ == 4 || w_ == 8)) {
    // A chunk whose source is word-aligned but not 16-aligned: its words,
    // each inside the chunk, so inside the unit. The same access for every
    // lane, where ddtc_load16 would read the aligned vectors around the
    // chunk and, at the unit's edges, fall back to a loop in some lanes.
    os_ << "        const unsigned long long sm = (unsigned long long)(sa + "
           "cq);\n"
        << "        if ((sm & 15) != 0 && (sm & " << (w_ - 1) << ") == 0) {\n"
        << wordChunkLoad(w_, "sa + cq", "          ")
        << "        } else {\n"
        << "          r = ddtc_load16(sa + cq, sa_lo, sa_hi);\n"
        << "        }\n";
  } else {
    os_ << "        r = ddtc_load16(sa + cq, sa_lo, sa_hi);\n";
  }
  os_ << "        v[k] = r;\n"
      << "      }\n"
      << "      #pragma unroll\n"
      << "      for (int k = 0; k < " << KS << "; ++k) {\n"
      << "        const long long cq = cq0 + 16 * 32 * k;\n"
      << "        if (full[k]) {\n"
      << "          *(ulonglong2 *)(da + cq) = v[k];\n"
      << "          continue;\n"
      << "        }\n"
      << "        if (cq >= b)\n"
      << "          continue;\n"
      << "        const long long c0 = ddtc_max(cq, a), c1 = ddtc_min(cq + 16, "
         "b);\n";
  if (w_ == 4 || w_ == 8) {
    // A chunk cut by a or b (a unit's edge, in every iteration of the
    // warp): where its bytes are whole words at word-aligned places on both
    // sides, a word copy, instead of the variable shifts of ddtc_gather and
    // ddtc_scatter that the whole warp would wait for.
    const char *T = cudaWordType(w_);
    os_ << "        if ((((unsigned long long)(sa + c0) | (unsigned long "
           "long)(da + c0) |\n"
        << "              (unsigned long long)(c1 - c0)) & "
        << (w_ - 1) << ") == 0) {\n"
        << "          #pragma unroll\n"
        << "          for (int i = 0; i < 16; i += " << w_ << ")\n"
        << "            if (c0 + i < c1)\n"
        << "              *(" << T << " *)(da + c0 + i) = *(const " << T
        << " *)(sa + c0 + i);\n"
        << "          continue;\n"
        << "        }\n";
  }
  os_ << "        ulonglong2 r;\n"
      << "        r.x = 0;\n"
      << "        r.y = 0;\n"
      << "        ddtc_gather(r, (unsigned)(c0 - cq), sa + c0,\n"
      << "                    (unsigned)(c1 - c0), sa_lo, sa_hi);\n"
      << "        ddtc_scatter(da + c0, r, (unsigned)(c0 - cq),\n"
      << "                     (unsigned)(c1 - c0));\n"
      << "      }\n"
      << "    }\n"
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
  banner << "\n// plan: " << getKernelFamilyName(plan_.family)
         << " family, width " << plan_.width << ", " << plan_.threadsPerBlock
         << " threads per block";
  if (out.takesUnits)
    banner << ", " << plan_.units.size() << " work unit(s) of at most "
           << plan_.unitBytes << " bytes, "
           << (unitsByChunks(plan_) ? "a 16-byte chunk a thread"
                                    : "a warp a unit");
  else if (plan_.tileDim >= 0)
    banner << ", tile pack and unpack (" << kTileElems << "x" << kTileElems
           << " elements along dimension " << plan_.tileDim
           << " and the innermost, through shared memory)";
  else
    banner << (plan_.needsBytePath ? ", with byte path" : ", no byte path")
           << ", "
           << (isRecordPeriodPlan(plan_)
                   ? std::string("period pack, period unpack")
                   : std::string(
                         getStridedVariantName(stridedVariant(plan_, true))) +
                         " pack, " +
                         getStridedVariantName(stridedVariant(plan_, false)) +
                         " unpack");
  banner << "\n";
  out.banner = banner.str();

  os_ << "// Kernel shape " << kernelShapeKey(plan_)
      << ": sizes, strides and offsets\n// come in " << out.paramsName
      << " at launch"
      << (isRecordPeriodPlan(plan_)
              ? " (the point stride and the runs are in the shape)"
              : "")
      << ".\n"
      << "#ifndef DDTC_FILL_MIN_RUN\n"
      << "#define DDTC_FILL_MIN_RUN " << kFillMinRun << "\n"
      << "#define DDTC_FILL_MAX_RUN " << kFillMaxRun << "\n"
      << "#endif\n"
      << kHelpers << "\n";
  emitParams();
  if (!out.takesUnits && plan_.tileDim < 0)
    emitLocate();
  for (bool pack : {true, false}) {
    // Each kernel can be left out (kSkipPackMacro, kSkipUnpackMacro), so
    // that the two compile apart, at once.
    os_ << "#ifndef " << (pack ? kSkipPackMacro : kSkipUnpackMacro) << "\n";
    if (out.takesUnits && unitsByChunks(plan_))
      emitUnitsChunkKernel(plan_, p_, pack, os_);
    else if (out.takesUnits)
      emitUnitsKernel(pack);
    else if (plan_.tileDim >= 0)
      emitTileKernel(plan_, p_, pack, os_);
    else
      emitStridedKernel(pack);
    // The copy kernel of two buffers of one type map compiles with the
    // pack, whose loads it shares.
    if (pack && out.takesUnits && !unitsByChunks(plan_))
      emitUnitsKernel(pack, /*copy=*/true);
    os_ << "#endif // " << (pack ? kSkipPackMacro : kSkipUnpackMacro) << "\n";
  }
  out.source = os_.str();
  return out;
}

/// Ceiling of a / b for a >= 0, b > 0, without overflow.
int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

int64_t clampToInt64(__int128 x) {
  if (x > std::numeric_limits<int64_t>::max())
    return std::numeric_limits<int64_t>::max();
  if (x < std::numeric_limits<int64_t>::min())
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(x);
}

} // namespace

void callSourceBounds(const CanonicalLayout &l, int64_t count, int64_t &lo,
                      int64_t &hi) {
  __int128 a = 0, b = 0;
  bool any = false;
  for (const Segment &seg : l.segments) {
    __int128 down = seg.offset, up = seg.offset;
    for (const Dim &d : seg.dims) {
      const __int128 reach = static_cast<__int128>(d.count - 1) * d.stride;
      (reach < 0 ? down : up) += reach;
    }
    for (const Run &r : seg.runs) {
      const __int128 first = down + r.offset, last = up + r.offset + r.length;
      a = any ? std::min(a, first) : first;
      b = any ? std::max(b, last) : last;
      any = true;
    }
  }
  const __int128 reach = static_cast<__int128>(count - 1) * l.extent;
  (reach < 0 ? a : b) += reach;
  lo = clampToInt64(a);
  hi = clampToInt64(b);
}

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

namespace {
/// The longest run of the plan's layout.
int64_t longestRun(const KernelPlan &plan) {
  int64_t longest = 0;
  for (const Segment &seg : plan.layout.segments)
    for (const Run &r : seg.runs)
      longest = std::max(longest, r.length);
  return longest;
}

/// The shortest run of the plan's layout (the largest int64_t without runs).
int64_t shortestRun(const KernelPlan &plan) {
  int64_t shortest = std::numeric_limits<int64_t>::max();
  for (const Segment &seg : plan.layout.segments)
    for (const Run &r : seg.runs)
      shortest = std::min(shortest, r.length);
  return shortest;
}

/// Runs of at most two 4-byte words, and no byte path.
bool runsOfOneOrTwoWords(const KernelPlan &plan) {
  return plan.width == 4 && !plan.needsBytePath && longestRun(plan) <= 8;
}

/// The pack kernel's variant were there no window kernel (the unpack
/// kernel's variant depends on it).
StridedVariant basePackVariant(const KernelPlan &plan) {
  if (plan.family != KernelFamily::Strided)
    return StridedVariant::Gather;
  const int64_t w = plan.width;
  // Wide accesses that never straddle runs, and either full width or runs
  // too short for a 16-byte chunk to gather much.
  // Runs of one or two 4-byte words: the gather kernel, locating once per
  // 16-byte chunk and loading each run as its words (its word pieces),
  // packs them faster than the wide kernel locates each word. Side by side
  // on an H200: blocks of 4 B 0.43 → 0.51 of memcpy aligned, 0.41 → 0.45 at
  // an offset, 8 B blocks at an offset 0.42 → 0.60; runs of one 8-byte word
  // lost (8 B blocks 0.67 → 0.65, the cube's z faces 0.90-0.96 →
  // 0.77-0.84), so they stay wide.
  if (runsOfOneOrTwoWords(plan))
    return StridedVariant::Gather;
  return !plan.needsBytePath &&
                 (w == 16 || (w >= 4 && longestRun(plan) <= 2 * w))
             ? StridedVariant::Wide
             : StridedVariant::Gather;
}

/// The pack kernel's variant alone.
StridedVariant packVariant(const KernelPlan &plan) {
  return isWindowPlan(plan) ? StridedVariant::Window : basePackVariant(plan);
}

int64_t mod16(int64_t x) { return ((x % 16) + 16) % 16; }
} // namespace

bool shortWordRuns(const KernelPlan &plan) {
  // The gather pack kernel of such plans (packVariant).
  return plan.family == KernelFamily::Strided && plan.tileDim < 0 &&
         !plan.layout.segments.empty() && runsOfOneOrTwoWords(plan) &&
         !hasRecords(plan.layout);
}

int64_t stridedUnpackPhase(const KernelPlan &plan) {
  if (plan.family != KernelFamily::Strided || plan.width >= 16 ||
      basePackVariant(plan) != StridedVariant::Gather)
    return -1;
  const CanonicalLayout &l = plan.layout;
  // Instance i starts i * extent into the origin and i * size into the
  // stream.
  if (mod16(l.extent - l.size) != 0)
    return -1;
  int64_t phase = -1, packedStart = 0;
  for (const Segment &seg : l.segments) {
    int64_t inPoint = 0;
    for (const Run &run : seg.runs) {
      if (run.length < 32)
        return -1;
      const int64_t p = mod16(seg.offset + run.offset - packedStart - inPoint);
      if (phase >= 0 && p != phase)
        return -1;
      phase = p;
      inPoint += run.length;
    }
    // One step of a dimension advances the stream by the packed bytes of
    // the dimensions inside it (modulo 16 is all that matters).
    int64_t advance = mod16(seg.pointBytes());
    for (size_t d = seg.dims.size(); d-- > 0;) {
      const Dim &dim = seg.dims[d];
      if (dim.count > 1 && mod16(dim.stride) != advance)
        return -1;
      advance = mod16(advance * mod16(dim.count));
    }
    packedStart = mod16(packedStart + mod16(seg.packedBytes()));
  }
  return phase;
}

const char *getStridedVariantName(StridedVariant variant) {
  switch (variant) {
  case StridedVariant::Wide:
    return "wide";
  case StridedVariant::Gather:
    return "gather";
  case StridedVariant::RunAligned:
    return "run-aligned";
  case StridedVariant::Window:
    return "window";
  }
  return "?";
}

int64_t runAlignedSlots(int64_t runLength) { return (runLength + 14) / 16 + 1; }

bool runAlignedPhaseUniform(const KernelPlan &plan) {
  if (stridedVariant(plan, false) != StridedVariant::RunAligned ||
      hasRecords(plan.layout) || mod16(plan.layout.extent) != 0)
    return false;
  for (const Dim &d : plan.layout.segments.front().dims)
    if (mod16(d.stride) != 0)
      return false;
  return true;
}

StridedVariant stridedVariant(const KernelPlan &plan, bool pack) {
  if (pack || plan.family != KernelFamily::Strided)
    return packVariant(plan);
  if (stridedUnpackPhase(plan) >= 0)
    return StridedVariant::Gather;
  // A phase that varies from run to run, in runs of bytes: each run's
  // vectors aligned on their own, which needs one run length to map threads
  // to runs. Measured on an H200, it beats the gather kernel for byte-wide
  // runs (records of odd length); runs of words the gather kernel stores a
  // word at a time, which was faster at every length (4 KiB runs 4 bytes
  // past alignment: 0.84 of memcpy against 0.67).
  if (plan.tileDim < 0 && plan.width == 1 &&
      basePackVariant(plan) == StridedVariant::Gather &&
      plan.layout.segments.size() == 1 &&
      plan.layout.segments.front().isStrided() &&
      plan.layout.segments.front().runs.front().length >= kRunAlignedMinRun)
    return StridedVariant::RunAligned;
  const int64_t w = plan.width;
  // The gather kernel's scattered stores (one predicated store per word)
  // pay off from runs of kWideUnpackMaxRun bytes, or where the wide kernel
  // would go byte by byte. Measured on an H200 for 4-byte words at a 4-byte
  // offset, the gather kernel against the wide one: 0.24 vs 0.36 of memcpy
  // at 16-byte runs, 0.29 vs 0.39 at 32, 0.36 vs 0.32 at 64 and 0.46 vs
  // 0.40 at 128.
  if (!plan.needsBytePath && w >= 4 &&
      (w == 16 || longestRun(plan) < kWideUnpackMaxRun))
    return StridedVariant::Wide;
  // Records of narrow words with few runs: a destination vector a thread
  // (RecordUnpackKernel.h), where the gather kernel located each run's
  // piece of a chunk anew.
  if (plan.tileDim < 0 && w < 4 && hasOrderedRecord(plan) &&
      plan.layout.segments.front().runs.size() <= kRecordAlignedMaxRuns)
    return StridedVariant::RunAligned;
  return StridedVariant::Gather;
}

int64_t stridedLaunchChunkBytes(const KernelPlan &plan) {
  return stridedVariant(plan, true) == StridedVariant::Wide
             ? std::max<int64_t>(plan.width, 1)
             : kStridedGroupBytes;
}

int64_t gatherBatch(const KernelPlan &plan) {
  if (plan.family != KernelFamily::Strided || plan.tileDim >= 0 ||
      plan.layout.segments.empty() ||
      stridedVariant(plan, true) != StridedVariant::Gather ||
      stridedVariant(plan, false) != StridedVariant::Gather ||
      shortestRun(plan) < kBatchMinRun)
    return 1;
  return kStridedBatch;
}

int64_t stridedBatch(const KernelPlan &plan, bool pack) {
  return pack && isWindowPlan(plan) ? kWindowChunks : gatherBatch(plan);
}

bool unpackFillsSectors(const KernelPlan &plan) {
  if (plan.family != KernelFamily::Strided || plan.tileDim >= 0 ||
      stridedVariant(plan, false) == StridedVariant::RunAligned ||
      isRecordPeriodPlan(plan))
    return false;
  for (const Segment &seg : plan.layout.segments)
    for (const Run &r : seg.runs)
      if (r.length >= kFillMinRun && r.length < kFillMaxRun)
        return true;
  return false;
}

bool stridedLaunchExtraChunk(const KernelPlan &plan) {
  const StridedVariant v = stridedVariant(plan, true);
  return v == StridedVariant::Gather || v == StridedVariant::Window;
}

std::string kernelShapeKey(const KernelPlan &plan) {
  std::string key;
  if (plan.family == KernelFamily::Units)
    return "units.w" + std::to_string(plan.width) +
           (unitsByChunks(plan) ? ".chunks" : "");
  if (plan.tileDim >= 0) {
    // The element's accesses and which dimensions the tile pairs.
    const Segment &seg = plan.layout.segments.front();
    return "tile.w" + std::to_string(plan.width) + ".e" +
           std::to_string(seg.runs.front().length) + ".d" +
           std::to_string(seg.dims.size()) + ".t" +
           std::to_string(plan.tileDim);
  }
  // The variants of pack and unpack ("wide", "gather", "gather-wide",
  // "gather-runs", "window", "window-wide" or "window-runs");
  // the dimensions of each segment, as in "d2-0", with its runs per point
  // where it has several ("d1r3"); "empty" without segments.
  const bool widePack = stridedVariant(plan, true) == StridedVariant::Wide;
  const std::string pack =
      stridedVariant(plan, true) == StridedVariant::Window ? "window"
                                                           : "gather";
  const StridedVariant unpack = stridedVariant(plan, false);
  key = "strided.w" + std::to_string(plan.width) +
        (plan.needsBytePath ? ".bytes" : "") +
        (widePack                         ? ".wide"
         : unpack == StridedVariant::Wide ? "." + pack + "-wide"
         : unpack == StridedVariant::RunAligned
             ? "." + pack + "-runs" + (runAlignedPhaseUniform(plan) ? "16" : "")
             : "." + pack) +
        (stridedBatch(plan, true) > 1
             ? ".b" + std::to_string(stridedBatch(plan, true))
             : "") +
        (shortWordRuns(plan) ? ".short" : "") +
        (plan.layout.segments.empty() ? ".empty" : ".d");
  if (isRecordPeriodPlan(plan))
    // Both kernels by the period, whose stride and runs they are printed
    // for.
    key = "strided.w" + std::to_string(plan.width) +
          (plan.needsBytePath ? ".bytes" : "") + ".period" +
          periodShapeSuffix(plan) + ".d";
  for (size_t s = 0; s < plan.layout.segments.size(); ++s) {
    const Segment &seg = plan.layout.segments[s];
    key += (s ? "-" : "") + std::to_string(seg.dims.size());
    if (!seg.isStrided())
      key += "r" + std::to_string(seg.runs.size());
  }
  return key;
}

EmittedKernels emitCUDA(const KernelPlan &plan,
                        const std::string &symbolPrefix) {
  // What the planning passes guarantee (balanceWorkUnits, alignAccesses).
  assert((plan.width == 1 || plan.width == 2 || plan.width == 4 ||
          plan.width == 8 || plan.width == 16) &&
         "the access width must be a power of two up to 16");
  assert((plan.family != KernelFamily::Strided ||
          fitsStridedFamily(plan.layout)) &&
         "the strided family takes at most kMaxPointRuns runs per nest point");
  return Emitter(plan, symbolPrefix).run();
}

std::vector<ParamMember> describeParams(const KernelPlan &plan) {
  // Filled twice, with two different sets of call values: the members that
  // differ are the per-call ones.
  std::vector<ParamMember> members;
  forEachParam(
      plan, CallValues(),
      [&](const std::string &name, int64_t value, const char *comment) {
        members.push_back({name, comment, value, false});
      },
      unitsByChunks(plan));
  CallValues other;
  other.lo = 1;
  other.hi = 2;
  other.chunkBegin = 3;
  other.chunkEnd = 4;
  other.firstItem = 5;
  other.numItems = 6;
  other.srcLo = 7;
  other.srcHi = 8;
  size_t i = 0;
  forEachParam(
      plan, other,
      [&](const std::string &, int64_t value, const char *) {
        ParamMember &m = members[i++];
        if (value != m.value) {
          m.perCall = true;
          m.value = 0;
        }
      },
      unitsByChunks(plan));
  return members;
}

std::vector<int64_t> encodeUnitTable(const KernelPlan &plan) {
  std::vector<int64_t> table;
  table.reserve((plan.units.size() + plan.unpackUnits.size()) * 4);
  for (const WorkUnit &u : plan.units) {
    table.push_back(u.packed);
    table.push_back(u.src);
    table.push_back(u.length);
    table.push_back(u.wide ? 1 : 0);
  }
  // The unpack's table in destination order, whose `wide` is a packed offset.
  for (const WorkUnit &u : plan.unpackUnits)
    table.insert(table.end(), {u.packed, u.src, u.length, u.wide});
  return table;
}

LaunchConfig computeLaunch(const KernelPlan &plan, int64_t count, int64_t lo,
                           int64_t hi, int64_t maxBlocks, bool pack,
                           UnitsKernels unitsKernels) {
  LaunchConfig cfg;
  const bool chunks =
      unitsKernels == UnitsKernels::Chunks || unitsByChunks(plan);
  cfg.takesUnits = plan.family == KernelFamily::Units;
  cfg.block = plan.threadsPerBlock;
  const int64_t size = plan.layout.size;
  if (checkPackRange(size, count, lo, hi, cfg.error) &&
      (cfg.block <= 0 || cfg.block % 32 != 0 || cfg.block > 1024))
    cfg.error = "threads per block must be a multiple of 32 up to 1024, not " +
                std::to_string(cfg.block);
  CallValues v;
  v.lo = lo;
  v.hi = hi;
  int64_t threads = 0;
  if (cfg.error.empty() && lo < hi) {
    if (cfg.takesUnits) {
      const UnitTable &units = plan.units;
      const int64_t nu = static_cast<int64_t>(units.size());
      int64_t items = 0;
      if (nu == 0 || __builtin_mul_overflow(count, nu, &items)) {
        cfg.error =
            nu == 0 ? "the plan has no work units" : "too many work items";
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
        // A block per group of items (chunk kernels), else a warp per item.
        if (chunks)
          threads = ceilDiv(v.numItems, getChunkUnitsGroup(plan)) * cfg.block;
        else if (__builtin_mul_overflow(v.numItems, int64_t(32), &threads))
          threads = std::numeric_limits<int64_t>::max();
      }
    } else if (plan.tileDim >= 0) {
      // One block per tile, from the band of lo to the band of hi - 1.
      const TileGeometry g = getTileGeometry(plan);
      v.chunkBegin = getTileBand(g, size, lo) * g.tilesPerBand;
      v.chunkEnd = (getTileBand(g, size, hi - 1) + 1) * g.tilesPerBand;
      threads = v.chunkEnd - v.chunkBegin;
    } else {
      // The pack kernel's chunks. Gather chunks are aligned in the packed
      // buffer, up to 15 bytes before their place in the stream: one more
      // chunk covers the shift.
      const int64_t bytes = stridedLaunchChunkBytes(plan);
      callSourceBounds(plan.layout, count, v.srcLo, v.srcHi);
      v.chunkBegin = lo / bytes;
      v.chunkEnd = ceilDiv(hi, bytes) + (stridedLaunchExtraChunk(plan) ? 1 : 0);
      threads = ceilDiv(v.chunkEnd - v.chunkBegin, stridedBatch(plan, pack));
    }
  }
  forEachParam(
      plan, v,
      [&](const std::string &, int64_t value, const char *) {
        cfg.params.push_back(value);
      },
      chunks);
  if (!cfg.error.empty() || threads == 0)
    return cfg;
  // A tile plan counted blocks, not threads.
  cfg.grid = cappedGrid(
      plan.tileDim >= 0 ? threads : ceilDiv(threads, cfg.block), maxBlocks);
  return cfg;
}

int64_t cappedGrid(int64_t blocks, int64_t maxBlocks) {
  if (maxBlocks > 0)
    blocks = std::min(blocks, maxBlocks);
  return std::min<int64_t>(blocks, std::numeric_limits<int32_t>::max());
}

void printKernelHead(std::ostream &os, const std::string &prefix, bool pack,
                     const std::string &bounds) {
  os << "extern \"C\" __global__ void " << bounds << prefix
     << (pack ? "_pack" : "_unpack") << "(\n"
     << (pack ? "    const unsigned char *__restrict__ origin,\n"
                "    unsigned char *__restrict__ packed,\n"
              : "    unsigned char *__restrict__ origin,\n"
                "    const unsigned char *__restrict__ packed,\n");
}

const char *cudaWordType(int64_t width) {
  return width == 2   ? "unsigned short"
         : width == 4 ? "unsigned int"
                      : "unsigned long long";
}

const char *cudaAccessType(int64_t width) {
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

} // namespace ddtc
