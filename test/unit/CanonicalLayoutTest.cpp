//===- CanonicalLayoutTest.cpp - Normalization, vector detection, plans ---===//

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Testing/RandomDatatype.h"

#include <gtest/gtest.h>

using namespace ddtc;

namespace {

TypeRef parse(const std::string &spec) {
  SpecFile file;
  std::string error;
  EXPECT_TRUE(parseSpec(spec, "test.ddt", file, error)) << error;
  return file.bindings.empty() ? nullptr : file.bindings.back().type;
}

CanonicalLayout lowerToCanonical(const Datatype &type) {
  CanonicalLayout l;
  std::string error;
  EXPECT_TRUE(ddtc::lowerToCanonical(type, l, error)) << error;
  return l;
}

KernelPlan planKernel(const Datatype &type,
                      const PlanOptions &options = PlanOptions()) {
  KernelPlan p;
  std::string error;
  EXPECT_TRUE(ddtc::planKernel(type, p, error, options)) << error;
  return p;
}

TEST(Normalize, VectorIsOneStridedNest) {
  CanonicalLayout l = lowerToCanonical(*parse("t = vector(3, 2, 5, double)"));
  ASSERT_EQ(l.segments.size(), 1u);
  const Segment &s = l.segments[0];
  EXPECT_EQ(s.offset, 0);
  EXPECT_EQ(s.dims, (std::vector<Dim>{{3, 40}}));
  EXPECT_EQ(s.runs, (std::vector<ddtc::Run>{{0, 16}}));
  EXPECT_EQ(l.extent, 96);
}

TEST(Normalize, ContiguousDimensionsFold) {
  // A whole row of a 2-d subarray is contiguous with the next one.
  CanonicalLayout l = lowerToCanonical(
      *parse("t = subarray([4, 6, 8], [2, 6, 8], [1, 0, 0], C, float)"));
  ASSERT_EQ(l.segments.size(), 1u);
  EXPECT_TRUE(l.segments[0].dims.empty());
  EXPECT_EQ(l.segments[0].runs, (std::vector<ddtc::Run>{{0, 2 * 6 * 8 * 4}}));
  EXPECT_EQ(l.segments[0].offset, 6 * 8 * 4);
}

TEST(Normalize, HaloFaceIsTwoDimensions) {
  CanonicalLayout l = lowerToCanonical(
      *parse("t = subarray([8, 8, 8], [6, 6, 1], [1, 1, 0], C, double)"));
  ASSERT_EQ(l.segments.size(), 1u);
  EXPECT_EQ(l.segments[0].dims, (std::vector<Dim>{{6, 512}, {6, 64}}));
  EXPECT_EQ(l.segments[0].runs, (std::vector<ddtc::Run>{{0, 8}}));
}

TEST(Normalize, IrregularIndexedIsOneTable) {
  CanonicalLayout l =
      lowerToCanonical(*parse("t = indexed([3, 2, 1], [0, 4, 8], double)"));
  ASSERT_EQ(l.segments.size(), 1u);
  EXPECT_TRUE(l.segments[0].dims.empty());
  EXPECT_EQ(l.segments[0].runs,
            (std::vector<ddtc::Run>{{0, 24}, {32, 16}, {64, 8}}));
  EXPECT_FALSE(detectVectors(l));
}

TEST(VectorDetection, RegularIndexedBecomesStrided) {
  CanonicalLayout l = lowerToCanonical(
      *parse("t = indexed([2, 2, 2, 2], [0, 5, 10, 15], double)"));
  ASSERT_EQ(l.segments.size(), 1u);
  EXPECT_EQ(l.segments[0].runs.size(), 4u);
  EXPECT_TRUE(detectVectors(l));
  EXPECT_EQ(l.segments[0].dims, (std::vector<Dim>{{4, 40}}));
  EXPECT_EQ(l.segments[0].runs, (std::vector<ddtc::Run>{{0, 16}}));
}

TEST(VectorDetection, RepeatedGroupsBecomeTwoDimensions) {
  // Pairs of 4-byte runs 8 apart, the pairs 100 apart.
  CanonicalLayout l = lowerToCanonical(
      *parse("t = hindexed([1, 1, 1, 1, 1, 1], [0, 8, 100, 108, 200, 208], "
             "int)"));
  EXPECT_TRUE(detectVectors(l));
  ASSERT_EQ(l.segments.size(), 1u);
  EXPECT_EQ(l.segments[0].dims, (std::vector<Dim>{{3, 100}, {2, 8}}));
  EXPECT_EQ(l.segments[0].runs, (std::vector<ddtc::Run>{{0, 4}}));
}

TEST(VectorDetection, StructOfEqualMembersAtOneStride) {
  CanonicalLayout l = lowerToCanonical(
      *parse("v = vector(2, 1, 4, float)\n"
             "t = struct([1, 1, 1], [0, 64, 128], [v, v, v])"));
  EXPECT_EQ(l.segments.size(), 3u);
  EXPECT_TRUE(detectVectors(l));
  ASSERT_EQ(l.segments.size(), 1u);
  EXPECT_EQ(l.segments[0].dims, (std::vector<Dim>{{3, 64}, {2, 16}}));
}

TEST(Plan, AlignedDoublesUseSixteenBytes) {
  KernelPlan p = planKernel(*parse("t = vector(100, 4, 8, double)"));
  EXPECT_EQ(p.family, KernelFamily::Strided);
  EXPECT_EQ(p.width, 16);
  EXPECT_FALSE(p.needsBytePath);
}

TEST(Plan, UnalignedOffsetsLowerTheWidth) {
  // Runs at source offsets 4 and 132 land at packed 0 and 64: the source is
  // 4 bytes off wherever the packed side is aligned, so 4 is the widest.
  KernelPlan p = planKernel(*parse("t = hindexed([64, 64], [4, 132], char)"));
  EXPECT_EQ(p.family, KernelFamily::Strided);
  EXPECT_EQ(p.width, 4);
  EXPECT_FALSE(p.needsBytePath);
}

TEST(Plan, CoalignedRunsSplitIntoPrologueBodyEpilogue) {
  // Source 16 / packed 0 (20 bytes) and source 52 / packed 20 (44 bytes):
  // both sides agree modulo 16, so each run has a 16-byte-aligned body. (Two
  // runs are a record the strided family takes; one run per point at most
  // keeps it in the units family.)
  PlanOptions oneRun;
  oneRun.maxPointRuns = 1;
  KernelPlan p =
      planKernel(*parse("t = hindexed([20, 44], [16, 52], char)"), oneRun);
  EXPECT_EQ(p.family, KernelFamily::Units);
  EXPECT_EQ(p.width, 16);
  EXPECT_EQ(p.units, (UnitTable{{0, 16, 16, true},
                                            {16, 32, 4, false},
                                            {20, 52, 12, false},
                                            {32, 64, 32, true}}));
}

TEST(Plan, RecordsOfFewRunsAreStridedNests) {
  // Three doubles and an int of each 48-byte struct, 2,396,745 structs as one
  // type: two runs per nest point, planned in constant space (as a table of
  // units it would list 4.8 million runs, over kMaxTableRuns).
  KernelPlan p = planKernel(*parse(
      "t = contiguous(2396745, resized(0, 48, struct([3, 1], [0, 36], "
      "[double, int])))"));
  EXPECT_EQ(p.family, KernelFamily::Strided);
  EXPECT_TRUE(p.units.empty());
  EXPECT_EQ(p.width, 4);
  ASSERT_EQ(p.layout.segments.size(), 1u);
  EXPECT_EQ(p.layout.segments[0].runs.size(), 2u);
  EXPECT_EQ(p.tileDim, -1);
  // kMaxPointRuns runs per point are a strided nest, one more a units plan.
  auto table = [](int runs) {
    std::string lens, displs;
    for (int j = 0; j < runs; ++j) {
      lens += (j ? ", " : "") + std::to_string(j % 3 + 1);
      displs += (j ? ", " : "") + std::to_string(8 * j);
    }
    return "t = indexed([" + lens + "], [" + displs + "], char)";
  };
  EXPECT_EQ(planKernel(*parse(table(kMaxPointRuns))).family,
            KernelFamily::Strided);
  EXPECT_EQ(planKernel(*parse(table(kMaxPointRuns + 1))).family,
            KernelFamily::Units);
  // Segments of records count their runs together: eight segments of two
  // runs a point are a strided plan, nine a units plan (records of bytes:
  // of words, eight runs would already be units).
  auto segments = [](int n) {
    std::string counts, displs, types;
    for (int j = 0; j < n; ++j) {
      counts += (j ? ", " : "") + std::string("1");
      displs += (j ? ", " : "") + std::to_string(100000 * j);
      types += (j ? ", " : "") + std::string("contiguous(") +
               std::to_string(10 + j) +
               ", resized(0, 48, struct([3, 1], [1, 37], [double, int])))";
    }
    return "t = struct([" + counts + "], [" + displs + "], [" + types + "])";
  };
  KernelPlan eight = planKernel(*parse(segments(8)));
  ASSERT_EQ(eight.layout.segments.size(), 8u);
  EXPECT_EQ(eight.family, KernelFamily::Strided);
  KernelPlan nine = planKernel(*parse(segments(9)));
  ASSERT_EQ(nine.layout.segments.size(), 9u);
  EXPECT_EQ(nine.family, KernelFamily::Units);
}

TEST(Plan, RecordsOfManyWordRunsAreUnits) {
  // kUnitsRecordMinRuns runs of ints or doubles per point, an instance of at
  // most kUnitsRecordMaxRuns runs: units; one run fewer, or runs of bytes,
  // or an instance of more runs: strided.
  auto record = [](int runs, const char *type, int count) {
    std::string lens, displs;
    for (int j = 0; j < runs; ++j) {
      lens += (j ? ", " : "") + std::to_string(j % 3 + 1);
      displs += (j ? ", " : "") + std::to_string(5 * j);
    }
    return "t = contiguous(" + std::to_string(count) + ", resized(0, " +
           std::to_string(40 * runs) + ", indexed([" + lens + "], [" +
           displs + "], " + type + ")))";
  };
  for (const char *type : {"int", "double"}) {
    SCOPED_TRACE(type);
    KernelPlan many = planKernel(*parse(record(kUnitsRecordMinRuns, type, 1)));
    EXPECT_EQ(many.family, KernelFamily::Units);
    EXPECT_GE(many.width, 4);
    EXPECT_TRUE(recordAsUnits(many.layout, many.width));
    EXPECT_EQ(planKernel(*parse(record(kUnitsRecordMinRuns - 1, type, 1)))
                  .family,
              KernelFamily::Strided);
    // 10000 points of 8 runs: more runs than kUnitsRecordMaxRuns.
    EXPECT_EQ(planKernel(*parse(record(kUnitsRecordMinRuns, type, 10000)))
                  .family,
              KernelFamily::Strided);
  }
  EXPECT_EQ(planKernel(*parse(record(kUnitsRecordMinRuns, "char", 1))).family,
            KernelFamily::Strided);
}

TEST(Plan, ManySegmentsTakeUnitsWhereATableListsTheirRuns) {
  // A struct of n vectors of single doubles (count + j of them, 2 to 6
  // apart), 64 MiB apart: no two segments merge.
  auto vectors = [](int n, int count) {
    std::string counts, displs, types;
    for (int j = 0; j < n; ++j) {
      counts += (j ? ", " : "") + std::string("1");
      displs += (j ? ", " : "") + std::to_string((int64_t(1) << 26) * j);
      types += (j ? ", " : "") + std::string("vector(") +
               std::to_string(count + j) + ", 1, " +
               std::to_string(2 + j % 5) + ", double)";
    }
    return "t = struct([" + counts + "], [" + displs + "], [" + types + "])";
  };
  auto plan = [&](int n, int count, KernelPlan &p, std::string &error) {
    return ddtc::planKernel(*parse(vectors(n, count)), p, error,
                            PlanOptions());
  };
  KernelPlan p;
  std::string error;
  // kMaxStridedSegments segments are a strided plan, one more a units plan.
  ASSERT_TRUE(plan(kMaxStridedSegments, 100, p, error)) << error;
  EXPECT_EQ(p.layout.segments.size(), size_t(kMaxStridedSegments));
  EXPECT_EQ(p.family, KernelFamily::Strided);
  ASSERT_TRUE(plan(kMaxStridedSegments + 1, 100, p, error)) << error;
  EXPECT_EQ(p.family, KernelFamily::Units);
  EXPECT_FALSE(fitsStridedFamily(p.layout));
  // ... unless a table cannot list its runs (257 x 20,000 > kMaxTableRuns):
  // then it has no plan, and says why.
  EXPECT_FALSE(plan(kMaxStridedSegments + 1, 20000, p, error));
  EXPECT_NE(error.find("257 segments"), std::string::npos) << error;
  EXPECT_NE(error.find("at most 256 segments"), std::string::npos) << error;
}

TEST(Plan, TriangleIsCutIntoEqualUnits) {
  std::string spec = "t = indexed([";
  std::string displs;
  int n = 100;
  for (int j = 0; j < n; ++j) {
    spec += (j ? ", " : "") + std::to_string(n - j);
    displs += (j ? ", " : "") + std::to_string(j * n + j);
  }
  spec += "], [" + displs + "], double)";
  KernelPlan p = planKernel(*parse(spec));
  EXPECT_EQ(p.family, KernelFamily::Units);
  EXPECT_EQ(p.width, 8);
  ASSERT_GT(p.unitBytes, 0);
  int64_t total = 0;
  for (const WorkUnit &u : p.units) {
    EXPECT_LE(u.length, p.unitBytes);
    total += u.length;
  }
  EXPECT_EQ(total, p.layout.size);
}

/// Every piece of the pipeline keeps the bytes: the layout's runs equal the
/// tree's (which equal MPI_Pack's), and the work units cover the packed
/// stream once, in order, each at its source offset.
TEST(Property, RandomTypesKeepTheirRuns) {
  std::mt19937_64 rng(20261121);
  RandomDatatypeOptions options;
  options.maxPieces = 20000;
  for (int i = 0; i < 400; ++i) {
    RandomDatatypeCase c = generateRandomDatatype(rng, options);
    const Datatype &t = *c.type;
    std::vector<ddtc::Run> expected = flatten(t, c.count);
    CanonicalLayout l = lowerToCanonical(t);
    ASSERT_EQ(flattenLayout(l, c.count), expected) << printSpecExpr(t);
    detectVectors(l);
    ASSERT_EQ(flattenLayout(l, c.count), expected) << printSpecExpr(t);
    KernelPlan p = makeInitialPlan(l);
    std::string error;
    // Every other type with records in the units family, to check their
    // units too.
    ASSERT_TRUE(alignAccesses(p, error, i % 2 ? 1 : kMaxPointRuns)) << error;
    balanceWorkUnits(p);
    if (p.family == KernelFamily::Units) {
      std::vector<ddtc::Run> one = flatten(t, 1);
      std::vector<ddtc::Run> fromUnits;
      int64_t packed = 0;
      for (const WorkUnit &u : p.units) {
        ASSERT_EQ(u.packed, packed) << printSpecExpr(t);
        ASSERT_LE(u.length, p.unitBytes);
        if (u.wide) {
          ASSERT_TRUE(u.src % p.width == 0 && u.packed % p.width == 0 &&
                      u.length % p.width == 0)
              << printSpecExpr(t);
        }
        packed += u.length;
        if (!fromUnits.empty() &&
            fromUnits.back().offset + fromUnits.back().length == u.src)
          fromUnits.back().length += u.length;
        else
          fromUnits.push_back({u.src, u.length});
      }
      ASSERT_EQ(fromUnits, one) << printSpecExpr(t);
    }
  }
}

} // namespace

TEST(ReadAmplification, FollowsTheLayout) {
  auto amp = [](const char *spec) {
    CanonicalLayout l = lowerToCanonical(*parse(spec));
    detectVectors(l);
    return estimateReadAmplification(l, 64);
  };
  // One long run: its bytes, plus under one piece at its ends.
  EXPECT_NEAR(amp("t = contiguous(100000, double)"), 1.0, 1e-3);
  // Doubles 4 KiB apart (a cube's x face): a piece for every 8 bytes, and
  // on average a second one when a double straddles two. (Below, the last
  // piece of a span adds up to granule - 1 bytes: hence the tolerances.)
  EXPECT_NEAR(amp("t = vector(1000, 1, 512, double)"), 71.0 / 8, 1e-9);
  // 16 bytes every 32: points share pieces, so every byte between is read.
  EXPECT_NEAR(amp("t = vector(1000, 2, 4, double)"), 2.0, 0.005);
  // Rows of 4080 bytes every 4096.
  EXPECT_NEAR(amp("t = vector(1000, 510, 512, double)"), 4096.0 / 4080,
              0.005);
  // Two doubles 16 bytes apart in a 64-byte record: the record's memory.
  EXPECT_NEAR(amp("t = contiguous(1000, resized(0, 64, hindexed([1, 1], "
                  "[0, 16], double)))"),
              4.0, 0.005);
  // An empty layout reads nothing and is not amplified.
  EXPECT_EQ(amp("t = contiguous(0, double)"), 1.0);
}

TEST(CountedStridedRead, CountsThePiecesOfEachBlock) {
  auto counted = [](const char *spec, int64_t count) {
    CanonicalLayout l = lowerToCanonical(*parse(spec));
    detectVectors(l);
    return countedStridedRead(l, count, 32);
  };
  // 256-byte blocks 512 bytes apart: whole sectors.
  EXPECT_DOUBLE_EQ(counted("t = vector(1000, 32, 64, double)", 1), 1.0);
  // The same at a 4-byte offset: nine sectors for eight sectors' bytes.
  EXPECT_DOUBLE_EQ(
      counted("t = struct([1], [4], [vector(1000, 64, 128, int)])", 1),
      9.0 / 8);
  // 16 bytes every 32: a sector for each.
  EXPECT_DOUBLE_EQ(counted("t = vector(1000, 2, 4, double)", 1), 2.0);
  // Rows of 4080 bytes every 4096 from 8 bytes into a sector.
  EXPECT_DOUBLE_EQ(
      counted("t = struct([1], [8], [vector(100, 510, 512, double)])", 1),
      4096.0 / 4080);
  // Instances whose extent keeps the offset in the sector, one after the
  // other; and instances 16 bytes off the sectors' grid: not counted.
  EXPECT_DOUBLE_EQ(counted("t = vector(10, 32, 64, double)", 3), 1.0);
  EXPECT_EQ(counted("t = vector(10, 2, 4, double)", 2), 0.0);
  // Strides off the grid, blocks sharing sectors, several runs: not counted.
  EXPECT_EQ(counted("t = hvector(100, 256, 516, char)", 1), 0.0);
  EXPECT_EQ(counted("t = struct([1], [16], [hvector(100, 24, 32, char)])", 1),
            0.0);
  EXPECT_EQ(counted("t = indexed([1, 2], [0, 5], double)", 1), 0.0);
}

TEST(WriteAmplification, FollowsTheSectorsAndLines) {
  auto amp = [](const char *spec) {
    CanonicalLayout l = lowerToCanonical(*parse(spec));
    detectVectors(l);
    return estimateWriteAmplification(l);
  };
  // Whole sectors: the packed bytes alone.
  EXPECT_DOUBLE_EQ(amp("t = contiguous(100000, double)"), 1.0);
  EXPECT_DOUBLE_EQ(amp("t = vector(1000, 32, 64, double)"), 1.0);
  // Doubles 512 bytes apart: a sector and a line read for every 8 bytes.
  // (An instance's first run shares a sector with the one before's last,
  // where the extent ends with a run: hence the tolerances.)
  EXPECT_NEAR(amp("t = vector(1000, 1, 64, double)"), 128.0 / 8, 0.02);
  // 16 bytes every 32: four partial sectors and one line read per 64 bytes.
  EXPECT_NEAR(amp("t = vector(1000, 2, 4, double)"), 224.0 / 64, 0.005);
  // 256-byte blocks 4 bytes past a sector: nine sectors, two of them in
  // part in two lines.
  EXPECT_DOUBLE_EQ(
      amp("t = contiguous(1000, resized(0, 512, hindexed([64], [4], float)))"),
      (9.0 * 32 + 2 * 96) / 256);
  // Instances fill each other's sectors: 8 bytes every 16 leave half of
  // every sector; 8 bytes every 8 leave none.
  EXPECT_DOUBLE_EQ(amp("t = resized(0, 16, double)"), 224.0 / 64);
  EXPECT_DOUBLE_EQ(amp("t = resized(0, 8, double)"), 1.0);
  // Only the first runs are walked, and the estimate stays the same.
  CanonicalLayout l =
      lowerToCanonical(*parse("t = vector(100000, 1, 64, double)"));
  EXPECT_DOUBLE_EQ(estimateWriteAmplification(l, 100), 16.0);
  EXPECT_EQ(amp("t = contiguous(0, double)"), 1.0);
}
