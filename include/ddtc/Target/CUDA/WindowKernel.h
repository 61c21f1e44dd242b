//===- WindowKernel.h - Shared-memory window pack for records ---*- C++ -*-===//
//
// The pack kernel of a strided plan of dense records
// (StridedVariant::Window): one run per element, at least kWindowMinRun
// bytes, with gaps of less than a 32-byte sector between consecutive runs
// of a row (an odd-sized struct of which every field is sent, like
// particles of 41 bytes every 48). A block copies the bytes its 16-byte
// chunks of the packed stream span on the records' side, gaps included,
// into a shared window with aligned, coalesced 16-byte loads, then each
// thread joins its chunks from the window with funnel shifts and stores
// them aligned. See docs/Compiler.md, "The window pack".
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_WINDOWKERNEL_H
#define DDTC_TARGET_CUDA_WINDOWKERNEL_H

#include "ddtc/Core/KernelPlan.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace ddtc {

/// Runs of kWindowMinRun to kWindowMaxRun bytes, kWindowMaxGap bytes apart
/// at most and at most half a run: a 16-byte chunk then holds bytes of at
/// most two runs, a window reads no sector the runs leave whole, and the
/// window of a block's chunks stays within 1.5 times their bytes. On an
/// H200 the window packed runs of 120 bytes every 128 at 0.73 of memcpy
/// (Gather 0.67) and of 500 every 512 at 0.75 (Gather 0.55), runs of 1000
/// every 1024 at 0.81 (Gather 0.83).
constexpr int64_t kWindowMinRun = 16;
constexpr int64_t kWindowMaxRun = 512;
constexpr int64_t kWindowMaxGap = 31;

/// Chunks a thread of the window pack moves per block step, blockDim.x
/// chunks apart (stridedBatch; the unpack kernels loop over them): a
/// block's window is then several times its threads' 16-byte vectors, and
/// each thread issues its loads of it together, so that enough bytes are in
/// flight between two barriers. With one chunk a thread the pack ran at
/// 0.46-0.53 of memcpy on an H200, with four at 0.68-0.74.
constexpr int64_t kWindowChunks = 4;

/// Whether a plan's pack kernel is the window pack: a strided plan without
/// tiles, of width below 16 (the Wide kernels move aligned records), one
/// segment with one run, whose consecutive runs (along the innermost
/// dimension, or from instance to instance without dimensions) are within
/// the bounds above, and not runs of 8-byte words of kBatchMinRun bytes or
/// more (the batched Gather pack is faster there); or a record window plan
/// (isRecordWindowPlan, RecordWindowKernel.h).
bool isWindowPlan(const KernelPlan &plan);

/// The distance between consecutive runs (or records) of a window plan's
/// rows: the innermost stride, or the extent without dimensions.
int64_t getWindowRunStride(const KernelPlan &plan);

/// The 16-byte vectors of a block's shared window (one block of
/// plan.threadsPerBlock threads, kWindowChunks 16-byte chunks each), edges
/// included. A block whose window would be larger (a launch with larger
/// blocks, or a layout of the same shape with wider gaps) moves its chunks
/// straight from global memory.
int64_t getWindowVectors(const KernelPlan &plan);

/// Pieces the record window pack (RecordWindowKernel.h) shares: the pack
/// kernel's signature, its shared window of `wv` vectors, and a block step's
/// start up to the locate of the block's first packed byte A (`oA`; B is
/// the end of its bytes);
void emitWindowBlockStart(std::ostream &os, const std::string &prefix,
                          int64_t wv);
/// the end of a block step and of the kernel;
void emitWindowBlockEnd(std::ostream &os);
/// statements,
/// inside a block step, that set `windowed` false where the window of the
/// source span [r_lo, r_hi) would not fit in `wv` vectors, and otherwise
/// load it into `win` (vector v of the span, aligned down, at win[1 + v]):
/// the vectors inside the span with coalesced loads, the two at its edges
/// exactly;
void emitWindowFill(std::ostream &os, int64_t wv, int threadsPerBlock);
/// the statements of a block step for a block that does not use its window
/// (its chunks leave their row, or the window does not fit): each of the
/// thread's chunks walked run by run from global memory.
void emitWindowFallback(std::ostream &os, const std::string &prefix);

/// Appends the pack kernel `<prefix>_pack` of a window plan, after the
/// helpers, the parameter struct and `<prefix>_locate`.
void emitWindowPack(const KernelPlan &plan, const std::string &prefix,
                    std::ostream &os);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_WINDOWKERNEL_H
