//===- MPIBridgeTest.cpp - Import and export of live MPI datatypes --------===//
//
// Runs under MPI (main initializes it): the predefined types agree with
// Primitives.def, every combiner imports to the tree that built it (and its
// hash), import frees what MPI_Type_get_contents hands out and nothing else,
// and trees survive a round trip through MPI.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"
#include "ddtc/MPI/MPIBridge.h"
#include "ddtc/Testing/RandomDatatype.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <map>
#include <vector>

using namespace ddtc;

namespace {

/// The tree of a one-binding spec "t = EXPR".
TypeRef spec(const std::string &expr) {
  SpecFile file;
  std::string error;
  EXPECT_TRUE(parseSpec("t = " + expr + "\n", "test.ddt", file, error))
      << error;
  const SpecBinding *b = file.find("t");
  return b ? b->type : nullptr;
}

/// Imports `handle` and expects the tree of `expected`; frees `handle`.
void expectImport(MPI_Datatype handle, const std::string &expected) {
  std::string error;
  TypeRef got = importMPIDatatype(handle, error);
  TypeRef want = spec(expected);
  ASSERT_TRUE(got) << error;
  ASSERT_TRUE(want);
  EXPECT_TRUE(equalTrees(*got, *want))
      << "imported " << printSpecExpr(*got) << ", expected " << expected;
  // The hash kept in the imported tree is the spec text's.
  EXPECT_TRUE(hashTree(*got) == hashTree(*want)) << expected;
  // The handle is untouched by import: it still describes the same layout.
  MPI_Count size = 0, lb = 0, extent = 0;
  EXPECT_EQ(MPI_Type_size_x(handle, &size), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_get_extent_x(handle, &lb, &extent), MPI_SUCCESS);
  EXPECT_EQ(size, got->layout().size);
  EXPECT_EQ(lb, got->layout().lb);
  EXPECT_EQ(extent, got->layout().extent);
  MPI_Type_free(&handle);
}

int64_t sizeOf(MPI_Datatype t) {
  MPI_Count size = -1;
  EXPECT_EQ(MPI_Type_size_x(t, &size), MPI_SUCCESS);
  return size;
}

TEST(MPIPrimitive, SizeExtentAndAlignmentMatchPrimitivesDef) {
  for (const PrimitiveInfo &info : allPrimitives()) {
    SCOPED_TRACE(info.mpiName);
    MPI_Datatype h = getMPIPrimitive(info.id);
    ASSERT_NE(h, MPI_DATATYPE_NULL);
    MPI_Count size = 0, lb = 0, extent = 0, trueLb = 0, trueExtent = 0;
    ASSERT_EQ(MPI_Type_size_x(h, &size), MPI_SUCCESS);
    ASSERT_EQ(MPI_Type_get_extent_x(h, &lb, &extent), MPI_SUCCESS);
    ASSERT_EQ(MPI_Type_get_true_extent_x(h, &trueLb, &trueExtent),
              MPI_SUCCESS);
    EXPECT_EQ(size, info.size);
    EXPECT_EQ(lb, 0);
    EXPECT_EQ(extent, info.extent);
    EXPECT_EQ(trueLb, 0);
    EXPECT_EQ(trueExtent, info.len1 > 0 ? info.off1 + info.len1 : info.len0);
    EXPECT_EQ(size, info.len0 + info.len1);
    // MPI rounds the extent of two copies one byte apart up to a multiple of
    // the alignment.
    MPI_Aint displs[2] = {0, 1};
    MPI_Datatype pair;
    ASSERT_EQ(MPI_Type_create_hindexed_block(2, 1, displs, h, &pair),
              MPI_SUCCESS);
    MPI_Count pairLb = 0, pairExtent = 0;
    MPI_Type_get_extent_x(pair, &pairLb, &pairExtent);
    EXPECT_EQ(pairExtent - info.extent, info.align);
    MPI_Type_free(&pair);
  }
}

TEST(MPIPrimitive, NamedTypesImportAsPrimitives) {
  for (const PrimitiveInfo &info : allPrimitives()) {
    std::string error;
    TypeRef t = importMPIDatatype(getMPIPrimitive(info.id), error);
    ASSERT_TRUE(t) << info.mpiName << ": " << error;
    ASSERT_EQ(t->kind(), Kind::Primitive);
    // Names that share a handle import as the first of them.
    EXPECT_EQ(getMPIPrimitive(t->args().primitive), getMPIPrimitive(info.id))
        << info.mpiName;
  }
  std::string error;
  EXPECT_EQ(importMPIDatatype(MPI_DOUBLE_INT, error)->args().primitive,
            Primitive::DoubleInt);
}

TEST(MPIImport, NamedTypeIsNotFreed) {
  std::string error;
  ASSERT_TRUE(importMPIDatatype(MPI_DOUBLE, error));
  ASSERT_TRUE(importMPIDatatype(MPI_DOUBLE, error));
  // Still usable, directly and as an old type.
  EXPECT_EQ(sizeOf(MPI_DOUBLE), 8);
  MPI_Datatype c;
  ASSERT_EQ(MPI_Type_contiguous(4, MPI_DOUBLE, &c), MPI_SUCCESS);
  expectImport(c, "contiguous(4, MPI_DOUBLE)");
  EXPECT_EQ(sizeOf(MPI_DOUBLE), 8);
}

TEST(MPIImport, Dup) {
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_dup(MPI_INT, &t), MPI_SUCCESS);
  expectImport(t, "dup(MPI_INT)");
}

TEST(MPIImport, Contiguous) {
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_contiguous(7, MPI_SHORT, &t), MPI_SUCCESS);
  expectImport(t, "contiguous(7, MPI_SHORT)");
}

TEST(MPIImport, VectorAndHVector) {
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_vector(3, 2, -5, MPI_DOUBLE, &t), MPI_SUCCESS);
  expectImport(t, "vector(3, 2, -5, MPI_DOUBLE)");
  ASSERT_EQ(MPI_Type_create_hvector(4, 1, 4096, MPI_FLOAT, &t), MPI_SUCCESS);
  expectImport(t, "hvector(4, 1, 4096, MPI_FLOAT)");
}

TEST(MPIImport, IndexedFamily) {
  int blocklens[3] = {2, 0, 3};
  int displs[3] = {4, 9, -2};
  MPI_Aint byteDispls[3] = {32, 72, -16};
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_indexed(3, blocklens, displs, MPI_INT, &t), MPI_SUCCESS);
  expectImport(t, "indexed([2, 0, 3], [4, 9, -2], MPI_INT)");
  ASSERT_EQ(MPI_Type_create_hindexed(3, blocklens, byteDispls, MPI_INT, &t),
            MPI_SUCCESS);
  expectImport(t, "hindexed([2, 0, 3], [32, 72, -16], MPI_INT)");
  ASSERT_EQ(MPI_Type_create_indexed_block(3, 2, displs, MPI_CHAR, &t),
            MPI_SUCCESS);
  expectImport(t, "indexed_block(2, [4, 9, -2], MPI_CHAR)");
  ASSERT_EQ(MPI_Type_create_hindexed_block(3, 2, byteDispls, MPI_CHAR, &t),
            MPI_SUCCESS);
  expectImport(t, "hindexed_block(2, [32, 72, -16], MPI_CHAR)");
}

TEST(MPIImport, StructWithDerivedMembers) {
  MPI_Datatype vec;
  ASSERT_EQ(MPI_Type_vector(2, 1, 3, MPI_FLOAT, &vec), MPI_SUCCESS);
  int blocklens[3] = {1, 2, 1};
  MPI_Aint displs[3] = {0, 8, 40};
  MPI_Datatype types[3] = {MPI_DOUBLE, vec, MPI_LONG_DOUBLE_INT};
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_create_struct(3, blocklens, displs, types, &t),
            MPI_SUCCESS);
  // The member stays valid after its user's import frees the handle that
  // MPI_Type_get_contents returned for it.
  expectImport(t, "struct([1, 2, 1], [0, 8, 40], [MPI_DOUBLE, "
                  "vector(2, 1, 3, MPI_FLOAT), MPI_LONG_DOUBLE_INT])");
  expectImport(vec, "vector(2, 1, 3, MPI_FLOAT)");
}

TEST(MPIImport, Subarray) {
  int sizes[3] = {6, 5, 4}, subsizes[3] = {1, 5, 4}, starts[3] = {5, 0, 0};
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C,
                                     MPI_DOUBLE, &t),
            MPI_SUCCESS);
  expectImport(t, "subarray([6, 5, 4], [1, 5, 4], [5, 0, 0], C, MPI_DOUBLE)");
  ASSERT_EQ(MPI_Type_create_subarray(3, sizes, subsizes, starts,
                                     MPI_ORDER_FORTRAN, MPI_INT, &t),
            MPI_SUCCESS);
  expectImport(t,
               "subarray([6, 5, 4], [1, 5, 4], [5, 0, 0], Fortran, MPI_INT)");
}

TEST(MPIImport, Darray) {
  int gsizes[2] = {8, 9};
  int distribs[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
  int dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG};
  int psizes[2] = {2, 3};
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_create_darray(6, 4, 2, gsizes, distribs, dargs, psizes,
                                   MPI_ORDER_C, MPI_DOUBLE, &t),
            MPI_SUCCESS);
  expectImport(t, "darray(6, 4, [8, 9], [cyclic, block], [2, default], "
                  "[2, 3], C, MPI_DOUBLE)");
  int gsizes3[3] = {5, 4, 3};
  int distribs3[3] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK,
                      MPI_DISTRIBUTE_CYCLIC};
  int dargs3[3] = {MPI_DISTRIBUTE_DFLT_DARG, 3, MPI_DISTRIBUTE_DFLT_DARG};
  int psizes3[3] = {1, 2, 2};
  ASSERT_EQ(MPI_Type_create_darray(4, 3, 3, gsizes3, distribs3, dargs3,
                                   psizes3, MPI_ORDER_FORTRAN, MPI_INT, &t),
            MPI_SUCCESS);
  expectImport(t, "darray(4, 3, [5, 4, 3], [none, block, cyclic], "
                  "[default, 3, default], [1, 2, 2], Fortran, MPI_INT)");
}

TEST(MPIImport, Resized) {
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_create_resized(MPI_INT, -8, 24, &t), MPI_SUCCESS);
  expectImport(t, "resized(-8, 24, MPI_INT)");
}

TEST(MPIImport, DeepNesting) {
  MPI_Datatype a, b, c, d;
  ASSERT_EQ(MPI_Type_create_resized(MPI_DOUBLE_INT, 0, 12, &a), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_vector(3, 1, 2, a, &b), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_dup(b, &c), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_contiguous(2, c, &d), MPI_SUCCESS);
  MPI_Type_free(&a);
  MPI_Type_free(&b);
  MPI_Type_free(&c);
  expectImport(d, "contiguous(2, dup(vector(3, 1, 2, "
                  "resized(0, 12, MPI_DOUBLE_INT))))");
}

TEST(MPIImport, CommittedTypeImportsRepeatedly) {
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_vector(5, 1, 2, MPI_INT, &t), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
  for (int i = 0; i < 100; ++i) {
    std::string error;
    ASSERT_TRUE(importMPIDatatype(t, error)) << error;
  }
  // Still packs after all those imports.
  int data[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, packed[5] = {0};
  int position = 0;
  ASSERT_EQ(MPI_Pack(data, 1, t, packed, sizeof packed, &position,
                     MPI_COMM_SELF),
            MPI_SUCCESS);
  EXPECT_EQ(packed[4], 8);
  MPI_Type_free(&t);
}

TEST(MPIImport, F90TypesAreUnrepresentable) {
  MPI_Datatype real;
  ASSERT_EQ(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &real), MPI_SUCCESS);
  std::string error;
  EXPECT_FALSE(importMPIDatatype(real, error));
  EXPECT_NE(error.find("cannot represent MPI_COMBINER_F90_REAL"),
            std::string::npos)
      << error;

  MPI_Datatype integer;
  ASSERT_EQ(MPI_Type_create_f90_integer(9, &integer), MPI_SUCCESS);
  EXPECT_FALSE(importMPIDatatype(integer, error));
  EXPECT_NE(error.find("MPI_COMBINER_F90_INTEGER"), std::string::npos)
      << error;

  MPI_Datatype complex;
  ASSERT_EQ(MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &complex),
            MPI_SUCCESS);
  EXPECT_FALSE(importMPIDatatype(complex, error));
  EXPECT_NE(error.find("MPI_COMBINER_F90_COMPLEX"), std::string::npos)
      << error;

  // Inside a derived type the whole import fails, naming the combiner; the
  // F90 handle (a predefined type that must not be freed) stays usable.
  MPI_Datatype outer;
  ASSERT_EQ(MPI_Type_contiguous(3, real, &outer), MPI_SUCCESS);
  EXPECT_FALSE(importMPIDatatype(outer, error));
  EXPECT_NE(error.find("MPI_COMBINER_F90_REAL"), std::string::npos) << error;
  MPI_Type_free(&outer);
  EXPECT_EQ(sizeOf(real), 4);
}

TEST(MPIImport, RejectedNodeNamesItsCombiner) {
  // MPI accepts a layout beyond 64-bit byte offsets; Datatype::create does
  // not, and the error says which constructor call it was.
  MPI_Datatype inner, outer;
  ASSERT_EQ(MPI_Type_create_hvector(2, 1, MPI_Aint(1) << 62, MPI_CHAR, &inner),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_create_hvector(3, 1, MPI_Aint(1) << 62, inner, &outer),
            MPI_SUCCESS);
  std::string error;
  EXPECT_FALSE(importMPIDatatype(outer, error));
  EXPECT_EQ(error.rfind("MPI_COMBINER_HVECTOR: ", 0), 0u) << error;
  EXPECT_NE(error.find("overflow"), std::string::npos) << error;
  // The inner type imports fine, and neither handle was freed by the failure.
  expectImport(inner, "hvector(2, 1, 4611686018427387904, MPI_CHAR)");
  MPI_Type_free(&outer);
}

TEST(MPIImport, NullHandleIsAnError) {
  std::string error;
  EXPECT_FALSE(importMPIDatatype(MPI_DATATYPE_NULL, error));
  EXPECT_NE(error.find("MPI_DATATYPE_NULL"), std::string::npos) << error;
}

TEST(MPIExport, NamedTypeIsReturnedAsIs) {
  MPI_Datatype h = MPI_DATATYPE_NULL;
  bool named = false;
  std::string error;
  ASSERT_TRUE(exportMPIDatatype(*Datatype::primitive(Primitive::ShortInt), h,
                                named, error))
      << error;
  EXPECT_TRUE(named);
  EXPECT_EQ(h, MPI_SHORT_INT);
}

TEST(MPIExport, IntOverflowIsAnError) {
  std::string error;
  TypeRef big = Datatype::contiguous(int64_t(3) << 30,
                                     Datatype::primitive(Primitive::Char),
                                     error);
  ASSERT_TRUE(big) << error;
  MPI_Datatype h = MPI_DATATYPE_NULL;
  bool named = false;
  EXPECT_FALSE(exportMPIDatatype(*big, h, named, error));
  EXPECT_NE(error.find("does not fit"), std::string::npos) << error;
  EXPECT_EQ(h, MPI_DATATYPE_NULL);

  // An hvector stride beyond 32 bits is fine: it is an MPI_Aint.
  TypeRef far = Datatype::hvector(2, 1, int64_t(1) << 40,
                                  Datatype::primitive(Primitive::Int), error);
  ASSERT_TRUE(far) << error;
  ASSERT_TRUE(exportMPIDatatype(*far, h, named, error)) << error;
  MPI_Count lb = 0, extent = 0;
  MPI_Type_get_extent_x(h, &lb, &extent);
  EXPECT_EQ(extent, (int64_t(1) << 40) + 4);
  MPI_Type_free(&h);
}

TEST(MPIExport, SharedSubtreesAreBuiltOnce) {
  TypeRef t = spec("struct([1, 1, 1], [0, 64, 128], [vector(2, 1, 3, int), "
                   "vector(2, 1, 3, int), double])");
  ASSERT_TRUE(t);
  // Make the first two members one node.
  TypeArgs args = t->args();
  args.children[1] = args.children[0];
  std::string error;
  TypeRef shared = Datatype::create(args, error);
  ASSERT_TRUE(shared) << error;
  MPI_Datatype h;
  bool named = true;
  ASSERT_TRUE(exportMPIDatatype(*shared, h, named, error)) << error;
  EXPECT_FALSE(named);
  TypeRef back = importMPIDatatype(h, error);
  ASSERT_TRUE(back) << error;
  EXPECT_TRUE(equalTrees(*back, *t));
  EXPECT_TRUE(hashTree(*back) == hashTree(*t));
  EXPECT_TRUE(hashTree(*shared) == hashTree(*t));
  MPI_Type_free(&h);
}

/// Replaces each primitive by the one its MPI handle imports as.
TypeRef canonicalPrimitives(const TypeRef &t) {
  if (t->kind() == Kind::Primitive) {
    std::string error;
    TypeRef p = importMPIDatatype(getMPIPrimitive(t->args().primitive), error);
    return p ? p : t;
  }
  TypeArgs args = t->args();
  for (TypeRef &c : args.children)
    c = canonicalPrimitives(c);
  std::string error;
  TypeRef r = Datatype::create(args, error);
  return r ? r : t;
}

TEST(MPIRoundTrip, RandomTreesSurviveExportAndImport) {
  RandomDatatypeOptions opts;
  opts.maxDepth = 4;
  for (uint64_t i = 0; i < 300; ++i) {
    std::mt19937_64 rng(randomCaseSeed(2024, i));
    RandomDatatypeCase c = generateRandomDatatype(rng, opts);
    SCOPED_TRACE(printSpecExpr(*c.type));
    MPI_Datatype h = MPI_DATATYPE_NULL;
    bool named = false;
    std::string error;
    // Open MPI rejects a darray of an empty old type; nothing else fails.
    if (!exportMPIDatatype(*c.type, h, named, error)) {
      EXPECT_NE(error.find("MPI_Type_create_darray"), std::string::npos)
          << error;
      continue;
    }
    if (!named) {
      ASSERT_EQ(MPI_Type_commit(&h), MPI_SUCCESS);
    }
    TypeRef back = importMPIDatatype(h, error);
    ASSERT_TRUE(back) << error;
    EXPECT_TRUE(equalTrees(*back, *canonicalPrimitives(c.type)))
        << "imported " << printSpecExpr(*back);
    // Built by the C++ constructors, imported from MPI, parsed from its
    // printed text: one hash.
    EXPECT_TRUE(hashTree(*back) == hashTree(*canonicalPrimitives(c.type)));
    TypeRef text = spec(printSpecExpr(*back));
    ASSERT_TRUE(text);
    EXPECT_TRUE(hashTree(*text) == hashTree(*back));
    MPI_Count size = 0;
    MPI_Type_size_x(h, &size);
    EXPECT_EQ(size, c.type->layout().size);
    if (!named)
      MPI_Type_free(&h);
  }
}

TEST(RandomDatatype, SameSeedSameType) {
  RandomDatatypeOptions opts;
  for (uint64_t i = 0; i < 50; ++i) {
    std::mt19937_64 a(randomCaseSeed(7, i)), b(randomCaseSeed(7, i));
    RandomDatatypeCase x = generateRandomDatatype(a, opts);
    RandomDatatypeCase y = generateRandomDatatype(b, opts);
    EXPECT_TRUE(equalTrees(*x.type, *y.type));
    EXPECT_EQ(x.count, y.count);
    EXPECT_GE(x.count, 2);
    int64_t lo = 0, hi = 0;
    std::string error;
    ASSERT_TRUE(touchedSpan(*x.type, x.count, lo, hi, error)) << error;
    EXPECT_LE(hi - lo, opts.maxSpan);
  }
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  // Failed MPI calls return codes the tests check, instead of aborting.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  ::testing::InitGoogleTest(&argc, argv);
  int status = RUN_ALL_TESTS();
  MPI_Finalize();
  return status;
}
