//===- TrafficCalibration.h - The traffic model's assumptions -*- C++ -*-===//
//
// ddtc-bench --calibrate-traffic: kernels of known access patterns (every
// k-th sector read, full and partial sector writes, writes to mapped pinned
// host memory) timed against cudaMemcpy, so the assumptions of the traffic
// ratio (docs/Performance.md) rest on a measurement.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_BENCH_TRAFFICCALIBRATION_H
#define DDTC_TOOLS_DDTC_BENCH_TRAFFICCALIBRATION_H

#include <string>

namespace ddtc {

/// Checks, then times every pattern over `deviceMiB` of device memory and
/// `hostMiB` of mapped pinned host memory (median of `reps`); prints a table
/// and writes JSON to `outPath`. Returns the exit status: 1 when a pattern
/// read or wrote the wrong bytes.
int runTrafficCalibration(const std::string &outPath, int reps,
                          long long deviceMiB, long long hostMiB);

} // namespace ddtc

#endif // DDTC_TOOLS_DDTC_BENCH_TRAFFICCALIBRATION_H
