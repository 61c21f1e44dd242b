//===- TrafficModel.h - The DRAM traffic a layout forces ---------*- C++
//-*-===//
//
// What ddtc-bench's traffic ratio divides by: the bytes a pack or unpack must
// move between the SMs and memory, with reads and writes of the strided side
// counted in whole 32-byte sectors (the count of ddtc --emit=explain) at the
// buffer's real alignment. Plain C++, so it is tested without a GPU.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_BENCH_TRAFFICMODEL_H
#define DDTC_TOOLS_DDTC_BENCH_TRAFFICMODEL_H

#include "ddtc/Core/CanonicalLayout.h"

#include <cstdint>
#include <string>

namespace ddtc {

/// The sectors the strided side of `count` instances touches.
struct SectorFootprint {
  int64_t packedBytes = 0;
  /// Distinct 32-byte sectors the runs touch.
  int64_t sectors = 0;
  /// Of those, the sectors the runs cover only in part: writing one may make
  /// the memory read it first (to merge the bytes and recompute ECC).
  int64_t partialSectors = 0;
};

/// Counts the footprint of `count` instances of `layout` whose origin lies
/// `originMod32` bytes past a 32-byte boundary. Fails with `error` set when
/// the instances have more than `maxRuns` runs (the count lists every run).
bool countSectorFootprint(const CanonicalLayout &layout, int64_t count,
                          int64_t originMod32, int64_t maxRuns,
                          SectorFootprint &out, std::string &error);

/// Bytes a kernel reads and writes in DRAM.
struct Traffic {
  int64_t readBytes = 0, writeBytes = 0;
  int64_t total() const { return readBytes + writeBytes; }
};

/// Pack into device memory: the sectors of the strided source, then the
/// packed bytes written contiguously.
Traffic packTraffic(const SectorFootprint &f);

/// Unpack from device memory: the packed bytes in whole sectors, then every
/// sector of the strided destination written, and `partialWriteReads`
/// sector reads (0 or 1) for each one written only in part.
Traffic unpackTraffic(const SectorFootprint &f, int partialWriteReads);

/// Pack into mapped host memory, device side: the sectors of the source
/// alone (the packed bytes cross PCIe, timed against a pinned D2H copy).
Traffic packToHostDeviceTraffic(const SectorFootprint &f);

} // namespace ddtc

#endif // DDTC_TOOLS_DDTC_BENCH_TRAFFICMODEL_H
