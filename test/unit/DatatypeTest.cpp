//===- DatatypeTest.cpp - Argument rules and layout figures ---------------===//

#include "ddtc/Core/Datatype.h"

#include <gtest/gtest.h>

using namespace ddtc;

namespace {

TypeRef prim(Primitive p) { return Datatype::primitive(p); }

TypeRef make(TypeArgs a) {
  std::string error;
  TypeRef t = Datatype::create(std::move(a), error);
  EXPECT_TRUE(t) << error;
  return t;
}

std::string failure(TypeArgs a) {
  std::string error;
  EXPECT_FALSE(Datatype::create(std::move(a), error));
  return error;
}

void expectLayout(const TypeRef &t, int64_t size, int64_t lb, int64_t extent,
                  int64_t trueLb, int64_t trueExtent) {
  ASSERT_TRUE(t);
  const LayoutInfo &l = t->layout();
  EXPECT_EQ(l.size, size);
  EXPECT_EQ(l.lb, lb);
  EXPECT_EQ(l.extent, extent);
  EXPECT_EQ(l.trueLb, trueLb);
  EXPECT_EQ(l.trueExtent, trueExtent);
}

TEST(Primitive, PairTypesHaveTheirMPILayout) {
  expectLayout(prim(Primitive::DoubleInt), 12, 0, 16, 0, 12);
  expectLayout(prim(Primitive::ShortInt), 6, 0, 8, 0, 8);
  expectLayout(prim(Primitive::LongDoubleInt), 20, 0, 32, 0, 20);
  expectLayout(prim(Primitive::TwoInt), 8, 0, 8, 0, 8);
  EXPECT_TRUE(prim(Primitive::Double)->layout().dense);
  EXPECT_FALSE(prim(Primitive::DoubleInt)->layout().dense);
}

TEST(Primitive, LookupByMPINameAndCSpelling) {
  EXPECT_EQ(lookupPrimitive("MPI_DOUBLE"), Primitive::Double);
  EXPECT_EQ(lookupPrimitive("double"), Primitive::Double);
  EXPECT_EQ(lookupPrimitive("unsigned long long"), Primitive::UnsignedLongLong);
  EXPECT_EQ(lookupPrimitive("int64_t"), Primitive::Int64);
  EXPECT_FALSE(lookupPrimitive("MPI_NOPE"));
  EXPECT_STREQ(getPrimitiveInfo(Primitive::TwoInt).mpiName, "MPI_2INT");
}

TEST(Layout, Vector) {
  std::string e;
  // Three blocks of two doubles, five doubles apart.
  expectLayout(Datatype::vector(3, 2, 5, prim(Primitive::Double), e), 48, 0,
               96, 0, 96);
  // A negative stride puts the last block first.
  expectLayout(Datatype::vector(3, 2, -5, prim(Primitive::Double), e), 48, -80,
               96, -80, 96);
  // Zero blocks: an empty type.
  expectLayout(Datatype::vector(0, 2, 5, prim(Primitive::Double), e), 0, 0, 0,
               0, 0);
}

TEST(Layout, HVectorOfPairs) {
  std::string e;
  // Blocks of two MPI_DOUBLE_INT (extent 16) every 40 bytes.
  expectLayout(Datatype::hvector(2, 2, 40, prim(Primitive::DoubleInt), e), 48,
               0, 72, 0, 68);
}

TEST(Layout, IndexedSkipsEmptyBlocks) {
  TypeArgs a;
  a.kind = Kind::Indexed;
  a.blocklens = {0, 2, 1};
  a.displs = {-10, 3, 1};
  a.children = {prim(Primitive::Int)};
  // Blocks at 12..20 and 4..8: the empty block at -40 does not count.
  expectLayout(make(a), 12, 4, 16, 4, 16);
}

TEST(Layout, StructTakesEachMemberBounds) {
  TypeArgs a;
  a.kind = Kind::Struct;
  a.blocklens = {1, 2, 1};
  a.displs = {0, 8, 16};
  a.children = {prim(Primitive::Double), prim(Primitive::Int),
                prim(Primitive::Char)};
  // The extent is rounded up to the largest alignment, 8 (the epsilon).
  expectLayout(make(a), 17, 0, 24, 0, 17);
}

TEST(Layout, RoundingFollowsBlockOrder) {
  // A double at 0, a char at 8 (ub 9, rounded to 16 at once), an int at -4
  // (ub - lb = 20, rounded to 24). Rounding the whole typemap once would
  // give 16: the library rounds after each block.
  TypeArgs a;
  a.kind = Kind::Struct;
  a.blocklens = {1, 1, 1};
  a.displs = {0, 8, -4};
  a.children = {prim(Primitive::Double), prim(Primitive::Char),
                prim(Primitive::Int)};
  expectLayout(make(a), 13, -4, 24, -4, 13);
}

TEST(Layout, ExplicitBoundsStick) {
  std::string e;
  TypeArgs a;
  a.kind = Kind::Struct;
  a.blocklens = {1, 1};
  a.displs = {0, -100};
  a.children = {Datatype::resized(0, 8, prim(Primitive::Double), e),
                prim(Primitive::Double)};
  // Only the resized member's bounds count: lb stays 0.
  expectLayout(make(a), 16, 0, 8, -100, 108);
}

TEST(Layout, ResizedKeepsTrueBounds) {
  std::string e;
  TypeRef t = Datatype::resized(-8, 32, prim(Primitive::Double), e);
  expectLayout(t, 8, -8, 32, 0, 8);
  EXPECT_FALSE(t->layout().dense);
}

TEST(Layout, SubarrayCoversTheWholeArray) {
  TypeArgs a;
  a.kind = Kind::Subarray;
  a.sizes = {4, 5};
  a.subsizes = {2, 3};
  a.starts = {1, 1};
  a.children = {prim(Primitive::Double)};
  // Rows 1-2, columns 1-3 of a 4x5 C array of doubles.
  expectLayout(make(a), 48, 0, 160, 48, 64);
  a.order = Order::Fortran;
  // Column-major: element (i, j) at i + 4 j.
  expectLayout(make(a), 48, 0, 160, 40, 80);
}

TEST(Layout, DarrayBlockCyclic) {
  TypeArgs a;
  a.kind = Kind::Darray;
  a.commSize = 4;
  a.rank = 3;
  a.sizes = {8, 8};
  a.distribs = {Distribution::Cyclic, Distribution::Cyclic};
  a.dargs = {2, 2};
  a.psizes = {2, 2};
  a.children = {prim(Primitive::Int)};
  // Rank 3 sits at (1, 1): rows and columns {2, 3, 6, 7}.
  expectLayout(make(a), 64, 0, 256, 72, 256 - 72 - 0);
}

TEST(Layout, DarrayEmptyBlock) {
  TypeArgs a;
  a.kind = Kind::Darray;
  a.commSize = 4;
  a.rank = 3;
  a.sizes = {5};
  a.distribs = {Distribution::Block};
  a.dargs = {2};
  a.psizes = {4};
  a.children = {prim(Primitive::Int)};
  // Blocks of 2 over 5 elements: rank 3 would start at 6, past the end.
  expectLayout(make(a), 0, 0, 20, 0, 0);
}

TEST(Rules, MessagesNameTheRule) {
  TypeArgs a;
  a.kind = Kind::Vector;
  a.count = -1;
  a.children = {prim(Primitive::Int)};
  EXPECT_EQ(failure(a), "count must be non-negative, got -1");

  TypeArgs s;
  s.kind = Kind::Subarray;
  s.sizes = {4};
  s.subsizes = {2};
  s.starts = {3};
  s.children = {prim(Primitive::Int)};
  EXPECT_EQ(failure(s), "starts[0] + subsizes[0] = 5 exceeds sizes[0] = 4");

  TypeArgs d;
  d.kind = Kind::Darray;
  d.commSize = 3;
  d.sizes = {8};
  d.distribs = {Distribution::Block};
  d.dargs = {kDefaultDarg};
  d.psizes = {2};
  d.children = {prim(Primitive::Int)};
  EXPECT_EQ(failure(d),
            "the process grid psizes has 2 processes but size is 3");

  TypeArgs m;
  m.kind = Kind::Contiguous;
  m.count = 2;
  EXPECT_EQ(failure(m), "contiguous takes 1 old type(s), got 0");
}

TEST(Rules, OverflowIsAnError) {
  std::string e;
  TypeRef big = Datatype::contiguous(int64_t(1) << 62, prim(Primitive::Int), e);
  ASSERT_FALSE(big);
  EXPECT_EQ(e, "the layout overflows 64-bit byte offsets");
}

TEST(Trees, EqualityComparesArguments) {
  std::string e;
  TypeRef a = Datatype::vector(3, 2, 5, prim(Primitive::Double), e);
  TypeRef b = Datatype::vector(3, 2, 5, prim(Primitive::Double), e);
  TypeRef c = Datatype::vector(3, 2, 6, prim(Primitive::Double), e);
  TypeRef d = Datatype::vector(3, 2, 5, prim(Primitive::Float), e);
  EXPECT_TRUE(equalTrees(*a, *b));
  EXPECT_FALSE(equalTrees(*a, *c));
  EXPECT_FALSE(equalTrees(*a, *d));
}

} // namespace
