//===- TrafficModelTest.cpp - Sectors and traffic of ddtc-bench's model ---===//

#include "TrafficModel.h"

#include "ddtc/Core/SpecParser.h"
#include "ddtc/Target/CUDA/Explain.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

using namespace ddtc;

namespace {

/// The footprint of `count` instances of the binding `t` of `spec`, read in
/// granules of `granule` bytes.
SectorFootprint footprint(const std::string &spec, int64_t originOffset,
                          int64_t count = 1, int64_t granule = 64) {
  SpecFile file;
  std::string error;
  EXPECT_TRUE(parseSpec(spec, "test.ddt", file, error)) << error;
  CanonicalLayout layout;
  EXPECT_TRUE(lowerToCanonical(*file.find("t")->type, layout, error)) << error;
  SectorFootprint f;
  EXPECT_TRUE(countSectorFootprint(layout, count, originOffset, granule,
                                   kMaxTableRuns, f, error))
      << error;
  return f;
}

TEST(TrafficModel, ContiguousAlignedHasNoPartialSectors) {
  SectorFootprint f = footprint("t = contiguous(1024, char)", 0);
  EXPECT_EQ(f.packedBytes, 1024);
  EXPECT_EQ(f.sectors, 32);
  EXPECT_EQ(f.partialSectors, 0);
  EXPECT_EQ(f.granules, 16);
  // Off a boundary it spills into one more sector, partial at both ends,
  // and one more granule.
  f = footprint("t = contiguous(1024, char)", 4);
  EXPECT_EQ(f.sectors, 33);
  EXPECT_EQ(f.partialSectors, 2);
  EXPECT_EQ(f.granules, 17);
}

TEST(TrafficModel, SmallBlocksTouchEverySector) {
  // 4-byte blocks 8 bytes apart: every sector read, none written whole.
  SectorFootprint f = footprint("t = hvector(64, 4, 8, char)", 0);
  EXPECT_EQ(f.packedBytes, 256);
  EXPECT_EQ(f.sectors, 16);
  EXPECT_EQ(f.partialSectors, 16);
  EXPECT_EQ(f.granules, 8);
  EXPECT_EQ(packTraffic(f).total(), 8 * 64 + 256);
  Traffic u = unpackTraffic(f, 2.0);
  EXPECT_EQ(u.readBytes, 256);
  EXPECT_EQ(u.writeBytes, 16 * 32 * 2);
  EXPECT_EQ(unpackTraffic(f, 1.0).writeBytes, 16 * 32);
  EXPECT_EQ(packToHostDeviceTraffic(f).total(), 8 * 64);
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
  EXPECT_EQ(f.granules, 2);
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
  EXPECT_EQ(f.granules, 2);
}

TEST(TrafficModel, RefusesMoreRunsThanItMayList) {
  SpecFile file;
  std::string error;
  ASSERT_TRUE(
      parseSpec("t = hvector(100, 4, 8, char)", "test.ddt", file, error));
  CanonicalLayout layout;
  ASSERT_TRUE(lowerToCanonical(*file.find("t")->type, layout, error));
  SectorFootprint f;
  EXPECT_FALSE(countSectorFootprint(layout, 1, 0, 64, 99, f, error));
  EXPECT_NE(error.find("more than 99"), std::string::npos) << error;
  EXPECT_FALSE(countSectorFootprint(layout, 1, 0, 48, 1000, f, error));
  EXPECT_NE(error.find("not 48"), std::string::npos) << error;
}

//===----------------------------------------------------------------------===//
// Read granules
//===----------------------------------------------------------------------===//

TEST(TrafficModel, AFourByteRunReadsOneGranuleUnlessItCrossesOne) {
  const std::string run = "t = contiguous(4, char)";
  EXPECT_EQ(footprint(run, 0).granules, 1);
  EXPECT_EQ(footprint(run, 60).granules, 1); // bytes 60-63
  EXPECT_EQ(footprint(run, 62).granules, 2); // bytes 62-65
  EXPECT_EQ(footprint(run, 62, 1, 128).granules, 1);
  EXPECT_EQ(footprint(run, 126, 1, 128).granules, 2);
  EXPECT_EQ(footprint(run, 30, 1, 32).granules, 2);
  // What is read: the whole granule, for 4 useful bytes.
  EXPECT_EQ(packTraffic(footprint(run, 0)).readBytes, 64);
  EXPECT_EQ(packTraffic(footprint(run, 0, 1, 128)).readBytes, 128);
  EXPECT_EQ(packTraffic(footprint(run, 0, 1, 32)).readBytes, 32);
}

TEST(TrafficModel, RunsSharingAGranuleReadItOnce) {
  // 4-byte runs 40 bytes apart: two sectors, one 64-byte granule.
  SectorFootprint f = footprint("t = hvector(2, 4, 40, char)", 0);
  EXPECT_EQ(f.sectors, 2);
  EXPECT_EQ(f.granules, 1);
  EXPECT_EQ(footprint("t = hvector(2, 4, 40, char)", 0, 1, 32).granules, 2);
  // Shifted by 24 the second run (bytes 64-67) starts a new granule.
  EXPECT_EQ(footprint("t = hvector(2, 4, 40, char)", 24).granules, 2);
}

TEST(TrafficModel, EverySecondSectorReadsEveryGranule) {
  // Whole sectors, every other one: the calibration's "read every 2nd
  // sector", which took as long as reading all of them.
  SectorFootprint f = footprint("t = hvector(8, 32, 64, char)", 0);
  EXPECT_EQ(f.sectors, 8);
  EXPECT_EQ(f.granules, 8);
  EXPECT_EQ(packTraffic(f).readBytes, 8 * 64);
  // 32-byte granules read the sectors alone; 128-byte ones pair them up,
  // at either 32-byte alignment.
  EXPECT_EQ(footprint("t = hvector(8, 32, 64, char)", 0, 1, 32).granules, 8);
  EXPECT_EQ(footprint("t = hvector(8, 32, 64, char)", 0, 1, 128).granules, 4);
  EXPECT_EQ(footprint("t = hvector(8, 32, 64, char)", 32, 1, 128).granules, 4);
  // Every 4th sector: one granule in two.
  f = footprint("t = hvector(8, 32, 128, char)", 0);
  EXPECT_EQ(f.granules, 8);
  EXPECT_EQ(packTraffic(f).readBytes, 8 * 64);
}

TEST(TrafficModel, GranulesOfUnsortedAndNegativeRuns) {
  // Out of order, below the origin, overlapping, empty.
  std::vector<ddtc::Run> runs = {{100, 4}, {-10, 4}, {0, 2}, {1, 70}, {50, 0}};
  EXPECT_EQ(countGranules(runs, 64), 3); // -1, 0, 1
  EXPECT_EQ(countGranules(runs, 32), 5); // -1, 0, 1, 2, 3
  EXPECT_EQ(countGranules({}, 64), 0);
}

TEST(TrafficModel, ThirtyTwoByteGranulesAreTheSectorsOfExplain) {
  // Random runs, some overlapping, some negative: the granule count at 32
  // bytes is countSectors' (ddtc --emit=explain); coarser granules count
  // no fewer bytes and no more granules.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ddtc::Run> runs(1 + rng() % 40);
    for (ddtc::Run &r : runs)
      r = {static_cast<int64_t>(rng() % 4000) - 1000,
           static_cast<int64_t>(1 + rng() % 150)};
    const int64_t sectors = countSectors(runs);
    EXPECT_EQ(countGranules(runs, 32), sectors) << "trial " << trial;
    const int64_t g64 = countGranules(runs, 64),
                  g128 = countGranules(runs, 128);
    EXPECT_GE(g64 * 64, sectors * 32);
    EXPECT_GE(g128 * 128, g64 * 64);
    EXPECT_LE(g64, sectors);
    EXPECT_LE(g128, g64);
  }
}

//===----------------------------------------------------------------------===//
// Partial sector writes
//===----------------------------------------------------------------------===//

TEST(TrafficModel, PartialSectorsCostTheirFactorInFullWrites) {
  // 1024 bytes 4 bytes off a boundary: 31 full sectors and 2 partial ones.
  SectorFootprint f = footprint("t = contiguous(1024, char)", 4);
  EXPECT_EQ(unpackTraffic(f, 1.0).writeBytes, 33 * 32);
  EXPECT_EQ(unpackTraffic(f, 2.0).writeBytes, 31 * 32 + 2 * 64);
  // 2.2 x 64 = 140.8 bytes, rounded.
  EXPECT_EQ(unpackTraffic(f, 2.2).writeBytes, 31 * 32 + 141);
  EXPECT_EQ(unpackTraffic(f, kDefaultPartialWriteCost).writeBytes,
            31 * 32 + 141);
  // The packed bytes are read in whole granules.
  EXPECT_EQ(unpackTraffic(f, 2.2).readBytes, 1024);
  SectorFootprint odd = footprint("t = contiguous(100, char)", 0);
  EXPECT_EQ(unpackTraffic(odd, 2.2).readBytes, 128);
  // No partial sector: the factor does not matter.
  SectorFootprint whole = footprint("t = hvector(10, 32, 64, char)", 0);
  EXPECT_EQ(unpackTraffic(whole, 3.5).writeBytes, 10 * 32);
}

//===----------------------------------------------------------------------===//
// Parameters from a calibration file
//===----------------------------------------------------------------------===//

struct FakePattern {
  std::string target;
  int everyK, bytesPerSector;
  double vsBase;
  std::string check = "passed";
  double vsModel = 1.0;
  int partialEveryK = 0;
};

/// A calibration file of the shape ddtc-bench --calibrate-traffic writes.
std::string calibrationJson(const std::vector<FakePattern> &ps) {
  std::ostringstream os;
  os << "{\n \"device\": \"Test \\\"GPU\\\"\",\n \"memcpy_d2d_traffic_GBps\": "
        "2933.08,\n \"patterns\": [\n";
  for (size_t i = 0; i < ps.size(); ++i)
    os << "  {\"name\": \"pattern " << i << "\", \"target\": \"" << ps[i].target
       << "\", \"every_k\": " << ps[i].everyK
       << ", \"bytes_per_sector\": " << ps[i].bytesPerSector
       << ", \"partial_every_k\": " << ps[i].partialEveryK
       << ", \"us\": 1e2, \"vs_base\": " << ps[i].vsBase
       << ", \"vs_model\": " << ps[i].vsModel << ", \"check\": \""
       << ps[i].check << "\"}" << (i + 1 < ps.size() ? "," : "") << "\n";
  os << " ]\n}\n";
  return os.str();
}

/// Reading every k-th sector taking `time[k]` of reading them all.
std::vector<FakePattern> reads(const std::vector<std::pair<int, double>> &t) {
  std::vector<FakePattern> out = {{"device read", 1, 32, 1.0}};
  for (auto [k, time] : t)
    out.push_back({"device read", k, 32, 1.0 / (k * time)});
  // A partial read of every 4th sector, which the granule rule ignores.
  out.push_back({"device read", 4, 4, 0.01});
  return out;
}

CalibratedTraffic derive(const std::vector<FakePattern> &ps) {
  CalibratedTraffic c;
  std::string error;
  EXPECT_TRUE(deriveTrafficParams(calibrationJson(ps), c, error)) << error;
  return c;
}

bool anyNoteHas(const CalibratedTraffic &c, const std::string &s) {
  for (const std::string &n : c.notes)
    if (n.find(s) != std::string::npos)
      return true;
  return false;
}

TEST(TrafficCalibration, GranuleIsHalfTheFirstClearlyCheaperStride) {
  // Every 2nd sector already cheaper: sectors are read alone.
  CalibratedTraffic c = derive(reads({{2, 0.55}, {4, 0.3}}));
  EXPECT_EQ(c.params.readGranule, 32);
  EXPECT_TRUE(c.readGranuleDerived);
  // As slow up to every 2nd, cheaper at every 4th: 64 bytes.
  EXPECT_EQ(derive(reads({{2, 1.0}, {4, 0.56}})).params.readGranule, 64);
  // Just above the threshold is not clearly cheaper.
  EXPECT_EQ(derive(reads({{2, 0.8}, {4, 0.6}})).params.readGranule, 64);
  EXPECT_EQ(derive(reads({{2, 1.0}, {4, 0.95}, {8, 0.5}})).params.readGranule,
            128);
  // Never cheaper up to every 8th: the largest granule, said so.
  c = derive(reads({{2, 1.0}, {4, 1.0}, {8, 0.9}}));
  EXPECT_EQ(c.params.readGranule, 128);
  EXPECT_TRUE(anyNoteHas(c, "coarser")) << c.notes.front();
}

TEST(TrafficCalibration, PartialWriteCostIsTheInverseOfItsRate) {
  std::vector<FakePattern> ps = reads({{2, 1.0}, {4, 0.5}});
  ps.push_back({"device write", 1, 32, 1.0});
  ps.push_back({"device write", 2, 32, 0.7}); // whole sectors: ignored
  ps.push_back({"device write", 1, 16, 0.5});
  ps.push_back({"device write", 1, 4, 0.4});
  ps.push_back({"mapped host write", 1, 4, 0.1}); // host: ignored
  CalibratedTraffic c = derive(ps);
  EXPECT_NEAR(c.params.partialWriteCost, 1 / 0.45, 1e-9);
  EXPECT_TRUE(c.partialWriteCostDerived);
  EXPECT_EQ(c.params.readGranule, 64);
  // Sparse partial sectors amid whole ones are reported, not used: first
  // in the list, with the shape of the patterns the cost is taken from.
  std::vector<FakePattern> sparse = {
      {"device write", 1, 4, 0.1, "passed", 1.0, 8},
      {"device read", 1, 32, 0.01, "passed", 1.0, 8}};
  sparse.insert(sparse.end(), ps.begin(), ps.end());
  c = derive(sparse);
  EXPECT_NEAR(c.params.partialWriteCost, 1 / 0.45, 1e-9);
  EXPECT_EQ(c.params.readGranule, 64);
  // A rate above the full one is noise: the cost stays a full sector.
  ps = reads({{2, 1.0}, {4, 0.5}});
  ps.push_back({"device write", 1, 4, 1.05});
  c = derive(ps);
  EXPECT_EQ(c.params.partialWriteCost, 1.0);
  EXPECT_TRUE(anyNoteHas(c, "raised to 1"));
}

TEST(TrafficCalibration, MissingPatternsKeepTheDefaultsAndSaySo) {
  // No every-4th read, no partial write.
  CalibratedTraffic c = derive(reads({{2, 1.0}, {8, 0.3}}));
  EXPECT_EQ(c.params.readGranule, kDefaultReadGranule);
  EXPECT_EQ(c.params.partialWriteCost, kDefaultPartialWriteCost);
  EXPECT_FALSE(c.readGranuleDerived);
  EXPECT_FALSE(c.partialWriteCostDerived);
  EXPECT_TRUE(anyNoteHas(c, "every_k 4 and bytes_per_sector 32"));
  EXPECT_TRUE(anyNoteHas(c, "bytes_per_sector below 32"));
  EXPECT_TRUE(anyNoteHas(c, "(the default)"));
  // A pattern whose bytes were wrong is not used.
  std::vector<FakePattern> ps = reads({{2, 0.5}});
  ps[1].check = "FAILED";
  ps.push_back({"device write", 1, 4, 0.5, "FAILED"});
  c = derive(ps);
  EXPECT_EQ(c.params.readGranule, kDefaultReadGranule);
  EXPECT_EQ(c.params.partialWriteCost, kDefaultPartialWriteCost);
  EXPECT_FALSE(c.readGranuleDerived);
  EXPECT_TRUE(anyNoteHas(c, "failed its check"));
  // A pattern without vs_base.
  std::string text = calibrationJson(reads({{2, 1.0}, {4, 0.5}}));
  size_t at = text.find("\"vs_base\"", text.find("pattern 1"));
  text.replace(at, 9, "\"vs_other\"");
  std::string error;
  ASSERT_TRUE(deriveTrafficParams(text, c, error)) << error;
  EXPECT_EQ(c.params.readGranule, kDefaultReadGranule);
  EXPECT_TRUE(anyNoteHas(c, "has no vs_base"));
}

TEST(TrafficCalibration, SaysWhenHostWritesMissTheD2HRate) {
  std::vector<FakePattern> ps = reads({{2, 1.0}, {4, 0.5}});
  ps.push_back({"mapped host write", 1, 32, 1.0, "passed", 0.95});
  EXPECT_FALSE(anyNoteHas(derive(ps), "mapped host"));
  ps.back().vsModel = 0.5;
  EXPECT_TRUE(
      anyNoteHas(derive(ps), "mapped host: 'pattern 4' reaches only 0.500"));
}

TEST(TrafficCalibration, RefusesWhatIsNotACalibration) {
  CalibratedTraffic c;
  std::string error;
  EXPECT_FALSE(deriveTrafficParams("{\"patterns\": [1, 2", c, error));
  EXPECT_NE(error.find("not JSON"), std::string::npos) << error;
  EXPECT_FALSE(deriveTrafficParams("{\"layouts\": {}}", c, error));
  EXPECT_NE(error.find("no \"patterns\""), std::string::npos) << error;
  EXPECT_FALSE(deriveTrafficParams("[] x", c, error));
  EXPECT_FALSE(
      loadTrafficCalibration("/nonexistent/calibration.json", c, error));
  EXPECT_NE(error.find("cannot read"), std::string::npos) << error;
}

TEST(TrafficCalibration, ReadsAFile) {
  std::vector<FakePattern> ps = reads({{2, 0.5}});
  ps.push_back({"device write", 1, 8, 0.25});
  const std::string path =
      testing::TempDir() + "ddtc-traffic-calibration-test.json";
  std::ofstream(path) << calibrationJson(ps);
  CalibratedTraffic c;
  std::string error;
  ASSERT_TRUE(loadTrafficCalibration(path, c, error)) << error;
  std::remove(path.c_str());
  EXPECT_EQ(c.params.readGranule, 32);
  EXPECT_NEAR(c.params.partialWriteCost, 4.0, 1e-9);
}

/// The committed H100 calibration, found from this file's place in the
/// source tree when the tree is there.
std::string h100CalibrationPath() {
  std::string here = __FILE__;
  size_t at = here.rfind("tools/ddtc-bench/");
  if (at == std::string::npos)
    return "";
  return here.substr(0, at) +
         "bench/results/2026-11-23-NVIDIA-H100-bench/traffic-calibration.json";
}

TEST(TrafficCalibration, TheH100CalibrationGivesTheDefaults) {
  const std::string path = h100CalibrationPath();
  if (path.empty() || !std::ifstream(path))
    GTEST_SKIP() << "no source tree beside this test: " << path;
  CalibratedTraffic c;
  std::string error;
  ASSERT_TRUE(loadTrafficCalibration(path, c, error)) << error;
  ASSERT_TRUE(c.readGranuleDerived && c.partialWriteCostDerived)
      << c.notes.front();
  // Every 2nd sector: 1.002 of the time of all; every 4th: 0.562.
  EXPECT_EQ(c.params.readGranule, 64);
  EXPECT_TRUE(anyNoteHas(c, "k = 4")) << c.notes.front();
  // Partial writes at 0.4519 and 0.4517 of the full sector rate.
  EXPECT_NEAR(c.params.partialWriteCost, 2.213, 0.001);
  EXPECT_NEAR(c.params.partialWriteCost, kDefaultPartialWriteCost, 0.05);
  // Consecutive whole sectors into mapped host memory hold the D2H rate.
  EXPECT_FALSE(anyNoteHas(c, "mapped host"));
}

} // namespace
