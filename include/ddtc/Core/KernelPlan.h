//===- KernelPlan.h - How a kernel moves a canonical layout -----*- C++ -*-===//
//
// The kernel-plan level: the canonical layout plus the decisions a kernel
// needs (access width, work units, thread mapping). Passes fill it in
// (stair balancing, alignment prologues); the CUDA emitter only prints it.
//===----------------------------------------------------------------------===//

#ifndef DDTC_CORE_KERNELPLAN_H
#define DDTC_CORE_KERNELPLAN_H

#include "ddtc/Core/CanonicalLayout.h"
#include "ddtc/Core/TableAllocator.h"

#include <type_traits>

namespace ddtc {

/// A piece of one instance handled by one warp in the generic kernel: copy
/// `length` bytes between packed position `packed` and source offset `src`
/// (both relative to the instance). `wide` is 1 when src and packed are
/// both multiples of the plan's width and length is too, so the whole unit
/// moves with width-byte accesses, else 0. It is a 64-bit word like the
/// others so that a plan's units lie in memory as the unit table the Units
/// kernels read (four words per unit, see encodeUnitTable): a runtime
/// uploads plan.units as they are, with no table to build.
struct WorkUnit {
  int64_t packed;
  int64_t src;
  int64_t length;
  int64_t wide;
  bool operator==(const WorkUnit &o) const {
    return packed == o.packed && src == o.src && length == o.length &&
           wide == o.wide;
  }
};
static_assert(sizeof(WorkUnit) == 4 * sizeof(int64_t) &&
                  std::is_standard_layout_v<WorkUnit>,
              "a work unit is the unit table's four words");

/// A plan's work units, the unit table as it is uploaded.
using UnitTable = TableVector<WorkUnit>;

enum class KernelFamily : uint8_t {
  /// Every segment is a strided nest of at most kMaxPointRuns runs per nest
  /// point: each thread maps its chunk of the packed stream to a source
  /// address with div/mod on the dimensions (and a search of the point's
  /// few runs).
  Strided,
  /// A work-unit table (one warp per unit), for any layout.
  Units,
};

/// The most runs per nest point a strided plan may have: a record's fields
/// (a struct sending some of its members, a small triangle, an indexed
/// block pattern repeated). The kernels find a byte's run among them with a
/// chain of comparisons, so the plan stays the same size however many
/// points the nest has. Where some segment is such a record, the bound is on
/// the runs per point of all the layout's segments together, so that the
/// chains and the parameter struct stay short (a layout of many record
/// segments would otherwise carry thousands of parameter words). Layouts
/// over it take the units family. (The generic nest kernel serves a
/// strided layout with one nest per run: kNestMaxNests.)
constexpr int64_t kMaxPointRuns = 16;

/// Records of at least this many runs per point, of 4- or 8-byte words (an
/// access width of 4 or more), whose instance has at most
/// kUnitsRecordMaxRuns runs, are units plans (recordAsUnits): their work
/// units are short, so a 16-byte chunk a thread, which on an H200 packed
/// records of 8-16 runs of ints and doubles 1.3-2x faster than the strided
/// kernels' search of the point's runs, and unpacked them as fast or up to
/// 1.5x faster (16 runs of 1-16 ints: 2.6x).
constexpr int64_t kUnitsRecordMinRuns = 8;
constexpr int64_t kUnitsRecordMaxRuns = int64_t(1) << 16;

/// Whether a layout of records is planned as units at access width
/// `width` (kUnitsRecordMinRuns).
bool recordAsUnits(const CanonicalLayout &layout, int64_t width);

/// The most segments of one run per point a strided plan has. Each chunk's
/// locate compares its byte with every segment's end (a struct of 20
/// vectors of single doubles still packed at the traffic limit on an H200),
/// but the parameter struct grows by 6 or more words a segment and the
/// compile faster than the segments: a struct of 16, 64 and 600 vectors had
/// 103, 391 and 3607 parameter words and compiled in 0.38, 2.1 and 264 s on
/// a 2-core build machine, and about 680 would pass the 32764 bytes of
/// parameters a CUDA kernel takes. A layout of more segments is a units plan
/// where a unit table can list its runs (kMaxTableRuns); otherwise it has no
/// plan.
constexpr int64_t kMaxStridedSegments = 256;

/// Whether some segment of `layout` has several runs per nest point (a
/// record).
bool hasRecords(const CanonicalLayout &layout);

/// Whether the strided family moves `layout`: every segment has one run per
/// nest point and there are at most kMaxStridedSegments segments (or more,
/// whose runs a unit table could not list: planning then fails), or all
/// segments together have at most `maxPointRuns` runs per point (up to
/// kMaxPointRuns).
bool fitsStridedFamily(const CanonicalLayout &layout,
                       int64_t maxPointRuns = kMaxPointRuns);

/// The name of a kernel family in the IR and in messages: "strided", "units".
const char *getKernelFamilyName(KernelFamily family);

struct KernelPlan {
  CanonicalLayout layout;
  KernelFamily family = KernelFamily::Units;
  /// Bytes per access (1, 2, 4, 8 or 16), proven safe for the body of every
  /// run when the buffers are aligned to it.
  int64_t width = 1;
  /// Strided family: whether some chunk of `width` bytes can straddle two
  /// runs or start unaligned (then the kernel keeps a byte-wise path).
  bool needsBytePath = true;
  /// Units family: the work units of one instance, in packed order, each at
  /// most unitBytes long (stair balancing). Before stair balancing: the
  /// prologue, body and epilogue pieces of every run (alignAccesses).
  UnitTable units;
  int64_t unitBytes = 0;
  /// Units family: the same units in the order of their origin offsets, for
  /// unpacks of whole instances, where writing in packed order would scatter
  /// short stores (orderUnpackUnits in UnitsChunkKernel.h; each unit's
  /// `packed` is its place in that order, `wide` its packed offset). Empty
  /// when that order gains nothing or nobody asked: the unpack then reads
  /// `units`. Derived from `units`, so neither the IR nor the plan cache
  /// keeps it.
  UnitTable unpackUnits;
  /// Strided family: the dimension of the single segment along which
  /// consecutive elements are close in memory while the innermost dimension
  /// (consecutive in the packed stream) is far apart; the kernels then move
  /// kTileElems x kTileElems tiles of elements through shared memory
  /// (detectTransposeTiles). -1: no tiles.
  int tileDim = -1;
  /// Threads per CUDA block the launcher uses.
  int threadsPerBlock = 256;
  /// What the passes did, for --emit=explain.
  std::vector<std::string> notes;
};

/// 16-byte chunks each lane of a warp moves per work unit, all loaded before
/// any is stored: long enough to hide the memory's latency, short enough
/// that a triangle's short columns do not leave warps idle for long.
constexpr int64_t kChunksPerLane = 4;

/// The length of a work unit: a warp's lanes each move kChunksPerLane
/// 16-byte chunks, whatever the width, unless the instance is so large that
/// it would need more than kMaxCutUnits units (then units double in length
/// until it does not). Units of 32 x width x 4 bytes (1 KiB of doubles, 512
/// bytes of floats), a chunk a lane per step, waited for the memory once per
/// step: on an H200 the triangles of floats packed at 0.70 of memcpy.
constexpr int64_t kUnitBytes = 32 * 16 * kChunksPerLane;

/// The most units the cutting of long pieces adds for one instance: a long
/// run is a few long units that their warps loop over, not one unit per
/// kUnitBytes, so planning never grows with the bytes.
constexpr int64_t kMaxCutUnits = int64_t(1) << 18;

/// A plan for `layout` with width 1, the units family and no work units:
/// the starting point the planning passes refine.
KernelPlan makeInitialPlan(const CanonicalLayout &layout);

/// Lists in plan.units, for every run of one instance in packed order, its
/// prologue up to the first source byte aligned to plan.width, its wide body
/// and its epilogue (pieces with no length limit yet). Fails with `error`
/// set, leaving the plan alone, when the instance has more than
/// kMaxTableRuns runs. Returns the number of runs that got a prologue or an
/// epilogue through `split`.
bool listPieces(KernelPlan &plan, int64_t &split, std::string &error);

/// Cuts the pieces of plan.units into work units of plan.unitBytes (which
/// it sets: kUnitBytes, doubled while the instance would
/// need more than `maxCutUnits` units) and sets the units family. The units
/// number at most the pieces plus maxCutUnits. (Tests pass a small
/// maxCutUnits to get long units from small types.)
void cutWorkUnits(KernelPlan &plan, int64_t maxCutUnits = kMaxCutUnits);

/// A Units-family plan of `layout` whatever family the planning passes would
/// pick for it: its runs (one instance, pack order) split into a prologue, a
/// wide body and an epilogue at the access width alignAccesses proves
/// (listPieces), then cut into work units (cutWorkUnits). What the generic
/// kernels and ddtc_copy's units copy run. Fails with `error` set, leaving
/// `out` alone, when the layout has too many runs to list.
bool planWorkUnits(const CanonicalLayout &layout, KernelPlan &out,
                   std::string &error);

/// Runs shorter than this keep a strided plan at the width their own
/// offsets, lengths and strides allow (at least 4) rather than the wider one
/// their distance to the packed stream allows, whose chunks would often
/// straddle two runs and take the byte path (alignAccesses).
constexpr int64_t kWordWidthMaxRun = 256;

/// Alignment prologues: proves the widest access (16, 8, 4, 2, 1 bytes) that
/// the layout's offsets, strides and run lengths allow for the bulk of the
/// bytes. Unless the layout fits the strided family with at most
/// `maxPointRuns` runs per nest point (fitsStridedFamily), it lists the
/// pieces of every run (listPieces), which makes the plan a units plan.
/// Fails with `error` set when the layout has too many runs to list.
bool alignAccesses(KernelPlan &plan, std::string &error,
                   int64_t maxPointRuns = kMaxPointRuns);

/// Stair balancing: picks the strided family when alignAccesses listed no
/// pieces (the layout fits it); otherwise cuts the pieces into work units
/// of equal size (cutWorkUnits; the last unit of a piece may be shorter), so
/// no warp idles on a long run while others finish short ones. Returns whether
/// it changed the plan.
bool balanceWorkUnits(KernelPlan &plan);

/// Elements along each side of a transpose tile: one warp's accesses along
/// either side are 32 consecutive elements.
constexpr int64_t kTileElems = 32;

/// Transpose tiles: in a strided plan of one segment whose run is one small
/// element (at most 16 bytes, moved with aligned accesses), finds a
/// dimension along which elements are close in memory (stride 1 to 4
/// elements) while the innermost dimension, consecutive in the packed
/// stream, is far apart, and sets plan.tileDim to it, or -1. Chosen when the
/// tile at least doubles the share of each 32-byte sector that the scattered
/// side of the copy uses (docs/Compiler.md, "Transpose tiles"). Returns
/// whether it changed the plan.
bool detectTransposeTiles(KernelPlan &plan);

/// What planKernel does beyond the fixed passes.
struct PlanOptions {
  /// Run detectTransposeTiles (the runtime's DDTC_TILES=0 turns it off).
  bool tiles = true;
  /// The most runs per nest point a strided plan with records may have, in
  /// all its segments (fitsStridedFamily; 1 keeps every record in the units
  /// family).
  int64_t maxPointRuns = kMaxPointRuns;
};

/// The whole pipeline: lower, detect vectors, align, balance, transpose
/// tiles. Fails with `error` set when the type needs a table over
/// kMaxTableRuns runs.
bool planKernel(const Datatype &type, KernelPlan &plan, std::string &error,
                const PlanOptions &options = PlanOptions());

} // namespace ddtc

#endif // DDTC_CORE_KERNELPLAN_H
