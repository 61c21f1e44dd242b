//===- LaunchCost.h - What a pack or unpack call costs its thread -*- C++
//-*-===//
//
// The host's side of a kernel call: microseconds the calling thread spends in
// one ddtc_pack or ddtc_unpack, beside the driver calls it is made of (an
// empty kernel's launch, the context and pointer queries), so that the part
// that is ddtc's own shows.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_BENCH_LAUNCHCOST_H
#define DDTC_TOOLS_DDTC_BENCH_LAUNCHCOST_H

#include <string>

namespace ddtc {

/// Times every call in batches of `batch` (the stream synchronized between
/// batches) and prints the median per call of `batches` batches; writes the
/// figures as JSON to `outPath` unless it is empty. Returns an exit code.
int runLaunchCost(const std::string &outPath, int batch, int batches);

} // namespace ddtc

#endif // DDTC_TOOLS_DDTC_BENCH_LAUNCHCOST_H
