//===- Model.cpp - The fragment size of the IPC pipeline ---------------------===//
//
// A pipelined message of M packed bytes in n fragments of f bytes costs, as
// the pipeline runs (seed: the postal and max-rate models):
//
//   T(f) = n * alpha + M / link + 2 * f / local
//
// alpha: what one fragment costs the host (a kernel launch, events, the
//        ready and return messages), measured ~10 us per fragment on two
//        H200s joined by NVLink (the fragment sweep of the IPC benchmark);
// link:  the rate of the copy between the GPUs (or within one);
// local: the rate of a pack or unpack kernel in local memory: the first
//        fragment's pack and the last one's unpack do not overlap the link.
//
// The minimum lies at f* = sqrt(M * alpha * local / 2), rounded to a power
// of two between 256 KiB and 64 MiB (and at most M). The three figures are
// settings (DDTC_MPI_IPC_ALPHA_US, _LINK_GBPS, _LOCAL_GBPS) with the values
// measured on an H200 pair as defaults; DDTC_MPI_FRAGMENT overrides the
// choice.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include <algorithm>
#include <cmath>

namespace ddtc::mpi {

double predictIpcUs(int64_t bytes, int64_t fragment) {
  const Settings &s = settings();
  if (bytes <= 0 || fragment <= 0)
    return 0;
  double n = std::ceil(static_cast<double>(bytes) / fragment);
  double f = static_cast<double>(std::min(bytes, fragment));
  // GB/s = 1e3 bytes per microsecond.
  return n * s.ipcAlphaUs + bytes / (s.ipcLinkGBps * 1e3) +
         2 * f / (s.ipcLocalGBps * 1e3);
}

int64_t ipcFragment(int64_t bytes) {
  const Settings &s = settings();
  if (s.fragmentSet)
    return s.fragment;
  double best = std::sqrt(static_cast<double>(std::max<int64_t>(bytes, 1)) *
                          s.ipcAlphaUs * s.ipcLocalGBps * 1e3 / 2);
  int64_t f = int64_t(256) << 10;
  while (f < (int64_t(64) << 20) && f * 2 <= best * 1.41)
    f *= 2;
  return std::max<int64_t>(1, std::min(f, bytes));
}

} // namespace ddtc::mpi
