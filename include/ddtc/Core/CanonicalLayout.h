//===- CanonicalLayout.h - Normalized layouts of datatypes ------*- C++ -*-===//
//
// The level below the constructor tree: a type as strided nests of run
// tables with explicit byte offsets, whatever constructors built it. Two MPI
// types with the same canonical layout pack the same bytes, so they share
// kernels. Normalization (lowerToCanonical) is exact; vector detection
// rewrites tables into strided dimensions without changing the bytes.
//===----------------------------------------------------------------------===//

#ifndef DDTC_CORE_CANONICALLAYOUT_H
#define DDTC_CORE_CANONICALLAYOUT_H

#include "ddtc/Core/Typemap.h"

#include <string>
#include <vector>

namespace ddtc {

/// One dimension of a strided nest: `count` steps of `stride` bytes.
struct Dim {
  int64_t count;
  int64_t stride;
  bool operator==(const Dim &o) const {
    return count == o.count && stride == o.stride;
  }
};

/// A piece of one instance's packed stream. For every index of `dims`
/// (outermost first, the last varying fastest), the runs of `runs` shifted by
/// offset + sum(index_d * stride_d), in order.
struct Segment {
  int64_t offset = 0;
  std::vector<Dim> dims;
  /// Relative to each nest point, in pack order; never empty, lengths > 0.
  std::vector<Run> runs;

  /// Nest points: the product of the dims' counts (1 without dims).
  int64_t points() const;
  /// Bytes of one nest point: the sum of the run lengths.
  int64_t pointBytes() const;
  /// Packed bytes of the segment: points() * pointBytes().
  int64_t packedBytes() const;
  /// A single run per nest point: a strided nest.
  bool isStrided() const { return runs.size() == 1; }
  bool operator==(const Segment &o) const {
    return offset == o.offset && dims == o.dims && runs == o.runs;
  }
};

/// A type as the runs of one instance (segments, in pack order) and where
/// instance i starts (i * extent).
struct CanonicalLayout {
  int64_t size = 0, lb = 0, extent = 0;
  std::vector<Segment> segments;
};

/// The most runs a plan lists for one instance: in a run table that
/// normalization builds (a nest repeating differently shaped pieces) and in
/// the work-unit table of the units family. Planning a type over it fails
/// with an error instead of growing with the type's bytes.
constexpr int64_t kMaxTableRuns = int64_t(1) << 22;

/// Normalization: the canonical layout of `type`, simplified (no empty runs,
/// touching runs merged, contiguous dimensions folded). Regular constructors
/// become dimensions, irregular ones run tables, so the cost follows the
/// description (and the blocks of irregular constructors), not the bytes.
/// Fails with `error` set when a run table would exceed kMaxTableRuns.
bool lowerToCanonical(const Datatype &type, CanonicalLayout &out,
                      std::string &error);

/// The runs of one instance as the segments list them (sum over segments of
/// points x runs), before merging; saturates at INT64_MAX. Costs one step per
/// dimension and segment.
int64_t countRuns(const CanonicalLayout &layout);

/// Vector detection: run tables with a regular pattern (equal runs at a
/// constant stride, repeated groups) become dimensions; nested dimensions
/// that are contiguous merge. Returns whether anything changed.
bool detectVectors(CanonicalLayout &layout);

/// Folds contiguous dimensions and merges touching runs and segments.
/// Returns whether anything changed.
bool simplifyLayout(CanonicalLayout &layout);

/// The runs of `count` instances of a layout in pack order, merged as in
/// forEachRun: equal to flatten(type, count) for the type it came from.
std::vector<Run> flattenLayout(const CanonicalLayout &layout, int64_t count);

/// An estimate of the memory a pack reads per packed byte (>= 1) when
/// memory is read in whole aligned pieces of `granule` bytes: a run costs
/// its bytes plus granule - 1 (the mean over alignments of the pieces it
/// touches); a block of runs, and each dimension's copies of the block
/// below it (innermost first), cost what their parts cost, but no more than
/// the memory they span together plus granule - 1 (parts closer than a
/// piece share it) and no less than their bytes. Segments add up. One step
/// per run of a nest point and per dimension: no run is listed.
double estimateReadAmplification(const CanonicalLayout &layout,
                                 int64_t granule);

/// An estimate of the memory an unpack moves per packed byte (>= 1) when
/// its stores go to memory in 32-byte sectors and a sector written in part
/// makes the memory read its 128-byte line first: each sector the stores
/// touch costs 32 bytes, and each line holding a sector written in part 96
/// more (the cost measured on an H200 for doubles 128 B-2 KiB apart, and
/// within a quarter for 4-16 byte blocks at twice their size). Walks the
/// first `maxRuns` runs of the instances from an origin aligned to 128
/// bytes, in address order, so runs sharing a sector fill it together.
double estimateWriteAmplification(const CanonicalLayout &layout,
                                  int64_t maxRuns = 16384);

/// The memory a read of `count` instances of a one-run strided layout
/// touches per packed byte, in aligned pieces of `granule` bytes, counted
/// rather than estimated: where every stride (the instances' extent
/// included, for more than one) is a multiple of the granule, so that each
/// block starts at one offset within its piece from an origin aligned to
/// it, and each level's stride reaches beyond the pieces of the levels
/// inside it, so that no two blocks share a piece. 0 where the layout is
/// not such a nest.
double countedStridedRead(const CanonicalLayout &layout, int64_t count,
                          int64_t granule);

/// A one-line description per segment, for --emit=explain and tests.
std::string describeLayout(const CanonicalLayout &layout);

} // namespace ddtc

#endif // DDTC_CORE_CANONICALLAYOUT_H
