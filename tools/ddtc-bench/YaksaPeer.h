//===- YaksaPeer.h - Yaksa packing the benchmark's layouts ------*- C++ -*-===//
//
// Runs MPICH's datatype engine on a layout ddtc-bench has just measured, in
// the same process, on the same buffers and the same (default) stream:
// first its packed and unpacked bytes against ddtc's (poisoned outputs,
// device and mapped host destinations), then, only where they are equal,
// its pack, unpack and pack into mapped host memory timed like ddtc's.
// Every Yaksa call runs under the watchdog.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_BENCH_YAKSAPEER_H
#define DDTC_TOOLS_DDTC_BENCH_YAKSAPEER_H

#include "Watchdog.h"
#include "YaksaApi.h"

#include "ddtc/Core/Datatype.h"
#include "ddtc/ddtc.h"

#include <map>
#include <string>

namespace ddtc {

/// One layout as the benchmark holds it.
struct YaksaLayout {
  ddtc_type type;       ///< ddtc's handle, committed
  const Datatype *tree; ///< the same type as a tree
  int64_t count = 1, packed = 0, spanBytes = 0;
  unsigned char *origin = nullptr;     ///< displacement 0 of the source
  unsigned char *back = nullptr;       ///< the unpack buffer (spanBytes)
  unsigned char *backOrigin = nullptr; ///< displacement 0 inside back
  unsigned char *dst = nullptr;        ///< device packed buffer
  unsigned char *hostPacked = nullptr; ///< mapped pinned packed buffer
};

/// What Yaksa did: numbers (yaksa_pack_us, ddtc_vs_yaksa_pack, ...) and the
/// outcome in s["yaksa"]: "passed", "not expressible: ...", "not supported
/// ...", "FAILED: ...".
struct YaksaFigures {
  std::map<std::string, double> v;
  std::map<std::string, std::string> s;
};

/// Initializes Yaksa once (after the CUDA context exists).
bool initYaksa(const yaksa::Api &api, std::string &error);

/// Runs Yaksa on `layout`; `ours` holds ddtc's figures of the layout
/// (pack_us, memcpy_pack_traffic_us, ...) for the ratios. Each Yaksa phase
/// may take `limitSeconds` before the watchdog ends the process.
YaksaFigures runYaksa(const yaksa::Api &api, Watchdog &watchdog,
                      double limitSeconds, const YaksaLayout &layout,
                      const std::map<std::string, double> &ours, int reps);

} // namespace ddtc

#endif // DDTC_TOOLS_DDTC_BENCH_YAKSAPEER_H
