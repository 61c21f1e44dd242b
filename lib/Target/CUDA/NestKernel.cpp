//===- NestKernel.cpp - The generic kernel of strided nests ---------------===//
//
// One thread per chunk of 16 bytes of a block: the chunk's number gives
// the block's number (a division by the chunks per block), the block's
// number its index on every level (a division per level, innermost first),
// and the index its origin offset and packed position. Levels and divisors
// are parameters; unused levels count 1 and cost one predictable branch.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/NestKernel.h"

#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/RecordPeriodKernel.h"

#include "ddtc/Core/PackRange.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace ddtc {

namespace {

/// The largest power of two (<= 16) dividing every value.
int commonAlignment(const std::vector<int64_t> &values) {
  int w = 16;
  for (int64_t v : values)
    while (w > 1 && v % w != 0)
      w /= 2;
  return w;
}

// The kernels of one width; @P@ is the symbol prefix, @W@ the width and @T@
// the type of one access.
const char *kNestSource = R"(#ifndef DDTC_NEST_HELPERS
#define DDTC_NEST_HELPERS
// n / d for 0 <= n < 2^63 with d's multiplier and shift (mul == 0: d == 1).
__device__ __forceinline__ long long ddtc_nest_div(long long n, long long mul,
                                                   long long shift) {
  return mul == 0 ? n
                  : (long long)(__umul64hi((unsigned long long)n,
                                           (unsigned long long)mul) >>
                                shift);
}
// The widest access (8, 4, 2 or 1 bytes) at address a that stays within n
// bytes.
__device__ __forceinline__ unsigned ddtc_nest_step(unsigned long long a,
                                                   unsigned n) {
  return (n >= 8 && (a & 7) == 0)   ? 8
         : (n >= 4 && (a & 3) == 0) ? 4
         : (n >= 2 && (a & 1) == 0) ? 2
                                    : 1;
}
// Stores bytes [0, n) (n <= 16) of the 16-byte value x1:x0 at d, in the
// widest accesses d's alignment allows, no byte outside [d, d + n).
__device__ __forceinline__ void ddtc_nest_store(unsigned char *d,
                                                unsigned long long x0,
                                                unsigned long long x1,
                                                unsigned n) {
  _Pragma("unroll 1") for (unsigned i = 0; i < n;) {
    const unsigned w = ddtc_nest_step((unsigned long long)(d + i), n - i);
    const unsigned b = 8 * (i & 7);
    const unsigned long long v =
        i < 8 ? (x0 >> b) | (b ? x1 << (64 - b) : 0ull) : x1 >> b;
    if (w == 8)
      *(unsigned long long *)(d + i) = v;
    else if (w == 4)
      *(unsigned int *)(d + i) = (unsigned int)v;
    else if (w == 2)
      *(unsigned short *)(d + i) = (unsigned short)v;
    else
      d[i] = (unsigned char)v;
    i += w;
  }
}
// Copies n (<= 16) bytes from s to d, each side with the widest accesses
// its own alignment allows, through two registers: no byte outside
// [s, s + n) is read nor outside [d, d + n) written, whatever the two
// addresses (a block's bytes and the packed stream are rarely aligned
// alike).
__device__ __forceinline__ void ddtc_nest_copy(unsigned char *d,
                                               const unsigned char *s,
                                               unsigned n) {
  unsigned long long x0 = 0, x1 = 0;
  _Pragma("unroll 1") for (unsigned i = 0; i < n;) {
    const unsigned w = ddtc_nest_step((unsigned long long)(s + i), n - i);
    const unsigned long long v =
        w == 8   ? *(const unsigned long long *)(s + i)
        : w == 4 ? *(const unsigned int *)(s + i)
        : w == 2 ? *(const unsigned short *)(s + i)
                 : s[i];
    // Bytes [i, i + w) of x1:x0 = v (w <= 8: two words at most).
    const unsigned b = 8 * (i & 7);
    if (i < 8) {
      x0 |= v << b;
      if (b)
        x1 |= v >> (64 - b);
    } else {
      x1 |= v << b;
    }
    i += w;
  }
  ddtc_nest_store(d, x0, x1, n);
}
#endif // DDTC_NEST_HELPERS

// Levels are listed innermost first; the outermost used one is the
// instances' (count, extent, size).
struct @P@_params {
  long long lo; // first packed byte moved (packed[0] is byte lo)
  long long hi; // end of the packed bytes moved
  long long first_block; // first block overlapping [lo, hi)
  long long num_chunks; // chunks of 16 bytes from first_block's first on
  long long chunks, chunks_mul, chunks_shift; // chunks per block
  long long length; // bytes of a block
  long long src_base; // origin offset of block 0
  long long packed_base; // packed position of block 0
  long long levels; // levels used, 1 to 8
  long long n[8], n_mul[8], n_shift[8]; // counts and their divisors
  long long src_st[8], packed_st[8]; // strides in the origin and the stream
};

// One thread per chunk of 16 bytes of a block: its index costs a division
// per level, so a chunk is as wide as a register pair, not as the width
// every block allows (41-byte records moved a byte a thread ran 7x slower).
// A chunk is packed bytes [k, k + its length); the part in [lo, hi),
// [a, e), is read from (written to) origin offsets s + a - k on: in
// @W@-byte words when both sides are aligned to @W@ (4 or more) and it is
// a whole number of them (a block of one double, a whole chunk), else
// through ddtc_nest_copy.
#define DDTC_NEST_KERNEL(NAME, ORIGIN_CONST, PACKED_CONST, DST, SRC)           \
  extern "C" __global__ void NAME(                                             \
      ORIGIN_CONST unsigned char *__restrict__ origin,                         \
      PACKED_CONST unsigned char *__restrict__ packed, const @P@_params p,     \
      const long long *__restrict__ unused) {                                  \
    const long long step = (long long)gridDim.x * blockDim.x;                  \
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;       \
         g < p.num_chunks; g += step) {                                        \
      const long long q = ddtc_nest_div(g, p.chunks_mul, p.chunks_shift);      \
      const long long off = (g - q * p.chunks) * 16;                           \
      long long b = p.first_block + q;                                         \
      long long s = p.src_base + off, k = p.packed_base + off;                 \
      _Pragma("unroll") for (int l = 0; l < 8; ++l) {                          \
        if (l + 1 >= p.levels) {                                               \
          s += b * p.src_st[l];                                                \
          k += b * p.packed_st[l];                                             \
          break;                                                               \
        }                                                                      \
        const long long outer = ddtc_nest_div(b, p.n_mul[l], p.n_shift[l]);    \
        const long long i = b - outer * p.n[l];                                \
        s += i * p.src_st[l];                                                  \
        k += i * p.packed_st[l];                                               \
        b = outer;                                                             \
      }                                                                        \
      const long long left = p.length - off;                                   \
      const long long e0 = k + (left < 16 ? left : 16);                        \
      const long long a = k > p.lo ? k : p.lo;                                 \
      const long long e = e0 < p.hi ? e0 : p.hi;                               \
      if (e <= a)                                                              \
        continue;                                                              \
      ORIGIN_CONST unsigned char *os = origin + (s + a - k);                   \
      PACKED_CONST unsigned char *ps = packed + (a - p.lo);                    \
      const int words = (int)(e - a) / @W@;                                    \
      if (@W@ >= 4 && words * @W@ == e - a &&                                  \
          (((unsigned long long)os | (unsigned long long)ps) & (@W@ - 1)) ==   \
              0) {                                                             \
        _Pragma("unroll") for (int x = 0; x < 16 / @W@; ++x) if (x < words)    \
          ((@T@ *)DST)[x] = ((const @T@ *)SRC)[x];                             \
      } else {                                                                 \
        ddtc_nest_copy((unsigned char *)DST, SRC, (unsigned)(e - a));          \
      }                                                                        \
    }                                                                          \
  }

DDTC_NEST_KERNEL(@P@_pack, const, , ps, os)
DDTC_NEST_KERNEL(@P@_unpack, , const, os, ps)
#undef DDTC_NEST_KERNEL

// One side of a copy: a nest whose blocks follow each other in the packed
// stream (block b is packed bytes [b * length, (b + 1) * length)), the
// instances' level included, levels innermost first.
struct @P@_side {
  long long length, length_mul, length_shift; // bytes of a block
  long long base; // origin offset of block 0
  long long levels; // levels used, 1 to 8
  long long n[8], n_mul[8], n_shift[8], st[8]; // counts, divisors, strides
};
struct @P@_copy_params {
  long long lo; // first packed byte moved
  long long hi; // end of the packed bytes moved
  long long num_chunks; // threads' chunks of at most 16 packed bytes
  // Where both sides' blocks are one length (0 here otherwise): the
  // aligned 16-byte vectors a block can touch and their divisor, the block
  // of lo, and the source's bytes from the first the instances touch to the
  // last, as origin offsets (whole vectors are loaded only inside them).
  long long chunks, chunks_mul, chunks_shift, first_block, src_lo, src_hi;
  @P@_side src, dst;
};

// The origin offset of packed byte pos of side q, and in `left` the bytes
// of its block from there on.
__device__ __forceinline__ long long @P@_locate(const @P@_side &q,
                                                long long pos,
                                                long long &left) {
  long long b = ddtc_nest_div(pos, q.length_mul, q.length_shift);
  const long long off = pos - b * q.length;
  left = q.length - off;
  long long s = q.base + off;
  _Pragma("unroll") for (int l = 0; l < 8; ++l) {
    if (l + 1 >= q.levels) {
      s += b * q.st[l];
      break;
    }
    const long long outer = ddtc_nest_div(b, q.n_mul[l], q.n_shift[l]);
    s += (b - outer * q.n[l]) * q.st[l];
    b = outer;
  }
  return s;
}

// Moves n (<= 16) bytes from s to d in the widest words both addresses
// and n allow.
__device__ __forceinline__ void @P@_move(unsigned char *d,
                                         const unsigned char *s, long long n) {
  const unsigned long long al = (unsigned long long)s | (unsigned long long)d;
  if (n == 16 && (al & 15) == 0) {
    *(uint4 *)d = *(const uint4 *)s;
  } else if ((al & 7) == 0 && (n & 7) == 0) {
    _Pragma("unroll") for (int x = 0; x < 2; ++x) if (8 * x < n)
      ((unsigned long long *)d)[x] = ((const unsigned long long *)s)[x];
  } else if ((al & 3) == 0 && (n & 3) == 0) {
    _Pragma("unroll") for (int x = 0; x < 4; ++x) if (4 * x < n)
      ((unsigned int *)d)[x] = ((const unsigned int *)s)[x];
  } else {
    ddtc_nest_copy(d, s, (unsigned)n);
  }
}

// Packed bytes [lo, hi) of one layout's instances at src, written where
// another layout's instances at dst hold them, with no packed buffer
// between: what a pack of the one and an unpack into the other would do,
// in one launch. One thread per 16 packed bytes; each piece of them that
// lies in one block on both sides moves in the widest words both addresses
// allow. Where both sides' blocks are one length that 16 does not divide
// (records of 41 bytes), a thread takes 16 bytes of one block instead, so
// that its bytes are one piece, not the ends of two blocks in pieces of a
// few bytes each.
extern "C" __global__ void @P@_copy(const unsigned char *__restrict__ src,
                                    unsigned char *__restrict__ dst,
                                    const @P@_copy_params p,
                                    const long long *__restrict__ unused) {
  const long long step = (long long)gridDim.x * blockDim.x;
  if (p.chunks > 0) {
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
         g < p.num_chunks; g += step) {
      const long long q = ddtc_nest_div(g, p.chunks_mul, p.chunks_shift);
      const long long start = (p.first_block + q) * p.src.length;
      long long ls, ld;
      const unsigned char *sb = src + @P@_locate(p.src, start, ls);
      // The thread's aligned vector of the block's source bytes, and the
      // block's bytes in it, [a, e) as packed positions.
      const unsigned char *v =
          (const unsigned char *)(((unsigned long long)sb & ~15ull) +
                                  16 * (g - q * p.chunks));
      long long a = start + (v > sb ? v - sb : 0);
      long long e = start + (v + 16 - sb < p.src.length ? v + 16 - sb
                                                        : p.src.length);
      if (a < p.lo)
        a = p.lo;
      if (e > p.hi)
        e = p.hi;
      if (a >= e)
        continue;
      unsigned char *d = dst + @P@_locate(p.dst, a, ld);
      const unsigned char *s = sb + (a - start);
      if (v >= src + p.src_lo && v + 16 <= src + p.src_hi) {
        // The whole vector, as every thread of the warp loads its own:
        // each sector crosses once, the gaps' bytes go unused.
        const ulonglong2 x = *(const ulonglong2 *)v;
        const unsigned b = 8 * (unsigned)(s - v);
        unsigned long long x0 = x.x, x1 = x.y;
        if (b >= 64) {
          x0 = x1 >> (b - 64);
          x1 = 0;
        } else if (b) {
          x0 = (x0 >> b) | (x1 << (64 - b));
          x1 >>= b;
        }
        ddtc_nest_store(d, x0, x1, (unsigned)(e - a));
      } else {
        @P@_move(d, s, e - a);
      }
    }
    return;
  }
  const long long first = p.lo - (p.lo & 15);
  for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       g < p.num_chunks; g += step) {
    long long a = first + g * 16, e = a + 16;
    if (a < p.lo)
      a = p.lo;
    if (e > p.hi)
      e = p.hi;
    while (a < e) {
      long long ls, ld;
      const unsigned char *s = src + @P@_locate(p.src, a, ls);
      unsigned char *d = dst + @P@_locate(p.dst, a, ld);
      long long n = e - a;
      if (ls < n)
        n = ls;
      if (ld < n)
        n = ld;
      @P@_move(d, s, n);
      a += n;
    }
  }
}
)";

std::string substitute(std::string text, const std::string &from,
                       const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// Blocks of `levels[d..]` (all instances' levels, outermost first) whose
/// packed start, relative to the nest's base, is below q.
int64_t blocksStartingBefore(const std::vector<NestLevel> &levels, size_t d,
                             int64_t q) {
  if (q <= 0)
    return 0;
  if (d == levels.size())
    return 1; // the one block, at 0
  int64_t inner = 1;
  for (size_t e = d + 1; e < levels.size(); ++e)
    inner *= levels[e].count;
  const NestLevel &l = levels[d];
  const int64_t i = q / l.packedStride;
  if (i >= l.count)
    return l.count * inner;
  return i * inner +
         blocksStartingBefore(levels, d + 1, q - i * l.packedStride);
}

/// Appends the level words of a nest kernel's parameters for `levels`
/// (outermost first): the counts, their divisors' multipliers and shifts,
/// the origin strides and, with `packedStrides`, the packed strides, each
/// array innermost first, kNestMaxLevels long, unused levels counting 1
/// with zero strides.
void appendLevelWords(const std::vector<NestLevel> &levels, bool packedStrides,
                      std::vector<int64_t> &out) {
  std::vector<int64_t> n(kNestMaxLevels, 1), mul(kNestMaxLevels, 0),
      shift(kNestMaxLevels, 0), src(kNestMaxLevels, 0),
      packed(kNestMaxLevels, 0);
  for (size_t i = 0; i < levels.size(); ++i) {
    const NestLevel &l = levels[levels.size() - 1 - i];
    const MagicDivisor m = makeMagicDivisor(std::max<int64_t>(l.count, 1));
    n[i] = std::max<int64_t>(l.count, 1);
    mul[i] = m.mul;
    shift[i] = m.shift;
    src[i] = l.srcStride;
    packed[i] = l.packedStride;
  }
  for (const std::vector<int64_t> *v : {&n, &mul, &shift, &src})
    out.insert(out.end(), v->begin(), v->end());
  if (packedStrides)
    out.insert(out.end(), packed.begin(), packed.end());
}

/// The words of one side of a copy (@P@_side): `nest`'s levels below the
/// instances' level of `count` instances `extent` apart, innermost first.
std::vector<int64_t> copySideParams(const Nest &nest, int64_t extent,
                                    int64_t count) {
  std::vector<NestLevel> levels = {{count, extent, 0}};
  levels.insert(levels.end(), nest.levels.begin(), nest.levels.end());
  const MagicDivisor ld = makeMagicDivisor(nest.length);
  std::vector<int64_t> out = {nest.length, ld.mul, ld.shift, nest.srcBase,
                              static_cast<int64_t>(levels.size())};
  appendLevelWords(levels, /*packedStrides=*/false, out);
  return out;
}

/// A side of a copy as rows: block b at origin offset
/// base + (b % n0) * st0 + (b / n0) * st1.
struct RowGeometry {
  int64_t base = 0, n0 = 1, st0 = 0, n1 = 1, st1 = 0;
  int64_t offset(int64_t b) const {
    return base + (b % n0) * st0 + (b / n0) * st1;
  }
};

/// `side`'s blocks as rows of at most two levels (the instances' level
/// included), merging each level into the one inside it where it continues
/// it; false when more remain.
bool rowGeometry(const NestSide &side, RowGeometry &g) {
  std::vector<std::pair<int64_t, int64_t>> levels; // count, stride
  for (size_t i = side.nest->levels.size(); i-- > 0;)
    levels.push_back(
        {side.nest->levels[i].count, side.nest->levels[i].srcStride});
  levels.push_back({side.count, side.extent});
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (auto [n, st] : levels) {
    if (n == 1)
      continue;
    if (!merged.empty() && st == merged.back().first * merged.back().second) {
      merged.back().first *= n;
      continue;
    }
    merged.push_back({n, st});
  }
  if (merged.size() > 2)
    return false;
  g.base = side.nest->srcBase;
  g.n0 = merged.empty() ? 1 : merged[0].first;
  g.st0 = merged.empty() ? side.nest->length : merged[0].second;
  g.n1 = merged.size() == 2 ? merged[1].first : 1;
  g.st1 = merged.size() == 2 ? merged[1].second : g.n0 * g.st0;
  return true;
}

} // namespace

bool splitIntoRowBlocks(const NestSide &src, const NestSide &dst, int64_t lo,
                        int64_t hi, int64_t minRow, std::vector<RowBlock> &rows,
                        int64_t &rowsLo, int64_t &rowsHi) {
  if (!src.nest || !dst.nest || src.nest->length != dst.nest->length ||
      src.nest->length < std::max<int64_t>(minRow, 1) || lo >= hi)
    return false;
  const int64_t len = src.nest->length;
  const int64_t b0 = (lo + len - 1) / len, b1 = hi / len;
  RowGeometry gs, gd;
  if (b1 <= b0 || !rowGeometry(src, gs) || !rowGeometry(dst, gd))
    return false;
  // One plane on both sides: every row in one block. One plane on one side:
  // its rows cut into planes of the other's.
  const bool onePlane = gs.n1 == 1 && gd.n1 == 1;
  for (auto [one, other] : {std::pair{&gs, &gd}, std::pair{&gd, &gs}})
    if (!onePlane && one->n1 == 1) {
      one->n1 = (one->n0 + other->n0 - 1) / other->n0;
      one->n0 = other->n0;
      one->st1 = one->n0 * one->st0;
    }
  if (onePlane)
    gs.n0 = gd.n0 = std::numeric_limits<int64_t>::max();
  // Rows a copy engine can take: apart by at least their length, going up.
  if (gs.n0 != gd.n0 || (b1 - b0 > 1 && (gs.st0 < len || gd.st0 < len)))
    return false;
  const int64_t n0 = gs.n0;
  std::vector<RowBlock> out;
  auto block = [&](int64_t b, int64_t rowCount, int64_t planes) {
    RowBlock r;
    r.lo = b * len;
    r.hi = (b + rowCount * planes) * len;
    r.srcOffset = gs.offset(b);
    r.dstOffset = gd.offset(b);
    r.width = len;
    r.height = rowCount;
    r.depth = planes;
    const bool oneRow = rowCount == 1 && planes == 1;
    r.srcPitch = oneRow ? len : gs.st0;
    r.dstPitch = oneRow ? len : gd.st0;
    if (planes > 1) {
      r.srcRowsPerPlane = gs.st1 / gs.st0;
      r.dstRowsPerPlane = gd.st1 / gd.st0;
    }
    out.push_back(r);
  };
  int64_t b = b0;
  if (b % n0 != 0 || b1 - b < n0) {
    const int64_t e = std::min(b1, (b / n0 + 1) * n0);
    block(b, e - b, 1);
    b = e;
  }
  const int64_t planes = (b1 - b) / n0;
  if (planes == 1) {
    block(b, n0, 1);
  } else if (planes > 1) {
    // Planes a whole number of rows apart, going up, beyond their rows.
    for (const RowGeometry *g : {&gs, &gd})
      if (g->st1 <= 0 || g->st1 % g->st0 != 0 || g->st1 / g->st0 < n0)
        return false;
    block(b, n0, planes);
  }
  b += planes * n0;
  if (b < b1)
    block(b, b1 - b, 1);
  rows = std::move(out);
  rowsLo = b0 * len;
  rowsHi = b1 * len;
  return true;
}

bool splitIntoNests(const CanonicalLayout &layout, std::vector<Nest> &out,
                    std::string &why) {
  std::vector<Nest> nests;
  int64_t segmentStart = 0;
  for (const Segment &seg : layout.segments) {
    if (seg.packedBytes() == 0)
      continue;
    if (static_cast<int>(seg.dims.size()) > kNestMaxLevels - 1) {
      why = "a segment has " + std::to_string(seg.dims.size()) +
            " dimensions, more than the " + std::to_string(kNestMaxLevels - 1) +
            " a nest kernel walks";
      return false;
    }
    if (nests.size() + seg.runs.size() > static_cast<size_t>(kNestMaxNests)) {
      why = "the layout splits into more than " +
            std::to_string(kNestMaxNests) + " nests";
      return false;
    }
    const int64_t pointBytes = seg.pointBytes();
    int64_t inPoint = 0;
    for (const Run &r : seg.runs) {
      Nest n;
      n.srcBase = seg.offset + r.offset;
      n.packedBase = segmentStart + inPoint;
      n.length = r.length;
      int64_t packedStride = pointBytes;
      n.levels.resize(seg.dims.size());
      for (size_t d = seg.dims.size(); d-- > 0;) {
        n.levels[d] = {seg.dims[d].count, seg.dims[d].stride, packedStride};
        packedStride *= seg.dims[d].count;
      }
      std::vector<int64_t> positions = {n.srcBase, n.packedBase, layout.extent,
                                        layout.size};
      for (const NestLevel &l : n.levels) {
        positions.push_back(l.srcStride);
        positions.push_back(l.packedStride);
      }
      n.width = commonAlignment(positions);
      while (n.width > n.length)
        n.width /= 2;
      inPoint += r.length;
      nests.push_back(std::move(n));
    }
    segmentStart += seg.packedBytes();
  }
  out = std::move(nests);
  return true;
}

bool nestsBeatPlan(const KernelPlan &plan, const std::vector<Nest> &nests) {
  if (plan.family != KernelFamily::Strided || !isRecordPeriodPlan(plan) ||
      plan.layout.segments.size() != 1 ||
      plan.layout.segments[0].runs.size() != 1 || nests.empty())
    return false;
  for (const Nest &n : nests)
    if (n.width < 4 || n.length % n.width != 0)
      return false;
  return true;
}

const Nest *streamNest(const std::vector<Nest> &nests, int64_t size) {
  if (nests.size() != 1 || size <= 0)
    return nullptr;
  const Nest &n = nests[0];
  if (n.packedBase != 0 || n.length <= 0 ||
      n.levels.size() + 1 > static_cast<size_t>(kNestMaxLevels))
    return nullptr;
  // Innermost level first: each level's packed stride is the bytes of the
  // levels inside it, so block b starts at packed byte b * length.
  int64_t expected = n.length;
  for (size_t i = n.levels.size(); i-- > 0;) {
    const NestLevel &l = n.levels[i];
    if (l.packedStride != expected || l.count <= 0 ||
        expected > std::numeric_limits<int64_t>::max() / l.count)
      return nullptr;
    expected *= l.count;
  }
  return expected == size ? &n : nullptr;
}

namespace {
/// The origin offsets of `side`'s first and last touched bytes (its
/// instances' level included), [lo, hi).
void nestSideSpan(const NestSide &side, int64_t &lo, int64_t &hi) {
  __int128 down = side.nest->srcBase, up = side.nest->srcBase;
  auto reach = [&](int64_t count, int64_t stride) {
    const __int128 r = static_cast<__int128>(count - 1) * stride;
    (r < 0 ? down : up) += r;
  };
  reach(side.count, side.extent);
  for (const NestLevel &l : side.nest->levels)
    reach(l.count, l.srcStride);
  lo = static_cast<int64_t>(down);
  hi = static_cast<int64_t>(up + side.nest->length);
}
} // namespace

LaunchConfig computeNestCopyLaunch(const NestSide &src, const NestSide &dst,
                                   int64_t lo, int64_t hi, int64_t maxBlocks) {
  LaunchConfig cfg;
  cfg.block = 256;
  if (!checkPackRange(src.size, src.count, lo, hi, cfg.error) ||
      !checkPackRange(dst.size, dst.count, lo, hi, cfg.error))
    return cfg;
  if (!src.nest || !dst.nest) {
    cfg.error = "a side of the copy is not one nest in pack order";
    return cfg;
  }
  // Blocks of one length on both sides that 16 does not divide: chunks of
  // one block each (the kernel's comment says why).
  const int64_t length = src.nest->length;
  const bool byBlocks = dst.nest->length == length && length % 16 != 0;
  int64_t numChunks = lo < hi ? (hi + 15) / 16 - lo / 16 : 0;
  int64_t chunks = 0, firstBlock = 0;
  MagicDivisor cd{};
  int64_t spanLo = 0, spanHi = 0;
  if (byBlocks && lo < hi) {
    chunks = (length + 30) / 16; // a block at any alignment
    firstBlock = lo / length;
    numChunks = ((hi - 1) / length - firstBlock + 1) * chunks;
    cd = makeMagicDivisor(chunks);
    nestSideSpan(src, spanLo, spanHi);
  }
  cfg.params = {lo,       hi,         numChunks, chunks, cd.mul,
                cd.shift, firstBlock, spanLo,    spanHi};
  for (const NestSide *side : {&src, &dst}) {
    std::vector<int64_t> w =
        copySideParams(*side->nest, side->extent, side->count);
    cfg.params.insert(cfg.params.end(), w.begin(), w.end());
  }
  if (numChunks > 0)
    cfg.grid = cappedGrid(numChunks / cfg.block + (numChunks % cfg.block != 0),
                          maxBlocks);
  return cfg;
}

std::string nestShapeKey(int width) { return "nest.w" + std::to_string(width); }

std::string nestKernelPrefix(int width) {
  return "ddtc_nest_w" + std::to_string(width);
}

EmittedKernels emitNestKernels(int width) {
  assert(
      (width == 1 || width == 2 || width == 4 || width == 8 || width == 16) &&
      "the access width must be a power of two up to 16");
  EmittedKernels out;
  const std::string prefix = nestKernelPrefix(width);
  out.packName = prefix + "_pack";
  out.unpackName = prefix + "_unpack";
  out.paramsName = prefix + "_params";
  out.takesUnits = false;
  out.banner = "// ddtc nest kernels of width " + std::to_string(width) +
               ": any strided nest, described at launch\n";
  std::string s = substitute(kNestSource, "@P@", prefix);
  s = substitute(s, "@W@", std::to_string(width));
  out.source = substitute(s, "@T@", cudaAccessType(width));
  return out;
}

LaunchConfig computeNestLaunch(const Nest &nest, int64_t size, int64_t extent,
                               int64_t count, int64_t lo, int64_t hi,
                               int64_t maxBlocks) {
  LaunchConfig cfg;
  cfg.block = 256;
  if (!checkPackRange(size, count, lo, hi, cfg.error))
    return cfg;
  if (nest.levels.size() + 1 > static_cast<size_t>(kNestMaxLevels) ||
      nest.length <= 0 || size <= 0) {
    cfg.error = "the nest has more than " + std::to_string(kNestMaxLevels - 1) +
                " levels or no bytes";
    return cfg;
  }
  // The instances' level outermost.
  std::vector<NestLevel> levels = {{count, extent, size}};
  levels.insert(levels.end(), nest.levels.begin(), nest.levels.end());
  const int64_t first =
      blocksStartingBefore(levels, 0, lo - nest.length + 1 - nest.packedBase);
  const int64_t end = blocksStartingBefore(levels, 0, hi - nest.packedBase);
  // A thread a chunk of 16 bytes of a block, whatever the width.
  const int64_t chunks = nest.length / 16 + (nest.length % 16 != 0);
  const int64_t numChunks = lo < hi ? (end - first) * chunks : 0;
  const MagicDivisor cd = makeMagicDivisor(chunks);
  cfg.params = {lo,
                hi,
                first,
                numChunks,
                chunks,
                cd.mul,
                cd.shift,
                nest.length,
                nest.srcBase,
                nest.packedBase,
                static_cast<int64_t>(levels.size())};
  appendLevelWords(levels, /*packedStrides=*/true, cfg.params);
  if (numChunks > 0)
    cfg.grid = cappedGrid(numChunks / cfg.block + (numChunks % cfg.block != 0),
                          maxBlocks);
  return cfg;
}

} // namespace ddtc
