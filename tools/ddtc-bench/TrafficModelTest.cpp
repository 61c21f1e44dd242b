//===- TrafficModelTest.cpp - Sectors and traffic of ddtc-bench's model ---===//

#include "TrafficModel.h"

#include "ddtc/Core/SpecParser.h"

#include <gtest/gtest.h>

using namespace ddtc;

namespace {

/// The footprint of `count` instances of the binding `t` of `spec`.
SectorFootprint footprint(const std::string &spec, int64_t originMod32,
                          int64_t count = 1) {
  SpecFile file;
  std::string error;
  EXPECT_TRUE(parseSpec(spec, "test.ddt", file, error)) << error;
  CanonicalLayout layout;
  EXPECT_TRUE(lowerToCanonical(*file.find("t")->type, layout, error)) << error;
  SectorFootprint f;
  EXPECT_TRUE(
      countSectorFootprint(layout, count, originMod32, kMaxTableRuns, f, error))
      << error;
  return f;
}

TEST(TrafficModel, ContiguousAlignedHasNoPartialSectors) {
  SectorFootprint f = footprint("t = contiguous(1024, char)", 0);
  EXPECT_EQ(f.packedBytes, 1024);
  EXPECT_EQ(f.sectors, 32);
  EXPECT_EQ(f.partialSectors, 0);
  // Off a boundary it spills into one more sector, partial at both ends.
  f = footprint("t = contiguous(1024, char)", 4);
  EXPECT_EQ(f.sectors, 33);
  EXPECT_EQ(f.partialSectors, 2);
}

TEST(TrafficModel, SmallBlocksTouchEverySector) {
  // 4-byte blocks 8 bytes apart: every sector read, none written whole.
  SectorFootprint f = footprint("t = hvector(64, 4, 8, char)", 0);
  EXPECT_EQ(f.packedBytes, 256);
  EXPECT_EQ(f.sectors, 16);
  EXPECT_EQ(f.partialSectors, 16);
  EXPECT_EQ(packTraffic(f).total(), 16 * 32 + 256);
  Traffic u = unpackTraffic(f, 1);
  EXPECT_EQ(u.readBytes, 256 + 16 * 32);
  EXPECT_EQ(u.writeBytes, 16 * 32);
  EXPECT_EQ(unpackTraffic(f, 0).readBytes, 256);
  EXPECT_EQ(packToHostDeviceTraffic(f).total(), 16 * 32);
}

TEST(TrafficModel, SectorBlocksFollowTheAlignment) {
  // 32-byte blocks every 64 bytes: one full sector each when aligned, two
  // partial ones at a 4-byte offset.
  SectorFootprint f = footprint("t = hvector(10, 32, 64, char)", 0);
  EXPECT_EQ(f.sectors, 10);
  EXPECT_EQ(f.partialSectors, 0);
  f = footprint("t = hvector(10, 32, 64, char)", 4);
  EXPECT_EQ(f.sectors, 20);
  EXPECT_EQ(f.partialSectors, 20);
}

TEST(TrafficModel, SectorsFilledByManyRunsAreFull) {
  // The columns of a 4x4 double matrix: each element its own run, but
  // together they fill every sector.
  SectorFootprint f = footprint(
      "col = resized(0, 8, vector(4, 1, 4, double))\nt = contiguous(4, col)",
      0);
  EXPECT_EQ(f.packedBytes, 128);
  EXPECT_EQ(f.sectors, 4);
  EXPECT_EQ(f.partialSectors, 0);
}

TEST(TrafficModel, CountsEveryInstance) {
  // Two instances of two doubles 32 bytes apart, 48 bytes from instance to
  // instance: sectors 0, 1 (shared by both instances, counted once) and 2,
  // none of them full.
  SectorFootprint f =
      footprint("p = struct([1, 1], [0, 32], [double, int64_t])\n"
                "t = resized(0, 48, p)",
                0, 2);
  EXPECT_EQ(f.packedBytes, 32);
  EXPECT_EQ(f.sectors, 3);
  EXPECT_EQ(f.partialSectors, 3);
}

TEST(TrafficModel, RefusesMoreRunsThanItMayList) {
  SpecFile file;
  std::string error;
  ASSERT_TRUE(
      parseSpec("t = hvector(100, 4, 8, char)", "test.ddt", file, error));
  CanonicalLayout layout;
  ASSERT_TRUE(lowerToCanonical(*file.find("t")->type, layout, error));
  SectorFootprint f;
  EXPECT_FALSE(countSectorFootprint(layout, 1, 0, 99, f, error));
  EXPECT_NE(error.find("more than 99"), std::string::npos) << error;
}

} // namespace
