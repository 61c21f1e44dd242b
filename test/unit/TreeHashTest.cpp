//===- TreeHashTest.cpp - The hash each datatype node keeps ---------------===//
//
// Equal trees hash equal however they were built (spec text of any
// spelling, shared or repeated subtrees, the C++ constructors); changing
// any one argument of any node, at any depth, changes the hash of the root.
// (MPIBridgeTest checks trees imported from MPI handles.)
//===----------------------------------------------------------------------===//

#include "ddtc/Core/Constructors.h"
#include "ddtc/Core/Datatype.h"
#include "ddtc/Core/SpecParser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

using namespace ddtc;

namespace {

TypeRef parse(const std::string &text, const std::string &name = "t") {
  SpecFile file;
  std::string error;
  EXPECT_TRUE(parseSpec(text, "hash.ddt", file, error)) << error;
  const SpecBinding *b = file.find(name);
  return b ? b->type : nullptr;
}

TypeRef make(TypeArgs a) {
  std::string error;
  TypeRef t = Datatype::create(std::move(a), error);
  EXPECT_TRUE(t) << error;
  return t;
}

/// A tree that uses every constructor, some of them several levels down.
const char *const kDeepSpec =
    "t = struct([1, 2, 1, 1], [0, 64, 512, 4096], "
    "[vector(3, 2, 5, resized(-8, 24, indexed([1, 2], [0, 5], double))), "
    "hvector(2, 1, 40, indexed_block(2, [1, 4], contiguous(2, int))), "
    "hindexed_block(1, [0, 16], hindexed([2, 1], [0, 24], dup(float))), "
    "darray(4, 1, [8, 6], [block, cyclic], [default, 2], [2, 2], Fortran, "
    "subarray([4, 5], [2, 3], [1, 2], C, short))])\n";

TEST(TreeHash, EqualTreesBuiltDifferentlyHashEqual) {
  TypeRef a = parse(kDeepSpec);
  ASSERT_TRUE(a);
  // Other spellings: MPI names, spacing, named and shared subtrees.
  TypeRef b = parse(
      "e = indexed( [1,2], [0,5], MPI_DOUBLE )\n"
      "r = resized(-8, 24, e)\n"
      "s = subarray([4, 5], [2, 3], [1, 2], C, MPI_SHORT)\n"
      "t = struct([1, 2, 1, 1], [0, 64, 512, 4096], [vector(3, 2, 5, r), "
      "hvector(2, 1, 40, indexed_block(2, [1, 4], contiguous(2, MPI_INT))), "
      "hindexed_block(1, [0, 16], hindexed([2, 1], [0, 24], dup(MPI_FLOAT))), "
      "darray(4, 1, [8, 6], [block, cyclic], [default, 2], [2, 2], Fortran, "
      "s)])\n");
  ASSERT_TRUE(b);
  EXPECT_EQ(hashTree(*a), hashTree(*b));
  EXPECT_TRUE(equalTrees(*a, *b));

  // The same tree from the C++ constructors, node by node.
  std::string error;
  TypeArgs ix;
  ix.kind = Kind::Indexed;
  ix.blocklens = {1, 2};
  ix.displs = {0, 5};
  ix.children = {Datatype::primitive(Primitive::Double)};
  TypeRef first = Datatype::vector(
      3, 2, 5, Datatype::resized(-8, 24, make(ix), error), error);
  TypeArgs ib;
  ib.kind = Kind::IndexedBlock;
  ib.blocklen = 2;
  ib.displs = {1, 4};
  ib.children = {
      Datatype::contiguous(2, Datatype::primitive(Primitive::Int), error)};
  TypeRef second = Datatype::hvector(2, 1, 40, make(ib), error);
  TypeArgs dup;
  dup.kind = Kind::Dup;
  dup.children = {Datatype::primitive(Primitive::Float)};
  TypeArgs hi;
  hi.kind = Kind::HIndexed;
  hi.blocklens = {2, 1};
  hi.displs = {0, 24};
  hi.children = {make(dup)};
  TypeArgs hb;
  hb.kind = Kind::HIndexedBlock;
  hb.blocklen = 1;
  hb.displs = {0, 16};
  hb.children = {make(hi)};
  TypeArgs sub;
  sub.kind = Kind::Subarray;
  sub.sizes = {4, 5};
  sub.subsizes = {2, 3};
  sub.starts = {1, 2};
  sub.order = Order::C;
  sub.children = {Datatype::primitive(Primitive::Short)};
  TypeArgs da;
  da.kind = Kind::Darray;
  da.commSize = 4;
  da.rank = 1;
  da.sizes = {8, 6};
  da.distribs = {Distribution::Block, Distribution::Cyclic};
  da.dargs = {kDefaultDarg, 2};
  da.psizes = {2, 2};
  da.order = Order::Fortran;
  da.children = {make(sub)};
  TypeArgs st;
  st.kind = Kind::Struct;
  st.blocklens = {1, 2, 1, 1};
  st.displs = {0, 64, 512, 4096};
  st.children = {first, second, make(hb), make(da)};
  TypeRef c = make(st);
  ASSERT_TRUE(c);
  EXPECT_EQ(hashTree(*a), hashTree(*c));
  EXPECT_TRUE(equalTrees(*a, *c));
}

/// Calls `visit` with a copy of `t`'s tree in which one argument of one
/// node is changed, for every argument of every node that has a valid
/// change; returns how many it made. Nodes above the changed one are
/// rebuilt, so their hashes are recomputed from the new child's.
int forEachOneArgumentChange(const TypeRef &t,
                             const std::function<void(const TypeRef &)> &visit) {
  int made = 0;
  const TypeArgs &args = t->args();
  auto tryArgs = [&](TypeArgs changed) {
    std::string error;
    if (TypeRef u = Datatype::create(std::move(changed), error)) {
      visit(u);
      ++made;
    }
  };
  if (const ConstructorSignature *sig = getConstructor(args.kind)) {
    for (const ConstructorArgument &arg : sig->arguments) {
      TypeArgs a = args;
      switch (arg.syntax) {
      case ArgSyntax::Int: {
        // Up, else down: one of them is valid for every field here.
        int64_t &v = a.*getIntMember(arg.field);
        ++v;
        TypeArgs down = args;
        --(down.*getIntMember(arg.field));
        std::string error;
        if (!Datatype::create(a, error))
          a = down;
        break;
      }
      case ArgSyntax::IntList: {
        std::vector<int64_t> &v = a.*getIntListMember(arg.field);
        if (v.empty())
          continue;
        v.back() += 1;
        std::string error;
        if (!Datatype::create(a, error))
          v.back() -= 2;
        break;
      }
      case ArgSyntax::DistribList:
        a.distribs.back() = a.distribs.back() == Distribution::Cyclic
                                ? Distribution::Block
                                : Distribution::Cyclic;
        break;
      case ArgSyntax::DargList:
        a.dargs.back() = a.dargs.back() == kDefaultDarg ? 3 : kDefaultDarg;
        break;
      case ArgSyntax::Order:
        a.order = a.order == Order::C ? Order::Fortran : Order::C;
        break;
      case ArgSyntax::Type:
      case ArgSyntax::TypeList:
        continue;
      }
      tryArgs(std::move(a));
    }
  } else {
    TypeArgs a = args;
    a.primitive =
        a.primitive == Primitive::Double ? Primitive::Float : Primitive::Double;
    tryArgs(std::move(a));
  }
  // Deeper: each child with one change, the node rebuilt above it.
  for (size_t i = 0; i < args.children.size(); ++i)
    made += forEachOneArgumentChange(args.children[i], [&](const TypeRef &c) {
      TypeArgs a = args;
      a.children[i] = c;
      std::string error;
      if (TypeRef u = Datatype::create(std::move(a), error))
        visit(u);
      else
        ADD_FAILURE() << "a valid child made its parent invalid: " << error;
    });
  return made;
}

TEST(TreeHash, ChangingAnyArgumentAnywhereChangesTheHash) {
  TypeRef base = parse(kDeepSpec);
  ASSERT_TRUE(base);
  std::vector<Hash128> seen = {hashTree(*base)};
  int made = forEachOneArgumentChange(base, [&](const TypeRef &changed) {
    EXPECT_NE(hashTree(*changed), hashTree(*base))
        << printSpecExpr(*changed);
    EXPECT_FALSE(equalTrees(*changed, *base)) << printSpecExpr(*changed);
    // Rebuilt from its own printed text: the same hash.
    TypeRef again = parse("t = " + printSpecExpr(*changed) + "\n");
    ASSERT_TRUE(again);
    EXPECT_EQ(hashTree(*again), hashTree(*changed));
    seen.push_back(hashTree(*changed));
  });
  // The tree lists 34 arguments (the primitives' names included); a few
  // darray ones have no valid change of one step. The rest were reached.
  EXPECT_GE(made, 31);
  // The changed trees also differ from one another.
  std::sort(seen.begin(), seen.end(), [](const Hash128 &x, const Hash128 &y) {
    return x.hi != y.hi ? x.hi < y.hi : x.lo < y.lo;
  });
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
}

TEST(TreeHash, ConstructorsAndChildOrderCount) {
  // Same bytes, other constructors, or the same children in another order.
  auto differ = [](const char *x, const char *y) {
    TypeRef a = parse(x), b = parse(y);
    ASSERT_TRUE(a && b);
    EXPECT_NE(hashTree(*a), hashTree(*b)) << x << " vs " << y;
  };
  differ("t = vector(3, 1, 2, double)\n", "t = hvector(3, 1, 16, double)\n");
  differ("t = contiguous(2, contiguous(3, int))\n",
         "t = contiguous(3, contiguous(2, int))\n");
  differ("t = struct([1, 1], [0, 8], [int, float])\n",
         "t = struct([1, 1], [0, 8], [float, int])\n");
  differ("t = contiguous(1, dup(double))\n", "t = contiguous(1, double)\n");
  differ("t = indexed_block(1, [0, 5], double)\n",
         "t = indexed([1, 1], [0, 5], double)\n");
}

} // namespace
