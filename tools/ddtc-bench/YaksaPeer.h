//===- YaksaPeer.h - Yaksa packing the benchmark's layouts ------*- C++ -*-===//
//
// Runs MPICH's datatype engine on a layout ddtc-bench has just measured, in
// the same process, on the same buffers and the same (default) stream:
// its packed and unpacked bytes in device memory against ddtc's (poisoned
// outputs), then, only where they are equal, its pack and unpack timed like
// ddtc's; last its pack into mapped host memory, checked, then timed.
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

/// Runs Yaksa on `layout` into `figures`, which the caller keeps where the
/// watchdog's callback finds it (a call that does not return ends the
/// process with what `figures` holds by then); `ours` holds ddtc's figures
/// of the layout (pack_us, memcpy_pack_traffic_us, ...) for the ratios. Each
/// Yaksa phase may take `limitSeconds` before the watchdog ends the process.
/// The device pack and unpack are checked and timed first, the pack into
/// mapped host memory last, and only with `tryHost`.
void runYaksa(const yaksa::Api &api, Watchdog &watchdog, double limitSeconds,
              const YaksaLayout &layout,
              const std::map<std::string, double> &ours, int reps,
              bool tryHost, YaksaFigures &figures);

} // namespace ddtc

#endif // DDTC_TOOLS_DDTC_BENCH_YAKSAPEER_H
