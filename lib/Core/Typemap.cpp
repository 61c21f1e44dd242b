//===- Typemap.cpp - Runs of bytes in pack order, reference pack/unpack ---===//

#include "ddtc/Core/Typemap.h"
#include "CheckedMath.h"
#include "Layout.h"

#include <algorithm>
#include <cstring>

namespace ddtc {

namespace {

void emit(const Datatype &t, int64_t base, RunMerger &sink);

/// `n` consecutive copies of `t` (stride: its extent) from `base`.
void emitBlock(const Datatype &t, int64_t base, int64_t n, RunMerger &sink) {
  if (n <= 0)
    return;
  const LayoutInfo &l = t.layout();
  if (l.dense) {
    sink.add(base + l.lb, n * l.size);
    return;
  }
  for (int64_t j = 0; j < n; ++j)
    emit(t, base + j * l.extent, sink);
}

/// The owned index blocks of one dimension, as few strided groups
/// (darrayOwnedRuns): block `i` in order, and how many there are.
using OwnedBlocks = std::vector<IndexBlockRun>;
int64_t blockCount(const OwnedBlocks &o) {
  int64_t n = 0;
  for (const IndexBlockRun &r : o)
    n += r.count;
  return n;
}
IndexBlock blockAt(const OwnedBlocks &o, int64_t i) {
  for (const IndexBlockRun &r : o) {
    if (i < r.count)
      return {r.start + i * r.step, r.length};
    i -= r.count;
  }
  return {0, 0};
}

/// Visits the elements of an array type (subarray, darray) in pack order:
/// the innermost dimension, the one that varies fastest, is handed over as
/// blocks of consecutive elements. `owned[d]` describes the owned index
/// blocks of dimension d.
void emitArray(const Datatype &t, const std::vector<int64_t> &shape,
               const std::vector<OwnedBlocks> &owned, Order order, int64_t base,
               RunMerger &sink) {
  const Datatype &old = *t.child();
  int64_t ext = old.layout().extent;
  size_t nd = shape.size();
  // dims[0] is the slowest dimension, dims[nd-1] the fastest.
  std::vector<size_t> dims(nd);
  std::vector<int64_t> weight(nd); // elements per step of each dimension
  int64_t w = 1;
  for (size_t k = 0; k < nd; ++k) {
    size_t d = order == Order::C ? nd - 1 - k : k;
    dims[nd - 1 - k] = d;
    weight[d] = w;
    w *= shape[d];
  }
  std::vector<int64_t> blocks(nd);
  for (size_t d = 0; d < nd; ++d)
    if ((blocks[d] = blockCount(owned[d])) == 0)
      return;
  // Odometer over (block, index within block) for each dimension but the
  // fastest, which is emitted block by block.
  std::vector<int64_t> blk(nd, 0);
  std::vector<int64_t> pos(nd, 0);
  size_t fast = dims[nd - 1];
  while (true) {
    int64_t outer = 0;
    for (size_t k = 0; k + 1 < nd; ++k) {
      size_t d = dims[k];
      outer += (blockAt(owned[d], blk[d]).start + pos[d]) * weight[d];
    }
    for (int64_t i = 0; i < blocks[fast]; ++i) {
      IndexBlock b = blockAt(owned[fast], i);
      emitBlock(old, base + (outer + b.start * weight[fast]) * ext, b.length,
                sink);
    }
    // Advance the odometer, fastest remaining dimension first.
    size_t k = nd - 1;
    while (k-- > 0) {
      size_t d = dims[k];
      if (++pos[d] < blockAt(owned[d], blk[d]).length)
        break;
      pos[d] = 0;
      if (++blk[d] < blocks[d])
        break;
      blk[d] = 0;
    }
    if (k == static_cast<size_t>(-1))
      return;
  }
}

void emit(const Datatype &t, int64_t base, RunMerger &sink) {
  const TypeArgs &a = t.args();
  switch (a.kind) {
  case Kind::Primitive: {
    const PrimitiveInfo &p = getPrimitiveInfo(a.primitive);
    sink.add(base, p.len0);
    sink.add(base + p.off1, p.len1);
    return;
  }
  case Kind::Contiguous:
    emitBlock(*t.child(), base, a.count, sink);
    return;
  case Kind::Vector:
  case Kind::HVector: {
    int64_t stride = a.kind == Kind::Vector
                         ? a.stride * t.child()->layout().extent
                         : a.stride;
    for (int64_t i = 0; i < a.count; ++i)
      emitBlock(*t.child(), base + i * stride, a.blocklen, sink);
    return;
  }
  case Kind::Indexed:
  case Kind::HIndexed:
  case Kind::IndexedBlock:
  case Kind::HIndexedBlock: {
    int64_t ext = t.child()->layout().extent;
    for (size_t i = 0; i < a.displs.size(); ++i)
      emitBlock(*t.child(), base + getBlockDisplacement(a, i, ext),
                getBlockLength(a, i), sink);
    return;
  }
  case Kind::Struct:
    for (size_t i = 0; i < a.displs.size(); ++i)
      emitBlock(*t.child(i), base + a.displs[i], a.blocklens[i], sink);
    return;
  case Kind::Subarray: {
    std::vector<OwnedBlocks> owned(a.sizes.size());
    for (size_t d = 0; d < a.sizes.size(); ++d)
      owned[d] = {{a.starts[d], a.subsizes[d], 1, 0}};
    emitArray(t, a.sizes, owned, a.order, base, sink);
    return;
  }
  case Kind::Darray: {
    std::vector<OwnedBlocks> owned(a.sizes.size());
    for (unsigned d = 0; d < a.sizes.size(); ++d)
      owned[d] = darrayOwnedRuns(a, d);
    emitArray(t, a.sizes, owned, a.order, base, sink);
    return;
  }
  case Kind::Resized:
  case Kind::Dup:
    emit(*t.child(), base, sink);
    return;
  }
}

} // namespace

void forEachRun(const Datatype &type, int64_t count,
                const std::function<void(const Run &)> &fn) {
  RunMerger sink(fn);
  emitBlock(type, 0, count, sink);
}

std::vector<Run> flatten(const Datatype &type, int64_t count) {
  std::vector<Run> runs;
  forEachRun(type, count, [&](const Run &r) { runs.push_back(r); });
  return runs;
}

bool touchedSpan(const Datatype &type, int64_t count, int64_t &lo, int64_t &hi,
                 std::string &error) {
  const LayoutInfo &l = type.layout();
  lo = hi = 0;
  if (count <= 0 || !l.hasData)
    return true;
  Checked c;
  int64_t last = c.mul(count - 1, l.extent);
  lo = c.add(std::min<int64_t>(0, last), l.trueLb);
  hi = c.add(std::max<int64_t>(0, last), l.trueUb());
  // Callers size buffers by hi - lo: it must fit too (an extent of -2^63
  // puts two instances 2^63 bytes apart).
  c.sub(hi, lo);
  if (c.overflowed) {
    error = "the bytes of " + std::to_string(count) +
            " instances overflow 64-bit byte offsets";
    return false;
  }
  return true;
}

int64_t packedSize(const Datatype &type, int64_t count) {
  Checked c;
  int64_t n = c.mul(count, type.layout().size);
  return c.overflowed ? -1 : n;
}

void referencePack(const Datatype &type, int64_t count, const void *origin,
                   void *packed) {
  const char *src = static_cast<const char *>(origin);
  char *dst = static_cast<char *>(packed);
  forEachRun(type, count, [&](const Run &r) {
    std::memcpy(dst, src + r.offset, r.length);
    dst += r.length;
  });
}

void referenceUnpack(const Datatype &type, int64_t count, const void *packed,
                     void *origin) {
  const char *src = static_cast<const char *>(packed);
  char *dst = static_cast<char *>(origin);
  forEachRun(type, count, [&](const Run &r) {
    std::memcpy(dst + r.offset, src, r.length);
    src += r.length;
  });
}

void referenceUnpackRange(const Datatype &type, int64_t count,
                          const void *stream, int64_t lo, int64_t hi,
                          void *origin) {
  const char *src = static_cast<const char *>(stream);
  char *dst = static_cast<char *>(origin);
  int64_t at = 0;
  forEachRun(type, count, [&](const Run &r) {
    int64_t a = std::max(at, lo), b = std::min(at + r.length, hi);
    if (a < b)
      std::memcpy(dst + r.offset + (a - at), src + a, b - a);
    at += r.length;
  });
}

} // namespace ddtc
