//===- RecordWindowKernel.h - Window pack for records ---------*- C++ -*-===//
//
// The window pack (WindowKernel.h) for records that send several fields
// with gaps between them: a strided plan of one segment with 2 to
// kMaxPointRuns runs per nest point, in increasing order inside the point,
// whose points follow each other along a row at a stride no larger than
// twice their packed bytes. A block loads the source span of its chunks
// (gaps included) into a shared window, as the window pack does; each
// thread then takes its chunks' pieces from the window, finding each
// piece's run with the locate's search of the point's runs. See
// docs/Compiler.md, "The window pack".
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_RECORDWINDOWKERNEL_H
#define DDTC_TARGET_CUDA_RECORDWINDOWKERNEL_H

#include "ddtc/Core/KernelPlan.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace ddtc {

/// The most 16-byte vectors a record window may hold (40 KiB of the 48 KiB
/// of static shared memory a block may have).
constexpr int64_t kRecordWindowMaxVectors = 2560;

/// Whether a plan's pack kernel is the record window pack: a strided plan
/// without tiles, of width below 16, one segment of 2 to kMaxPointRuns runs
/// per point that do not overlap and come in increasing order, a point's
/// span no longer than the distance between points of a row (the innermost
/// stride, or the extent without dimensions), that distance at most twice
/// the point's packed bytes, a window of at most kRecordWindowMaxVectors,
/// and not of 8-byte words (which the gather pack loads a word at a time:
/// on an H200 the window packed 5 runs of 1-5 doubles every 200 bytes 10%
/// slower and 8 doubles every 128 bytes only 3% faster).
bool isRecordWindowPlan(const KernelPlan &plan);

/// The 16-byte vectors of a block's shared window for a record window plan
/// (plan.threadsPerBlock threads, kWindowChunks chunks each), edges
/// included.
int64_t getRecordWindowVectors(const KernelPlan &plan);

/// Appends the pack kernel `<prefix>_pack` of a record window plan (and
/// its search of a point's runs, `<prefix>_run`), after the window pack's
/// helpers, the parameter struct and `<prefix>_locate` (emitWindowPack
/// prints the helpers and calls this).
void emitRecordWindowPack(const KernelPlan &plan, const std::string &prefix,
                          std::ostream &os);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_RECORDWINDOWKERNEL_H
