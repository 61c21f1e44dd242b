//===- RecordUnpackKernel.h - Destination-aligned unpack of records -*- C++ -*-//
//
// The run-aligned unpack (CUDAEmitter.h, StridedVariant::RunAligned) for
// records: a strided plan of one segment of 2 to kMaxPointRuns runs per
// nest point, in increasing order inside the point. Each thread takes one
// aligned 16-byte vector of the destination around a point (the slots of
// a point cover its span at any alignment), finds the pieces of the
// point's runs inside it, loads their packed bytes, which are consecutive
// in the packed stream, with one 16-byte load, and stores each piece. See
// docs/Compiler.md, "Records".
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_RECORDUNPACKKERNEL_H
#define DDTC_TARGET_CUDA_RECORDUNPACKKERNEL_H

#include "ddtc/Core/KernelPlan.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace ddtc {

/// The most runs per point of a record the run-aligned unpack takes: each
/// thread intersects its vector with every run of the point. On an H200,
/// against the gather unpack, records of 2 and 3 runs of 1-byte width
/// unpacked 1.35-1.8x faster; 16 runs of ints 1.9x slower, 2 runs of
/// doubles 7% slower, and records of 4-byte words that the wide kernel
/// unpacks 1.7x slower, so the plan takes it for widths below 4 only.
constexpr size_t kRecordAlignedMaxRuns = 4;

/// Whether a plan's single segment is a record whose runs come in
/// increasing order of origin offset without overlapping (their packed
/// bytes then follow the origin's order, so the pieces of a destination
/// vector are consecutive packed bytes).
bool hasOrderedRecord(const KernelPlan &plan);

/// The bytes a point of a plan's single segment spans, from its first run's
/// first byte to its last run's last.
int64_t getPointSpan(const KernelPlan &plan);

/// Appends the unpack kernel `<prefix>_unpack` of a record plan whose unpack
/// is run-aligned, after the helpers, the parameter struct and
/// `<prefix>_locate`.
void emitRecordAlignedUnpack(const KernelPlan &plan, const std::string &prefix,
                             std::ostream &os);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_RECORDUNPACKKERNEL_H
