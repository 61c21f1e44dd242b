//===- TrafficModel.h - The DRAM traffic a layout forces ---------*- C++
//-*-===//
//
// What ddtc-bench's traffic ratio divides by: the bytes a pack or unpack must
// move between the SMs and memory at the buffers' real alignment. Reads of
// the strided side are counted in aligned read granules (64 bytes unless a
// calibration says otherwise), writes in 32-byte sectors, a sector written in
// part at a measured multiple of a full one. The sector counts are those of
// ddtc --emit=explain. Plain C++, so it is tested without a GPU.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_BENCH_TRAFFICMODEL_H
#define DDTC_TOOLS_DDTC_BENCH_TRAFFICMODEL_H

#include "ddtc/Core/CanonicalLayout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ddtc {

/// The model's defaults: what ddtc-bench --calibrate-traffic measured on an
/// NVIDIA H100 (docs/Performance.md, "The traffic ratio").
constexpr int64_t kDefaultReadGranule = 64;
constexpr double kDefaultPartialWriteCost = 2.2;

/// The two measured parameters of the model.
struct TrafficParams {
  /// DRAM reads aligned pieces of this many bytes whole (32, 64 or 128).
  int64_t readGranule = kDefaultReadGranule;
  /// A sector written in part costs this many full sector writes.
  double partialWriteCost = kDefaultPartialWriteCost;
};

/// The largest read granule the model takes: an address modulo it places a
/// buffer for every granule and for the sectors.
constexpr int64_t kMaxReadGranule = 128;

/// Whether the model takes `bytes` as its read granule: 32, 64 or 128.
bool isValidReadGranule(int64_t bytes);

/// The range --partial-write-cost takes: a partial write costs at least a
/// full one, and no measured GPU comes near the upper end.
constexpr double kMinPartialWriteCost = 1.0, kMaxPartialWriteCost = 16.0;

/// What the strided side of `count` instances touches.
struct SectorFootprint {
  int64_t packedBytes = 0;
  /// Distinct 32-byte sectors the runs touch.
  int64_t sectors = 0;
  /// Of those, the sectors the runs cover only in part: writing one costs
  /// more than a full sector (the memory merges the bytes and recomputes
  /// ECC).
  int64_t partialSectors = 0;
  /// Distinct aligned read granules the runs touch, of `granuleBytes` each.
  int64_t granules = 0;
  int64_t granuleBytes = kDefaultReadGranule;
};

/// Counts the footprint of `count` instances of `layout` whose origin lies
/// `originOffset` bytes past an address aligned to `granuleBytes` (any
/// multiple of it works: the buffer's address modulo 128, say). Fails with
/// `error` set when the instances have more than `maxRuns` runs (the count
/// lists every run) or the granule is not one the model takes.
bool countSectorFootprint(const CanonicalLayout &layout, int64_t count,
                          int64_t originOffset, int64_t granuleBytes,
                          int64_t maxRuns, SectorFootprint &out,
                          std::string &error);

/// The number of distinct aligned `granuleBytes` pieces that `runs` touch
/// (with 32, the sector count of ddtc --emit=explain).
int64_t countGranules(const std::vector<Run> &runs, int64_t granuleBytes);

/// Bytes a kernel moves in DRAM, in units of what cudaMemcpy moves at its
/// rate: a partial sector write counts as its cost in full sectors.
struct Traffic {
  int64_t readBytes = 0, writeBytes = 0;
  int64_t total() const { return readBytes + writeBytes; }
};

/// Pack into device memory: the granules of the strided source, then the
/// packed bytes written contiguously.
Traffic packTraffic(const SectorFootprint &f);

/// Unpack from device memory: the packed bytes in whole granules, then every
/// sector of the strided destination written, each one written in part
/// costing `partialWriteCost` full sectors.
Traffic unpackTraffic(const SectorFootprint &f, double partialWriteCost);

/// Pack into mapped host memory, device side: the granules of the source
/// alone (the packed bytes cross PCIe, timed against a pinned D2H copy).
Traffic packToHostDeviceTraffic(const SectorFootprint &f);

/// The time of reading every k-th sector over that of reading every sector,
/// below which the k-th sector reads count as clearly cheaper: halfway
/// between the same time (1.0) and the half that skipping every other
/// granule takes.
constexpr double kClearlyCheaper = 0.75;

/// What a calibration file says about the model.
struct CalibratedTraffic {
  /// The derived parameters; the defaults where the file lacks what one
  /// needs.
  TrafficParams params;
  bool readGranuleDerived = false, partialWriteCostDerived = false;
  /// What was derived from which patterns, what was missing.
  std::vector<std::string> notes;
};

/// The parameters derived from the JSON that ddtc-bench --calibrate-traffic
/// writes (rules in docs/Performance.md):
/// - read granule: 16 x k bytes for the smallest k in 2, 4, 8 at which
///   reading every k-th sector takes at most kClearlyCheaper of the time of
///   reading every sector (a granule of g sectors makes every k <= g as slow
///   as reading all, and k = 2g take half the time); 128 when none does.
/// - partial write cost: 1 / the mean vs_base of the device writes of part
///   of every sector, at least 1.
/// Patterns that failed their check are not used. A parameter whose
/// patterns the file lacks keeps its default, with a note naming what is
/// missing. Fails only when `text` is not JSON with a "patterns" array.
bool deriveTrafficParams(const std::string &text, CalibratedTraffic &out,
                         std::string &error);

/// deriveTrafficParams on the file at `path`; fails when it cannot be read.
bool loadTrafficCalibration(const std::string &path, CalibratedTraffic &out,
                            std::string &error);

} // namespace ddtc

#endif // DDTC_TOOLS_DDTC_BENCH_TRAFFICMODEL_H
