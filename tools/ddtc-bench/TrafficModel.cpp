//===- TrafficModel.cpp - The DRAM traffic a layout forces ----------------===//

#include "TrafficModel.h"

#include "ddtc/Target/CUDA/Explain.h"

#include <algorithm>
#include <cmath>

namespace ddtc {

namespace {
constexpr int64_t kSector = 32;

int64_t floorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

int64_t roundUp(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

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

bool isValidReadGranule(int64_t bytes) {
  return bytes == 32 || bytes == 64 || bytes == 128;
}

int64_t countGranules(const std::vector<Run> &runs, int64_t granuleBytes) {
  // First and last granule of each run; sorted, each granule is counted the
  // first time a run reaches it.
  std::vector<std::pair<int64_t, int64_t>> spans;
  spans.reserve(runs.size());
  for (const Run &r : runs)
    if (r.length > 0)
      spans.push_back({floorDiv(r.offset, granuleBytes),
                       floorDiv(r.offset + r.length - 1, granuleBytes)});
  std::sort(spans.begin(), spans.end());
  int64_t count = 0;
  bool any = false;
  int64_t end = 0; // granules counted up to `end`, once `any`
  for (auto [first, last] : spans) {
    if (any && last <= end)
      continue;
    count += last - (any ? std::max(first, end + 1) : first) + 1;
    end = last;
    any = true;
  }
  return count;
}

bool countSectorFootprint(const CanonicalLayout &layout, int64_t count,
                          int64_t originOffset, int64_t granuleBytes,
                          int64_t maxRuns, SectorFootprint &out,
                          std::string &error) {
  if (!isValidReadGranule(granuleBytes)) {
    error = "the read granule must be 32, 64 or 128 bytes, not " +
            std::to_string(granuleBytes);
    return false;
  }
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
    r.offset += originOffset;
    out.packedBytes += r.length;
  }
  out.granuleBytes = granuleBytes;
  out.granules = countGranules(list, granuleBytes);
  // The same count as ddtc --emit=explain, shifted to the real alignment.
  out.sectors = countSectors(list);
  out.partialSectors = out.sectors - countFullSectors(std::move(list));
  return true;
}

Traffic packTraffic(const SectorFootprint &f) {
  return {f.granules * f.granuleBytes, f.packedBytes};
}

Traffic unpackTraffic(const SectorFootprint &f, double partialWriteCost) {
  const int64_t fullSectors = f.sectors - f.partialSectors;
  const double partialBytes =
      partialWriteCost * static_cast<double>(f.partialSectors * kSector);
  return {roundUp(f.packedBytes, f.granuleBytes),
          fullSectors * kSector + std::llround(partialBytes)};
}

Traffic packToHostDeviceTraffic(const SectorFootprint &f) {
  return {f.granules * f.granuleBytes, 0};
}

} // namespace ddtc
