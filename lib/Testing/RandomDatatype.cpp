//===- RandomDatatype.cpp - Random datatype trees for testing -------------===//
//
// A recursive generator: each level picks a constructor and arguments that
// stress the corners of the MPI rules (zero-length blocks, negative and
// beyond-32-bit displacements, overlapping instances, resized bounds inside
// and outside the data), then keeps the tree only if Datatype::create accepts
// every node and the touched span, packed size and piece count stay bounded.
//===----------------------------------------------------------------------===//

#include "ddtc/Testing/RandomDatatype.h"

#include "ddtc/Core/Typemap.h"

#include <algorithm>
#include <limits>

using namespace ddtc;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

int64_t saturatingMul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0)
    return 0;
  if (a > kInt64Max / b)
    return kInt64Max;
  return a * b;
}

int64_t saturatingAdd(int64_t a, int64_t b) {
  if (a > kInt64Max - b)
    return kInt64Max;
  return a + b;
}

int64_t sumOf(const std::vector<int64_t> &v) {
  int64_t s = 0;
  for (int64_t x : v)
    s = saturatingAdd(s, std::max<int64_t>(x, 0));
  return s;
}

const Primitive kPrimitives[] = {
#define DDTC_PRIMITIVE(ID, ...) Primitive::ID,
#include "ddtc/Core/Primitives.def"
};
constexpr size_t kNumPrimitives = sizeof(kPrimitives) / sizeof(kPrimitives[0]);

const Kind kConstructors[] = {
    Kind::Contiguous,   Kind::Vector,        Kind::HVector, Kind::Indexed,
    Kind::HIndexed,     Kind::IndexedBlock,  Kind::HIndexedBlock,
    Kind::Struct,       Kind::Subarray,      Kind::Darray,  Kind::Resized,
    Kind::Dup,
};
constexpr size_t kNumConstructors =
    sizeof(kConstructors) / sizeof(kConstructors[0]);

/// Whether `count` instances of `t` stay within the bounds of `opts`.
bool withinBounds(const Datatype &t, int64_t count,
                  const RandomDatatypeOptions &opts) {
  const LayoutInfo &l = t.layout();
  if (saturatingMul(l.size, count) > opts.maxPackedSize)
    return false;
  if (saturatingMul(countPrimitivePieces(t), count) > opts.maxPieces)
    return false;
  int64_t lo = 0, hi = 0;
  std::string error;
  if (!touchedSpan(t, count, lo, hi, error))
    return false;
  // hi - lo itself may not fit in 64 bits.
  return !(lo < 0 && hi > opts.maxSpan + lo) && hi - lo <= opts.maxSpan;
}

class Generator {
public:
  Generator(std::mt19937_64 &rng, const RandomDatatypeOptions &opts)
      : rng_(rng), opts_(opts) {}

  TypeRef type(unsigned depth, bool top);

private:
  /// An integer in [lo, hi], (almost) uniform; independent of the standard
  /// library's distributions so sequences agree across platforms.
  int64_t uniform(int64_t lo, int64_t hi) {
    if (hi <= lo)
      return lo;
    uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    uint64_t r = rng_();
    if (range != 0) // 0: the whole 64-bit range
      r %= range;
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + r);
  }
  /// True with probability `percent` / 100.
  bool chance(int percent) { return uniform(0, 99) < percent; }

  /// Counts and block lengths: mostly 1-4, sometimes 0 or up to 12, rarely
  /// in the hundreds.
  int64_t smallCount(int64_t zeroPercent = 5) {
    if (chance(static_cast<int>(zeroPercent)))
      return 0;
    if (chance(2))
      return uniform(13, 300);
    if (chance(8))
      return uniform(5, 12);
    return uniform(1, 4);
  }
  /// A displacement shift beyond the 32-bit range (either sign), in bytes.
  int64_t largeShift() {
    int64_t magnitude = uniform(int64_t(1) << 31, int64_t(1) << 34);
    return chance(50) ? magnitude : -magnitude;
  }
  /// Byte displacements around multiples of `extent`.
  int64_t byteDispl(int64_t extent) {
    int64_t unit = extent != 0 ? extent : uniform(1, 16);
    int64_t d = uniform(-6, 6) * unit;
    if (chance(40))
      d += uniform(-24, 24);
    return d;
  }

  TypeRef primitive() {
    return Datatype::primitive(kPrimitives[uniform(0, kNumPrimitives - 1)]);
  }
  TypeRef node(Kind kind, unsigned depth);
  /// An old type for a constructor of `kind` at `depth`.
  TypeRef child(Kind kind, unsigned depth) {
    TypeRef c = type(depth - 1, false);
    for (int i = 0; i < 20 && !acceptable(kind, *c); ++i)
      c = type(depth - 1, false);
    return acceptable(kind, *c) ? c : primitive();
  }
  bool acceptable(Kind parent, const Datatype &old) const {
    const LayoutInfo &l = old.layout();
    if (l.size != 0)
      return true;
    if (opts_.avoidEmptyDarrayOldType && parent == Kind::Darray)
      return false;
    return !(opts_.avoidEmptyStructMember && parent == Kind::Struct);
  }

  std::mt19937_64 &rng_;
  const RandomDatatypeOptions &opts_;
};

TypeRef Generator::type(unsigned depth, bool top) {
  // Leaves get likelier further down; the top level is rarely a primitive.
  if (depth == 0 || chance(top ? 4 : 20))
    return primitive();
  for (int attempt = 0; attempt < 20; ++attempt) {
    Kind kind = kConstructors[uniform(0, kNumConstructors - 1)];
    TypeRef t = node(kind, depth);
    if (t && withinBounds(*t, 1, opts_))
      return t;
  }
  return primitive();
}

TypeRef Generator::node(Kind kind, unsigned depth) {
  TypeArgs a;
  a.kind = kind;
  if (kind == Kind::Struct) {
    int64_t n = chance(3) ? 0 : uniform(1, 4);
    bool shifted = chance(5);
    int64_t shift = shifted ? largeShift() : 0;
    int64_t pos = uniform(-32, 16);
    for (int64_t i = 0; i < n; ++i) {
      TypeRef c = child(kind, depth);
      a.blocklens.push_back(smallCount(8));
      // Mostly laid out one after another like a C struct, sometimes
      // anywhere (out of order, overlapping).
      int64_t d = chance(70) ? pos : byteDispl(c->layout().extent);
      pos = d + saturatingMul(std::max<int64_t>(c->layout().extent, 0),
                              a.blocklens.back()) +
            uniform(0, 8);
      a.displs.push_back(d + shift);
      a.children.push_back(std::move(c));
    }
  } else {
    TypeRef c = child(kind, depth);
    const LayoutInfo &l = c->layout();
    int64_t ext = l.extent;
    switch (kind) {
    case Kind::Primitive:
    case Kind::Struct:
      break;
    case Kind::Contiguous:
      a.count = smallCount();
      break;
    case Kind::Vector:
      a.count = smallCount();
      a.blocklen = smallCount();
      a.stride = chance(70) ? a.blocklen + uniform(0, 3) : uniform(-6, 6);
      break;
    case Kind::HVector:
      a.count = smallCount();
      a.blocklen = smallCount();
      a.stride = chance(60) ? (a.blocklen + uniform(0, 2)) * ext
                            : byteDispl(ext);
      if (chance(30))
        a.stride += uniform(-8, 8);
      break;
    case Kind::Indexed:
    case Kind::IndexedBlock: {
      int64_t n = chance(4) ? 0 : uniform(1, 6);
      if (kind == Kind::IndexedBlock)
        a.blocklen = smallCount();
      // A shift beyond 32 bits in bytes, still an int in extents.
      int64_t shift = 0;
      if (chance(4) && ext > 0)
        shift = std::clamp<int64_t>(largeShift() / ext, -kIntMax / 2,
                                    kIntMax / 2);
      int64_t pos = uniform(-8, 4);
      for (int64_t i = 0; i < n; ++i) {
        int64_t bl = kind == Kind::Indexed ? smallCount(10) : a.blocklen;
        if (kind == Kind::Indexed)
          a.blocklens.push_back(bl);
        int64_t d = chance(65) ? pos : uniform(-10, 10);
        pos = d + bl + uniform(0, 3);
        a.displs.push_back(d + shift);
      }
      break;
    }
    case Kind::HIndexed:
    case Kind::HIndexedBlock: {
      int64_t n = chance(4) ? 0 : uniform(1, 6);
      if (kind == Kind::HIndexedBlock)
        a.blocklen = smallCount();
      int64_t shift = chance(5) ? largeShift() : 0;
      int64_t pos = uniform(-64, 32);
      for (int64_t i = 0; i < n; ++i) {
        int64_t bl = kind == Kind::HIndexed ? smallCount(10) : a.blocklen;
        if (kind == Kind::HIndexed)
          a.blocklens.push_back(bl);
        int64_t d = chance(60) ? pos : byteDispl(ext);
        pos = d + saturatingMul(std::max<int64_t>(ext, 0), bl) + uniform(0, 16);
        a.displs.push_back(d + shift);
      }
      break;
    }
    case Kind::Subarray: {
      int64_t ndims = uniform(1, chance(10) ? 4 : 3);
      a.order = chance(50) ? Order::C : Order::Fortran;
      for (int64_t i = 0; i < ndims; ++i) {
        int64_t size = uniform(1, ndims == 1 ? 12 : 6);
        int64_t sub = uniform(1, size);
        a.sizes.push_back(size);
        a.subsizes.push_back(sub);
        a.starts.push_back(uniform(0, size - sub));
      }
      break;
    }
    case Kind::Darray: {
      int64_t ndims = uniform(1, 3);
      a.order = chance(50) ? Order::C : Order::Fortran;
      int64_t procs = 1;
      for (int64_t i = 0; i < ndims; ++i) {
        int64_t g = uniform(1, ndims == 1 ? 16 : 8);
        int64_t choice = uniform(0, 2);
        Distribution d = choice == 0   ? Distribution::Block
                         : choice == 1 ? Distribution::Cyclic
                                       : Distribution::None;
        int64_t p = d == Distribution::None ? 1 : uniform(1, 3);
        int64_t darg = kDefaultDarg;
        if (d == Distribution::Block && chance(50)) {
          int64_t minBlock = (g + p - 1) / p;
          darg = minBlock + uniform(0, 2);
        } else if (d == Distribution::Cyclic && chance(70)) {
          darg = uniform(1, 4);
        }
        a.sizes.push_back(g);
        a.distribs.push_back(d);
        a.dargs.push_back(darg);
        a.psizes.push_back(p);
        procs *= p;
      }
      a.commSize = procs;
      a.rank = uniform(0, procs - 1);
      break;
    }
    case Kind::Resized: {
      int64_t trueLb = l.trueLb, trueExt = l.trueExtent;
      switch (uniform(0, 4)) {
      case 0:
        a.lb = l.lb;
        break;
      case 1:
        a.lb = trueLb;
        break;
      case 2:
        a.lb = trueLb - uniform(1, 48); // below the data, often negative
        break;
      case 3:
        a.lb = -uniform(1, 64);
        break;
      default:
        a.lb = l.lb + uniform(-32, 32);
        break;
      }
      if (chance(3))
        a.lb += largeShift();
      switch (uniform(0, 5)) {
      case 0:
        a.extent = ext;
        break;
      case 1:
        a.extent = trueExt;
        break;
      case 2: // smaller than the data: instances overlap
        a.extent = trueExt > 0 ? uniform(0, trueExt - 1) : 0;
        break;
      case 3: // larger than the data: gaps between instances
        a.extent = trueExt + uniform(1, 64);
        break;
      case 4:
        a.extent = chance(80) ? uniform(0, 2 * trueExt + 8)
                              : -uniform(1, 16);
        break;
      default:
        a.extent = l.size;
        break;
      }
      break;
    }
    case Kind::Dup:
      break;
    }
    if (opts_.avoidStrideMinusOne &&
        ((kind == Kind::HVector && a.stride == -1) ||
         (kind == Kind::Vector && a.stride * ext == -1)))
      a.stride = -2;
    a.children.push_back(std::move(c));
  }
  std::string error;
  return Datatype::create(std::move(a), error);
}

} // namespace

int64_t ddtc::countPrimitivePieces(const Datatype &t) {
  const TypeArgs &a = t.args();
  auto child = [&](size_t i) { return countPrimitivePieces(*t.child(i)); };
  switch (t.kind()) {
  case Kind::Primitive: {
    const PrimitiveInfo &info = getPrimitiveInfo(a.primitive);
    return info.len1 > 0 ? 2 : 1;
  }
  case Kind::Contiguous:
    return saturatingMul(a.count, child(0));
  case Kind::Vector:
  case Kind::HVector:
    return saturatingMul(saturatingMul(a.count, a.blocklen), child(0));
  case Kind::Indexed:
  case Kind::HIndexed:
    return saturatingMul(sumOf(a.blocklens), child(0));
  case Kind::IndexedBlock:
  case Kind::HIndexedBlock:
    return saturatingMul(
        saturatingMul(static_cast<int64_t>(a.displs.size()), a.blocklen),
        child(0));
  case Kind::Struct: {
    int64_t total = 0;
    for (size_t i = 0; i < a.children.size(); ++i)
      total = saturatingAdd(total, saturatingMul(a.blocklens[i], child(i)));
    return total;
  }
  case Kind::Subarray: {
    int64_t n = 1;
    for (int64_t s : a.subsizes)
      n = saturatingMul(n, s);
    return saturatingMul(n, child(0));
  }
  case Kind::Darray: {
    // The local block is at most the whole array.
    int64_t n = 1;
    for (int64_t s : a.sizes)
      n = saturatingMul(n, s);
    return saturatingMul(n, child(0));
  }
  case Kind::Resized:
  case Kind::Dup:
    return child(0);
  }
  return kInt64Max;
}

uint64_t ddtc::randomCaseSeed(uint64_t seed, uint64_t index) {
  // splitmix64 of a combination of both, so nearby seeds and indices give
  // unrelated streams.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
  for (int i = 0; i < 2; ++i) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
  }
  return z;
}

TypeRef ddtc::generateTransposeDatatype(std::mt19937_64 &rng,
                                        const RandomDatatypeOptions &opts) {
  auto draw = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  std::string error;
  TypeRef elem;
  switch (draw(0, 5)) {
  case 0:
    elem = Datatype::primitive(Primitive::Char);
    break;
  case 1:
    elem = Datatype::primitive(Primitive::Short);
    break;
  case 2:
    elem = Datatype::primitive(Primitive::Float);
    break;
  case 3:
    elem = Datatype::primitive(Primitive::Double);
    break;
  case 4: // 12 bytes: three 4-byte accesses
    elem = Datatype::contiguous(3, Datatype::primitive(Primitive::Int), error);
    break;
  default:
    elem =
        Datatype::contiguous(2, Datatype::primitive(Primitive::Double), error);
    break;
  }
  const int64_t e = elem->layout().extent;
  const int64_t spacing = draw(1, 2); // every column, or every other one
  const int64_t rows = draw(2, 80), cols = draw(2, 80);
  // A row of the matrix, sometimes with an element of padding.
  const int64_t pitch = (cols * spacing + draw(0, 1)) * e;
  TypeRef col = Datatype::hvector(rows, 1, pitch, elem, error);
  TypeRef t;
  switch (draw(0, 2)) {
  case 0: // the columns
    t = Datatype::contiguous(
        cols, Datatype::resized(0, spacing * e, col, error), error);
    break;
  case 1: { // each column through a few planes: a dimension in between
    TypeRef planes =
        Datatype::hvector(draw(2, 4), 1, (rows + 1) * pitch, col, error);
    t = Datatype::contiguous(
        cols, Datatype::resized(0, spacing * e, planes, error), error);
    break;
  }
  default: { // the columns of a few matrices: a dimension outside
    TypeRef one = Datatype::contiguous(
        cols, Datatype::resized(0, spacing * e, col, error), error);
    t = Datatype::hvector(draw(2, 3), 1, rows * pitch, one, error);
    break;
  }
  }
  return t && withinBounds(*t, 1, opts) ? t : nullptr;
}

RandomDatatypeCase ddtc::generateRandomDatatype(
    std::mt19937_64 &rng, const RandomDatatypeOptions &opts) {
  Generator gen(rng, opts);
  uint64_t extraCounts = static_cast<uint64_t>(std::max<int64_t>(opts.maxCount, 2) - 1);
  RandomDatatypeCase out;
  // Decided on a copy of the generator, from bits the tree's first draw
  // hardly depends on: the other cases keep the trees their seeds drew
  // before transposing cases existed.
  std::mt19937_64 peek = rng;
  const bool transpose = opts.transposeEvery > 0 &&
                         (peek() >> 32) % opts.transposeEvery == 0;
  for (unsigned attempt = 0; attempt < opts.maxAttempts; ++attempt) {
    TypeRef t = transpose ? generateTransposeDatatype(rng, opts)
                          : gen.type(opts.maxDepth, true);
    int64_t count = 2 + static_cast<int64_t>(rng() % extraCounts);
    if (t && withinBounds(*t, count, opts)) {
      out.type = std::move(t);
      out.count = count;
      out.rejected = attempt;
      return out;
    }
  }
  out.type = Datatype::primitive(Primitive::Int);
  out.count = 2;
  out.rejected = opts.maxAttempts;
  return out;
}
