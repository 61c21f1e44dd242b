//===- Layout.cpp - MPI layout figures of a constructor call --------------===//
//
// Size, bounds and true bounds as the MPI library computes them. The MPI
// standard defines them from the whole typemap; Open MPI (the library ddtc is
// proven against) builds each type by appending blocks of old types one after
// the other, and two of its rules depend on that order:
//  - bounds set by resized/subarray/darray stick: once a type has one, bounds
//    of old types without one no longer move it;
//  - after each block, when no bound is sticky, ub is rounded up so that
//    ub - lb is a multiple of the largest alignment seen so far (the epsilon
//    of the standard, applied block by block, so an lb that moves down later
//    keeps the earlier rounding).
// Each constructor below appends the blocks in the order that library does.
//===----------------------------------------------------------------------===//

#include "Layout.h"
#include "CheckedMath.h"

#include <algorithm>
#include <limits>

namespace ddtc {

namespace {

/// The layout of an empty type (no block at all): MPI_DATATYPE_NULL's.
LayoutInfo emptyLayout() {
  LayoutInfo l;
  l.align = 0;
  return l;
}

/// A type under construction: blocks of old types are appended to it.
struct Builder {
  Checked c;
  bool any = false, anyData = false;
  int64_t lb = 0, ub = 0, trueLb = 0, trueUb = 0, size = 0, align = 1;
  bool explicitLb = false, explicitUb = false;

  /// Appends `count` copies of `old`, `stride` bytes apart, from `disp`.
  void add(const LayoutInfo &old, int64_t count, int64_t disp, int64_t stride) {
    if (count <= 0)
      return;
    int64_t last = c.add(disp, c.mul(stride, count - 1));
    int64_t lo = std::min(disp, last), hi = std::max(disp, last);
    int64_t blockLb = c.add(lo, old.lb), blockUb = c.add(hi, old.ub());
    if (old.explicitLb != explicitLb) {
      if (!explicitLb)
        lb = blockLb;
      explicitLb = true;
    } else {
      lb = any ? std::min(lb, blockLb) : blockLb;
    }
    if (old.explicitUb != explicitUb) {
      if (!explicitUb)
        ub = blockUb;
      explicitUb = true;
    } else {
      ub = any ? std::max(ub, blockUb) : blockUb;
    }
    any = true;
    align = std::max(align, old.align);
    if (!explicitUb) {
      int64_t rem = c.sub(ub, lb) % align;
      if (rem != 0)
        ub = c.add(ub, align - rem);
    }
    if (old.size == 0)
      return;
    size = c.add(size, c.mul(count, old.size));
    int64_t tl = c.add(lo, old.trueLb), tu = c.add(hi, old.trueUb());
    trueLb = anyData ? std::min(trueLb, tl) : tl;
    trueUb = anyData ? std::max(trueUb, tu) : tu;
    anyData = true;
  }

  bool finish(LayoutInfo &out, std::string &error) {
    if (!any) {
      out = emptyLayout();
      return true;
    }
    out.size = size;
    out.lb = lb;
    out.extent = c.sub(ub, lb);
    out.align = align;
    out.explicitLb = explicitLb;
    out.explicitUb = explicitUb;
    out.hasData = anyData && size > 0;
    out.trueLb = out.hasData ? trueLb : 0;
    out.trueExtent = out.hasData ? c.sub(trueUb, trueLb) : 0;
    if (c.overflowed) {
      error = "the layout overflows 64-bit byte offsets";
      return false;
    }
    return true;
  }
};

/// One instance is one run [lb, lb + size) and the next starts right after.
bool isDense(const LayoutInfo &l) {
  return l.contiguousData && l.hasData && l.extent == l.size &&
         l.trueLb == l.lb;
}

/// Row-major (C) or column-major (Fortran) linear index of `idx` in an array
/// of shape `shape`.
int64_t linearIndex(Checked &c, const std::vector<int64_t> &shape,
                    const std::vector<int64_t> &idx, Order order) {
  int64_t lin = 0;
  size_t n = shape.size();
  for (size_t k = 0; k < n; ++k) {
    size_t i = order == Order::C ? k : n - 1 - k;
    lin = c.add(c.mul(lin, shape[i]), idx[i]);
  }
  return lin;
}

/// Subarray and darray: `n` elements (old types) of an array of `shape`,
/// with linear indices from `first` to `last`. The library builds the nest of
/// blocks, then sets lb = 0 and the extent of the whole array explicitly, so
/// only the true bounds and the alignment come from the elements.
bool arrayLayout(const LayoutInfo &old, const std::vector<int64_t> &shape,
                 int64_t first, int64_t last, int64_t n, LayoutInfo &out,
                 std::string &error) {
  Checked c;
  int64_t elems = 1;
  for (int64_t s : shape)
    elems = c.mul(elems, s);
  out = LayoutInfo();
  out.size = c.mul(n, old.size);
  out.lb = 0;
  out.extent = c.mul(elems, old.extent);
  out.align = std::max<int64_t>(1, old.align);
  out.explicitLb = out.explicitUb = true;
  out.hasData = n > 0 && old.hasData;
  if (out.hasData) {
    int64_t d0 = c.mul(first, old.extent), d1 = c.mul(last, old.extent);
    out.trueLb = c.add(std::min(d0, d1), old.trueLb);
    out.trueExtent = c.sub(c.add(std::max(d0, d1), old.trueUb()), out.trueLb);
  }
  if (c.overflowed) {
    error = "the array's extent overflows 64-bit byte offsets";
    return false;
  }
  return true;
}

/// First and last owned index and the number owned along one darray dim.
struct DimRange {
  int64_t first = 0, last = -1, count = 0;
};

DimRange darrayRange(const TypeArgs &a, unsigned dim) {
  DimRange r;
  int64_t g = a.sizes[dim], p = a.psizes[dim], darg = a.dargs[dim];
  int64_t coord = darrayCoord(a, dim);
  switch (a.distribs[dim]) {
  case Distribution::None:
    r.first = 0;
    r.last = g - 1;
    r.count = g;
    break;
  case Distribution::Block: {
    int64_t b = darg == kDefaultDarg ? (g + p - 1) / p : darg;
    Checked c;
    int64_t start = c.mul(coord, b);
    if (!c.overflowed && start < g) {
      r.first = start;
      r.count = std::min(b, g - start);
      r.last = start + r.count - 1;
    }
    break;
  }
  case Distribution::Cyclic: {
    int64_t k = darg == kDefaultDarg ? 1 : darg;
    Checked c;
    int64_t start = c.mul(coord, k);
    int64_t period = c.mul(p, k);
    if (c.overflowed || start >= g)
      break;
    if (period > g - start) { // a single block
      r.first = start;
      r.count = std::min(k, g - start);
      r.last = start + r.count - 1;
      break;
    }
    int64_t blocks = (g - start + period - 1) / period;
    int64_t lastStart = start + (blocks - 1) * period;
    int64_t lastLen = std::min(k, g - lastStart);
    r.first = start;
    r.count = (blocks - 1) * k + lastLen;
    r.last = lastStart + lastLen - 1;
    break;
  }
  }
  return r;
}

} // namespace

int64_t darrayCoord(const TypeArgs &a, unsigned dim) {
  int64_t r = a.rank;
  for (size_t d = a.psizes.size(); d-- > dim + 1;)
    r /= a.psizes[d];
  return r % a.psizes[dim];
}

std::vector<IndexBlockRun> darrayOwnedRuns(const TypeArgs &a, unsigned dim) {
  std::vector<IndexBlockRun> runs;
  DimRange r = darrayRange(a, dim);
  if (r.count == 0)
    return runs;
  if (a.distribs[dim] != Distribution::Cyclic) {
    runs.push_back({r.first, r.count, 1, 0});
    return runs;
  }
  int64_t k = a.dargs[dim] == kDefaultDarg ? 1 : a.dargs[dim];
  int64_t period = a.psizes[dim] * k; // <= g here, so no overflow
  // Blocks start at first, first + period, ... up to r.last; only the last
  // one can be shorter than k.
  int64_t lastStart = r.first + (r.last - r.first) / period * period;
  int64_t blocks = (lastStart - r.first) / period + 1;
  int64_t lastLen = r.last - lastStart + 1;
  if (lastLen == k) {
    runs.push_back({r.first, k, blocks, period});
    return runs;
  }
  if (blocks > 1)
    runs.push_back({r.first, k, blocks - 1, period});
  runs.push_back({lastStart, lastLen, 1, 0});
  return runs;
}

namespace {
/// Index of the first block with a non-zero length, or blocklens.size().
size_t firstNonEmpty(const std::vector<int64_t> &blocklens) {
  size_t i = 0;
  while (i < blocklens.size() && blocklens[i] == 0)
    ++i;
  return i;
}

/// Whether `n` consecutive copies of `old` (one extent apart) are one run.
bool blockIsContiguous(const LayoutInfo &old, int64_t n) {
  return old.contiguousData && (n == 1 || isDense(old));
}

bool computeLayoutOf(const TypeArgs &a, LayoutInfo &out, std::string &error) {
  Builder b;
  const LayoutInfo *old =
      a.children.empty() ? nullptr : &a.children.front()->layout();
  switch (a.kind) {
  case Kind::Primitive: {
    const PrimitiveInfo &p = getPrimitiveInfo(a.primitive);
    out.size = p.size;
    out.lb = 0;
    out.extent = p.extent;
    out.trueLb = 0;
    out.trueExtent = p.len1 ? p.off1 + p.len1 : p.len0;
    out.align = p.align;
    out.hasData = true;
    out.contiguousData = p.len1 == 0 || p.off1 == p.len0;
    return true;
  }
  case Kind::Contiguous:
    if (a.count == 0 || old->size == 0) {
      out = emptyLayout();
      return true;
    }
    b.add(*old, a.count, 0, old->extent);
    if (!b.finish(out, error))
      return false;
    out.contiguousData = blockIsContiguous(*old, a.count);
    return true;
  case Kind::Vector:
  case Kind::HVector: {
    if (a.count == 0 || a.blocklen == 0) {
      out = emptyLayout();
      return true;
    }
    int64_t stride =
        a.kind == Kind::Vector ? b.c.mul(a.stride, old->extent) : a.stride;
    bool adjacent = a.kind == Kind::Vector
                        ? a.blocklen == a.stride
                        : b.c.mul(old->extent, a.blocklen) == a.stride;
    int64_t total = b.c.mul(a.count, a.blocklen);
    if (adjacent || a.count <= 1) {
      b.add(*old, total, 0, old->extent);
    } else if (a.blocklen == 1) {
      b.add(*old, a.count, 0, stride);
    } else {
      // The library builds the block as a type of its own first; its
      // extent is rounded before the blocks are placed.
      Builder block;
      block.add(*old, a.blocklen, 0, old->extent);
      LayoutInfo blockLayout;
      if (!block.finish(blockLayout, error))
        return false;
      b.add(blockLayout, a.count, 0, stride);
    }
    if (!b.finish(out, error))
      return false;
    out.contiguousData =
        (adjacent || a.count <= 1) && blockIsContiguous(*old, total);
    return true;
  }
  case Kind::Indexed:
  case Kind::HIndexed:
  case Kind::IndexedBlock:
  case Kind::HIndexedBlock: {
    bool inExtents = a.kind == Kind::Indexed || a.kind == Kind::IndexedBlock;
    bool oneLength =
        a.kind == Kind::IndexedBlock || a.kind == Kind::HIndexedBlock;
    // The library makes an empty type when no block has elements, and for
    // (h)indexed also when the old type holds no data.
    bool empty = oneLength
                     ? (a.displs.empty() || a.blocklen == 0)
                     : (firstNonEmpty(a.blocklens) == a.blocklens.size() ||
                        old->size == 0);
    if (empty) {
      out = emptyLayout();
      return true;
    }
    int nonEmpty = 0;
    int64_t lastLen = 0;
    for (size_t i = 0; i < a.displs.size(); ++i) {
      int64_t len = oneLength ? a.blocklen : a.blocklens[i];
      int64_t d = inExtents ? b.c.mul(a.displs[i], old->extent) : a.displs[i];
      b.add(*old, len, d, old->extent);
      if (len > 0) {
        ++nonEmpty;
        lastLen = len;
      }
    }
    if (!b.finish(out, error))
      return false;
    out.contiguousData = nonEmpty == 1 && blockIsContiguous(*old, lastLen);
    return true;
  }
  case Kind::Struct: {
    if (firstNonEmpty(a.blocklens) == a.blocklens.size()) {
      out = emptyLayout();
      return true;
    }
    int nonEmpty = 0;
    bool contiguous = false;
    for (size_t i = 0; i < a.displs.size(); ++i) {
      const LayoutInfo &member = a.children[i]->layout();
      b.add(member, a.blocklens[i], a.displs[i], member.extent);
      if (a.blocklens[i] > 0) {
        ++nonEmpty;
        contiguous = blockIsContiguous(member, a.blocklens[i]);
      }
    }
    if (!b.finish(out, error))
      return false;
    out.contiguousData = nonEmpty == 1 && contiguous;
    return true;
  }
  case Kind::Subarray: {
    std::vector<int64_t> last(a.starts.size());
    int64_t n = 1;
    Checked c;
    for (size_t i = 0; i < a.starts.size(); ++i) {
      last[i] = a.starts[i] + a.subsizes[i] - 1;
      n = c.mul(n, a.subsizes[i]);
    }
    int64_t first = linearIndex(c, a.sizes, a.starts, a.order);
    int64_t lastLin = linearIndex(c, a.sizes, last, a.order);
    if (c.overflowed) {
      error = "the layout overflows 64-bit byte offsets";
      return false;
    }
    if (!arrayLayout(*old, a.sizes, first, lastLin, n, out, error))
      return false;
    // Contiguous when every dimension but the slowest is whole.
    size_t slowest = a.order == Order::C ? 0 : a.sizes.size() - 1;
    bool whole = true;
    for (size_t i = 0; i < a.sizes.size(); ++i)
      if (i != slowest && a.subsizes[i] != a.sizes[i])
        whole = false;
    out.contiguousData = whole && blockIsContiguous(*old, n);
    return true;
  }
  case Kind::Darray: {
    size_t nd = a.sizes.size();
    std::vector<int64_t> firsts(nd), lasts(nd);
    int64_t n = 1;
    Checked c;
    for (unsigned i = 0; i < nd; ++i) {
      DimRange r = darrayRange(a, i);
      firsts[i] = r.first;
      lasts[i] = r.last;
      n = c.mul(n, r.count);
    }
    int64_t first = 0, lastLin = 0;
    if (n > 0) {
      first = linearIndex(c, a.sizes, firsts, a.order);
      lastLin = linearIndex(c, a.sizes, lasts, a.order);
    }
    if (c.overflowed) {
      error = "the layout overflows 64-bit byte offsets";
      return false;
    }
    return arrayLayout(*old, a.sizes, first, lastLin, n, out, error);
  }
  case Kind::Resized: {
    out = *old;
    out.lb = a.lb;
    out.extent = a.extent;
    out.explicitLb = out.explicitUb = true;
    Checked c;
    c.add(a.lb, a.extent);
    if (c.overflowed) {
      error = "lb + extent overflows 64-bit byte offsets";
      return false;
    }
    return true;
  }
  case Kind::Dup:
    out = *old;
    return true;
  }
  error = "unknown constructor";
  return false;
}
} // namespace

bool computeLayout(const TypeArgs &a, LayoutInfo &out, std::string &error) {
  if (!computeLayoutOf(a, out, error))
    return false;
  out.dense = isDense(out);
  return true;
}

} // namespace ddtc
