//===- TypemapTest.cpp - Runs in pack order, reference pack/unpack --------===//

#include "ddtc/Core/Typemap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

using namespace ddtc;

namespace {

TypeRef prim(Primitive p) { return Datatype::primitive(p); }

std::vector<Run> runs(std::initializer_list<std::pair<int64_t, int64_t>> l) {
  std::vector<Run> r;
  for (auto [o, n] : l)
    r.push_back({o, n});
  return r;
}

TEST(Flatten, VectorRunsMergeAcrossInstances) {
  std::string e;
  TypeRef v = Datatype::vector(3, 2, 5, prim(Primitive::Double), e);
  EXPECT_EQ(flatten(*v, 1), runs({{0, 16}, {40, 16}, {80, 16}}));
  // The second instance starts at the extent, 96, right after the last block.
  EXPECT_EQ(flatten(*v, 2),
            runs({{0, 16}, {40, 16}, {80, 32}, {136, 16}, {176, 16}}));
}

TEST(Flatten, PackOrderFollowsDisplacementOrder) {
  TypeArgs a;
  a.kind = Kind::HIndexed;
  a.blocklens = {1, 1, 1};
  a.displs = {16, 0, 8};
  a.children = {prim(Primitive::Double)};
  std::string e;
  TypeRef t = Datatype::create(a, e);
  // Runs are not sorted: pack order is the order of the blocks.
  EXPECT_EQ(flatten(*t, 1), runs({{16, 8}, {0, 16}}));
}

TEST(Flatten, PairTypeSkipsPadding) {
  EXPECT_EQ(flatten(*prim(Primitive::ShortInt), 2),
            runs({{0, 2}, {4, 6}, {12, 4}}));
}

TEST(Flatten, FortranSubarray) {
  TypeArgs a;
  a.kind = Kind::Subarray;
  a.sizes = {4, 3};
  a.subsizes = {2, 2};
  a.starts = {1, 1};
  a.order = Order::Fortran;
  a.children = {prim(Primitive::Int)};
  std::string e;
  TypeRef t = Datatype::create(a, e);
  // Element (i, j) at (i + 4 j) * 4; the first index varies fastest.
  EXPECT_EQ(flatten(*t, 1), runs({{20, 8}, {36, 8}}));
}

TEST(Flatten, CyclicDarrayWithRemainder) {
  TypeArgs a;
  a.kind = Kind::Darray;
  a.commSize = 2;
  a.rank = 0;
  a.sizes = {7};
  a.distribs = {Distribution::Cyclic};
  a.dargs = {2};
  a.psizes = {2};
  a.children = {prim(Primitive::Char)};
  std::string e;
  TypeRef t = Datatype::create(a, e);
  // Rank 0 owns {0, 1}, {4, 5}; rank 1 owns {2, 3}, {6}.
  EXPECT_EQ(flatten(*t, 1), runs({{0, 2}, {4, 2}}));
  a.rank = 1;
  t = Datatype::create(a, e);
  EXPECT_EQ(flatten(*t, 1), runs({{2, 2}, {6, 1}}));
  EXPECT_EQ(t->layout().extent, 7);
}

TEST(Flatten, ResizedInstancesOverlapInOrder) {
  std::string e;
  // Extent 4 < size 8: instances overlap, and pack order still follows them.
  TypeRef t = Datatype::resized(0, 4, prim(Primitive::Double), e);
  EXPECT_EQ(flatten(*t, 2), runs({{0, 8}, {4, 8}}));
}

TEST(Span, NegativeDisplacements) {
  std::string e;
  TypeRef v = Datatype::hvector(2, 1, -16, prim(Primitive::Int), e);
  int64_t lo, hi;
  ASSERT_TRUE(touchedSpan(*v, 3, lo, hi, e));
  // lb = -16, extent 20: instances at 0, 20, 40, each touching [-16, 4).
  EXPECT_EQ(lo, -16);
  EXPECT_EQ(hi, 44);
  EXPECT_EQ(packedSize(*v, 3), 24);
}

TEST(Span, LengthOverflowIsAnError) {
  // Two instances 2^63 bytes apart: lo and hi fit, hi - lo does not.
  std::string e;
  TypeRef t = Datatype::resized(0, INT64_MIN, prim(Primitive::Double), e);
  ASSERT_TRUE(t) << e;
  int64_t lo, hi;
  EXPECT_TRUE(touchedSpan(*t, 1, lo, hi, e));
  EXPECT_FALSE(touchedSpan(*t, 2, lo, hi, e));
  EXPECT_NE(e.find("overflow"), std::string::npos) << e;
}

TEST(Pack, RoundTripThroughPackedBytes) {
  std::string e;
  TypeRef v = Datatype::vector(4, 3, -7, prim(Primitive::Short), e);
  int64_t lo, hi;
  ASSERT_TRUE(touchedSpan(*v, 2, lo, hi, e));
  std::vector<unsigned char> buf(hi - lo);
  std::iota(buf.begin(), buf.end(), 0);
  unsigned char *origin = buf.data() - lo;
  std::vector<unsigned char> packed(packedSize(*v, 2));
  referencePack(*v, 2, origin, packed.data());
  // The first block of instance 0 is at offset 0 from the origin.
  EXPECT_EQ(packed[0], static_cast<unsigned char>(-lo));
  std::vector<unsigned char> back(buf.size(), 0xA5);
  referenceUnpack(*v, 2, packed.data(), back.data() - lo);
  for (const ddtc::Run &r : flatten(*v, 2))
    for (int64_t i = 0; i < r.length; ++i)
      EXPECT_EQ(back[r.offset - lo + i], buf[r.offset - lo + i]);
  // Bytes outside the runs stay poisoned.
  size_t poisoned = std::count(back.begin(), back.end(), 0xA5);
  EXPECT_EQ(poisoned, buf.size() - packed.size());
}

TEST(Pack, UnpackOfARangeWritesOnlyThatRange) {
  std::string e;
  // Runs of 2 bytes at 0, 5, 10: packed bytes [1, 4) are the second byte of
  // the first run and both bytes of the second.
  TypeRef v = Datatype::hvector(3, 2, 5, prim(Primitive::Char), e);
  std::vector<unsigned char> stream = {10, 11, 12, 13, 14, 15};
  std::vector<unsigned char> origin(12, 0xA5);
  referenceUnpackRange(*v, 1, stream.data(), 1, 4, origin.data());
  std::vector<unsigned char> want(12, 0xA5);
  want[1] = 11;
  want[5] = 12;
  want[6] = 13;
  EXPECT_EQ(origin, want);
}

} // namespace
