//===- TrafficModel.cpp - The DRAM traffic a layout forces ----------------===//

#include "TrafficModel.h"

#include "ddtc/Target/CUDA/Explain.h"

#include <algorithm>

namespace ddtc {

namespace {
constexpr int64_t kSector = 32;

int64_t floorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

/// Sectors that the union of `runs` covers entirely. Runs are merged first:
/// a sector filled by several runs (the columns of a transpose) is full.
int64_t countFullSectors(std::vector<Run> runs) {
  std::sort(runs.begin(), runs.end(),
            [](const Run &a, const Run &b) { return a.offset < b.offset; });
  int64_t full = 0;
  auto addPiece = [&](int64_t begin, int64_t end) {
    full += std::max<int64_t>(0, floorDiv(end, kSector) -
                                     floorDiv(begin + kSector - 1, kSector));
  };
  size_t i = 0;
  while (i < runs.size()) {
    int64_t begin = runs[i].offset, end = begin + runs[i].length;
    for (++i; i < runs.size() && runs[i].offset <= end; ++i)
      end = std::max(end, runs[i].offset + runs[i].length);
    addPiece(begin, end);
  }
  return full;
}
} // namespace

bool countSectorFootprint(const CanonicalLayout &layout, int64_t count,
                          int64_t originMod32, int64_t maxRuns,
                          SectorFootprint &out, std::string &error) {
  int64_t runs = 0;
  if (__builtin_mul_overflow(countRuns(layout), count, &runs) ||
      runs > maxRuns) {
    error = "the sector count lists every run: " + std::to_string(count) +
            " instance(s) have more than " + std::to_string(maxRuns);
    return false;
  }
  std::vector<Run> list = flattenLayout(layout, count);
  out.packedBytes = 0;
  for (Run &r : list) {
    r.offset += originMod32;
    out.packedBytes += r.length;
  }
  // The same count as ddtc --emit=explain, shifted to the real alignment.
  out.sectors = countSectors(list);
  out.partialSectors = out.sectors - countFullSectors(std::move(list));
  return true;
}

Traffic packTraffic(const SectorFootprint &f) {
  return {f.sectors * kSector, f.packedBytes};
}

Traffic unpackTraffic(const SectorFootprint &f, int partialWriteReads) {
  const int64_t packedSectors = (f.packedBytes + kSector - 1) / kSector;
  return {(packedSectors + partialWriteReads * f.partialSectors) * kSector,
          f.sectors * kSector};
}

Traffic packToHostDeviceTraffic(const SectorFootprint &f) {
  return {f.sectors * kSector, 0};
}

} // namespace ddtc
