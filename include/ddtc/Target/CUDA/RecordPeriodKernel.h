//===- RecordPeriodKernel.h - Records packed by a fixed period -*- C++ -*-===//
//
// The pack and unpack of a record window plan (RecordWindowKernel.h) whose
// points follow each other at one stride across instances too: every K
// points (K = 1, 2 or 4, so that K points' packed bytes and their source
// span are whole 4-byte words) are one "period", whose packed words come
// from fixed words of its source span. The kernels are printed for the
// record's runs and stride (they are in the shape key): to pack, a block
// stages the source spans of its periods in shared memory with coalesced
// 16-byte loads (word loads where the source is not 16-byte aligned), each
// thread assembles one period's packed words with constant word and byte
// indices, and the block stores the packed words coalesced; the unpack
// runs the same steps backwards and stores only the runs' bytes. No
// locate, no search of the point's runs, no division by a launch
// parameter. See docs/Compiler.md, "Records by their period".
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_RECORDPERIODKERNEL_H
#define DDTC_TARGET_CUDA_RECORDPERIODKERNEL_H

#include "ddtc/Core/KernelPlan.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace ddtc {

/// The largest source span (K points' stride) and packed bytes of a period.
constexpr int64_t kPeriodMaxSpan = 1024;
constexpr int64_t kPeriodMaxPacked = 512;
/// The shared memory a block's staged periods may take (of the 48 KiB of
/// static shared memory a block may have).
constexpr int64_t kPeriodSharedBytes = 40 * 1024;

/// A period's figures, all fixed by the plan.
struct PeriodGeometry {
  int64_t stride = 0; ///< bytes between consecutive points
  int64_t points = 0; ///< K: points of one period
  int64_t span = 0;   ///< K x stride: the period's source bytes
  int64_t packed = 0; ///< K x the point's packed bytes
  int64_t inRow = 0;  ///< shared words of a staged source span (odd)
  int64_t outRow = 0; ///< shared words of a period's packed words (odd)
  int64_t rows = 0;   ///< periods a block stages at once
};

/// Whether a plan packs by its period: a record window plan, or a single
/// run a point shorter than a 16-byte chunk and not one or two aligned
/// words (what the gather kernels move slowly), in a nest of at most two
/// dimensions; a period fits kPeriodMaxSpan and kPeriodMaxPacked with at
/// least 32 rows in kPeriodSharedBytes; and where the rows restart
/// (periodRestartsRows) the innermost count is a multiple of its points.
bool isRecordPeriodPlan(const KernelPlan &plan);

/// Whether a period plan's rows restart: instances a vector's trailing gap
/// apart, or the rows of an outer dimension (at most one), so that the
/// points are not one row at one stride. Its kernels find each tile's row:
/// a tile inside one row goes as one span, a tile across the end of a row
/// at least a tile long as two, any other a row piece at a time; a period
/// never crosses a row (the innermost count is a multiple of its points),
/// and the launch parameters carry a divisor of the first dimension's
/// count too.
bool periodRestartsRows(const KernelPlan &plan);

/// The period of a plan that isRecordPeriodPlan.
PeriodGeometry getPeriodGeometry(const KernelPlan &plan);

/// What the shape key adds for such a plan: the stride and the runs, e.g.
/// ".p48:0+24,36+4" (kernels of one record and stride share a compile).
std::string periodShapeSuffix(const KernelPlan &plan);

/// Appends the pack kernel `<prefix>_pack` of such a plan, after the
/// parameter struct.
void emitRecordPeriodPack(const KernelPlan &plan, const std::string &prefix,
                          std::ostream &os);

/// Appends the unpack kernel `<prefix>_unpack` of such a plan (and the
/// table of its span's bytes, `<prefix>_span_packed`), after the parameter
/// struct: the pack's steps backwards, storing only the runs' bytes.
void emitRecordPeriodUnpack(const KernelPlan &plan, const std::string &prefix,
                            std::ostream &os);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_RECORDPERIODKERNEL_H
