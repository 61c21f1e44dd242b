//===- CUDAEmitter.h - CUDA C++ pack/unpack kernels from a plan ---*- C++ -*-===//
//
// Prints the pack and unpack kernels of a kernel plan as CUDA C++ and
// computes the launch (grid, block, kernel arguments) of one call. The plan's
// passes chose the family, the access width, the work units and the
// transpose tiles (TileKernel.h); the emitter only picks, per direction,
// which strided kernel design to write (stridedVariant) for a
// strided plan without tiles.
//
// What is baked into the source and what is passed at launch is split so that
// layouts of one shape (same family, width, byte-path flag, kernel variants,
// number of segments and dimensions per segment) share one compiled kernel:
// every count, stride, offset, size and extent travels in a parameter struct
// passed by value. See docs/Compiler.md, "Kernel families and arguments".
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_CUDAEMITTER_H
#define DDTC_TARGET_CUDA_CUDAEMITTER_H

#include "ddtc/Core/KernelPlan.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ddtc {

/// The packed bytes one thread of a gather strided kernel takes per
/// grid-stride step: that many / 16 chunks of 16 bytes, located once and
/// walked.
constexpr int64_t kStridedGroupBytes = 16;

/// Chunks a thread of a Gather kernel of long runs moves per step, their
/// loads issued together (stridedBatch), and the shortest run for it. On an
/// H200, two chunks took the pack of 256 B-64 KiB blocks at a 4-byte offset
/// from 0.81-0.90 of memcpy to 0.88-0.93 and the cube interior from 0.86 to
/// 0.94; four gained less; 4-8 B blocks lost (0.51 → 0.40).
constexpr int64_t kStridedBatch = 2;
constexpr int64_t kBatchMinRun = 128;

/// Run lengths, [kFillMinRun, kFillMaxRun) bytes, whose first and last
/// 32-byte sectors the wide and gather unpack kernels prefetch into L2 before
/// storing, where the run starts or ends inside the sector (docs/Compiler.md,
/// "Partial sectors filled ahead"): shorter runs share their sectors with
/// their neighbours, and in longer ones the prefetch costs more than it saves.
constexpr int64_t kFillMinRun = 32;
constexpr int64_t kFillMaxRun = 2048;

/// The two designs of a strided kernel (docs/Compiler.md, "The strided
/// family").
enum class StridedVariant {
  /// One chunk of the plan's width per thread, moved with one access of
  /// that width when it lies aligned in one run, byte by byte otherwise.
  Wide,
  /// One 16-byte chunk of the packed stream per thread, aligned in the
  /// packed buffer, gathered from (scattered to) the runs with aligned
  /// 16-byte accesses.
  Gather,
  /// Unpack only: one 16-byte vector of the destination per thread, aligned
  /// in the destination and clipped to one run; its bytes are loaded from
  /// the packed buffer at any alignment (two aligned loads and a funnel
  /// shift). For runs whose place modulo 16 varies from run to run, where a
  /// Gather chunk would be stored in up to three narrow pieces.
  RunAligned,
  /// Pack only, of dense records (isWindowPlan, WindowKernel.h): a block
  /// reads the records' side of its 16-byte chunks into a shared window
  /// with aligned 16-byte loads.
  Window,
};

/// The name of a variant in banners and messages: "wide", "gather",
/// "run-aligned", "window".
const char *getStridedVariantName(StridedVariant variant);

/// The shortest run for which the unpack kernel of a width-1 plan is
/// RunAligned: a run of L bytes gets (L + 14) / 16 + 1 destination vectors,
/// the most it can touch, so short runs would leave many threads without
/// bytes.
constexpr int64_t kRunAlignedMinRun = 32;

/// Runs shorter than this (plans of width 4 to 8) are unpacked by the
/// Wide kernel, one word per thread; from it on by the Gather kernel, whose
/// threads store the words of a 16-byte chunk with one predicated store each
/// (faster on an H200 from 64-byte runs: CUDAEmitter.cpp, stridedVariant).
constexpr int64_t kWideUnpackMaxRun = 64;

/// The destination vectors the RunAligned unpack kernel gives each run.
int64_t runAlignedSlots(int64_t runLength);
/// Whether every run of a RunAligned plan (one run per point) starts at the
/// same place modulo 16, its strides and extent being multiples of 16: its
/// kernel then gives each run runAlignedSlots - 1 vectors where that place
/// leaves the last one out (shape key `-runs16`).
bool runAlignedPhaseUniform(const KernelPlan &plan);

/// The variant of the pack (`pack`) or unpack kernel of a strided plan
/// (Gather for the units family, whose kernels have only one design). Window
/// for pack when isWindowPlan (dense records, WindowKernel.h); the unpack
/// kernel's variant is then chosen as if the pack's were what it would be
/// without windows. Otherwise Wide
/// for pack when the plan needs no byte path and either its width is 16 or
/// its width is at least 4 and no run is longer than two accesses; Wide for
/// unpack unless the plan needs a byte path, its width is below 4, its
/// width is below 16 and some run is kWideUnpackMaxRun bytes or longer, or
/// the unpack kernel aligns its chunks to the destination
/// (stridedUnpackPhase). A plan whose pack kernel is Wide has a Wide unpack
/// kernel too. The unpack kernel is RunAligned when the pack kernel is
/// Gather, the width is 1, the phase is not uniform, and the layout is one
/// segment (one run length) of runs of at least kRunAlignedMinRun bytes.
StridedVariant stridedVariant(const KernelPlan &plan, bool pack);

/// Stores cost more than loads, so a Gather unpack kernel would rather align
/// its 16-byte chunks to the destination than to the packed buffer. It can
/// when the phase is uniform: every packed byte k of the stream lies at an
/// origin offset congruent to k + phase modulo 16 (the strides, the segment
/// bases and extent - size agree with the packed offsets modulo 16), and
/// runs are long enough (>= 32 bytes) for most aligned destination vectors
/// to lie inside one run. Returns that phase (0-15), or -1 when the plan is
/// not strided, its width is 16 already, its pack kernel is Wide, or the
/// phase is not uniform: then the chunks stay aligned in the packed buffer.
int64_t stridedUnpackPhase(const KernelPlan &plan);

/// The packed bytes of one launched chunk of a strided plan (the pack
/// kernel's: its width when Wide, kStridedGroupBytes when Gather), and
/// whether the launch takes one chunk more than ceil(hi / bytes) - lo /
/// bytes (Gather: its chunks are aligned in the packed buffer, up to 15
/// bytes before their place in the stream).
int64_t stridedLaunchChunkBytes(const KernelPlan &plan);
/// Chunks a thread of the Gather kernels moves per step of its loop, all
/// their loads issued before any store: kStridedBatch when both kernels are
/// Gather and no run is shorter than kBatchMinRun, else 1. Whole chunks are
/// loaded together; a chunk cut by a run's end or the call's bounds takes
/// the one-chunk path. Measured on an H200 (docs/Performance.md, "Batched
/// loads"): with one load in flight a thread, the kernels' integer work left
/// memory idle between loads.
int64_t gatherBatch(const KernelPlan &plan);
/// The chunks per thread of a strided plan's launch in one direction, which
/// has that many times fewer threads: for the pack kWindowChunks with a
/// window pack (WindowKernel.h), else gatherBatch; for the unpack
/// gatherBatch. A window plan's unpack kernels get a launch of their own:
/// taking the window's four chunks a thread cost them 3-12% on an H200.
int64_t stridedBatch(const KernelPlan &plan, bool pack);
/// Whether a strided plan of width 4 has no run longer than two words (and
/// no byte path): its gather pack kernel then loads the words of a whole
/// chunk of such runs of one row together (shape key `.short`).
bool shortWordRuns(const KernelPlan &plan);
bool stridedLaunchExtraChunk(const KernelPlan &plan);
/// Whether the unpack kernel of a plan fills partial sectors ahead for some
/// of its runs: a strided plan without tiles whose unpack kernel is Wide or
/// Gather and one of whose runs is kFillMinRun to kFillMaxRun bytes long.
bool unpackFillsSectors(const KernelPlan &plan);

/// Each of these macros, when defined (-D), leaves one kernel out of
/// EmittedKernels::source: NVRTC then compiles the other alone, to the same
/// machine code as beside it, in about half the time of both. The runtime
/// compiles a shape's two kernels as two programs at once.
inline constexpr const char *kSkipPackMacro = "DDTC_SKIP_PACK_KERNEL";
inline constexpr const char *kSkipUnpackMacro = "DDTC_SKIP_UNPACK_KERNEL";

/// The CUDA C++ of one plan's kernels.
struct EmittedKernels {
  /// The translation unit to compile: depends only on the plan's shape
  /// (kernelShapeKey) and the symbol prefix, never on sizes, strides or
  /// offsets. It includes no header (NVRTC and g++ through CPUEmulation.h
  /// both compile it unchanged) and may be concatenated with the source of
  /// other prefixes into one file.
  std::string source;
  /// A comment naming the layout and the plan the source was emitted for
  /// (with their values): prepended for display, left out of cache keys.
  std::string banner;
  /// extern "C" names of the kernels and the name of their parameter struct.
  std::string packName, unpackName, paramsName;
  /// The kernels take the unit table (encodeUnitTable) as a fourth argument.
  bool takesUnits = false;

  /// The banner followed by the source: what `ddtc --emit=cuda` prints.
  std::string text() const { return banner + source; }
};

/// Emits the pack and unpack kernels of `plan`, named `<prefix>_pack` and
/// `<prefix>_unpack`. `symbolPrefix` must be a C identifier. The plan must
/// be one the planning passes produce: a width of 1, 2, 4, 8 or 16, and in
/// the strided family one run per nest point in every segment.
///
/// Both kernels move the packed bytes [lo, hi) of `count` consecutive
/// instances (instance i starts i * extent bytes from the origin):
///   pack(const unsigned char *origin, unsigned char *packed, P params
///        [, const long long *units])
///   unpack(unsigned char *origin, const unsigned char *packed, P params
///          [, const long long *units])
/// where `origin` is the address of displacement 0 of instance 0, packed[0]
/// is packed byte lo, and P is the struct named paramsName whose members are
/// LaunchConfig::params in order. Each destination byte is written exactly
/// once and never read, so the destination may be mapped host memory. Any
/// grid size is correct (grid-stride loops).
EmittedKernels emitCUDA(const KernelPlan &plan, const std::string &symbolPrefix);

/// What emitCUDA bakes into the source, as a short string: plans with equal
/// keys get identical sources for the same prefix.
std::string kernelShapeKey(const KernelPlan &plan);

/// The launch of one call of a kernel emitted for the same plan.
struct LaunchConfig {
  /// Blocks of the one-dimensional grid; 0 when there is nothing to move
  /// (or the arguments are invalid: see error).
  int64_t grid = 0;
  /// Threads per block (a multiple of 32).
  int64_t block = 0;
  /// The parameter struct, member by member (each a 64-bit integer, so the
  /// vector's bytes are the struct's bytes): the third kernel argument.
  std::vector<int64_t> params;
  /// Whether the kernel takes the unit table as its fourth argument.
  bool takesUnits = false;
  /// Set when lo, hi or count are out of range.
  std::string error;
};

/// The grid of `blocks` blocks capped at `maxBlocks` (0: no cap) and at the
/// hardware's limit of 2^31 - 1.
int64_t cappedGrid(int64_t blocks, int64_t maxBlocks);

/// Which kernels of a units plan a launch is for.
enum class UnitsKernels {
  /// The ones emitted for the plan (unitsByChunks decides).
  Planned,
  /// The chunk kernels (a 16-byte chunk a thread) whatever the length of
  /// the plan's units: the runtime packs into mapped host memory with the
  /// generic ones, whose long sequential stores suit the host's link.
  Chunks,
};

/// Computes the grid, block and parameters that move packed bytes [lo, hi)
/// of `count` instances with the kernels emitted for `plan`, with at most
/// `maxBlocks` blocks (0: as many as the work needs, up to the hardware
/// limit of 2^31 - 1), with the pack kernel or the unpack kernel. The
/// parameters are the same both ways; the grid may differ (stridedBatch).
/// Either kernel is correct with any grid. `unitsKernels` matters for units
/// plans only.
LaunchConfig computeLaunch(const KernelPlan &plan, int64_t count, int64_t lo,
                           int64_t hi, int64_t maxBlocks, bool pack = true,
                           UnitsKernels unitsKernels = UnitsKernels::Planned);

/// One member of the parameter struct of a plan's kernels.
struct ParamMember {
  /// Its name in the emitted struct, e.g. "s0_len_mul".
  std::string name;
  /// What it holds (empty for a divisor's multiplier and shift).
  std::string comment;
  /// Its value in every call, unless perCall is set (then 0).
  int64_t value = 0;
  /// Whether it depends on the call (count, lo, hi): lo, hi, the first
  /// and last chunk or item, and a Gather kernel's source bounds. Every other member is a property of the plan,
  /// the magic divisors included.
  bool perCall = false;
};

/// The members of the parameter struct of `plan`'s kernels, in order: what
/// computeLaunch fills into LaunchConfig::params. For code that computes
/// launches without this library (the generated header).
std::vector<ParamMember> describeParams(const KernelPlan &plan);

/// The origin offsets of the first byte `count` instances of `layout` hold
/// and past their last (their true bounds, saturated to int64): a Gather
/// pack kernel reads nothing outside them (src_lo, src_hi).
void callSourceBounds(const CanonicalLayout &layout, int64_t count,
                      int64_t &lo, int64_t &hi);

/// The unit table the Units kernels read (copy it to device memory once per
/// plan): four 64-bit integers per work unit, {packed, src, length, wide},
/// then plan.unpackUnits the same way when it has any (the unpack's table in
/// destination order, parameter `dest_order`). plan.units lies in memory as
/// these words already: this copy is for code that wants them as integers.
std::vector<int64_t> encodeUnitTable(const KernelPlan &plan);

/// Division by a divisor known at launch, for numerators 0 <= n < 2^63:
/// n / divisor == mulhi64(n, mul) >> shift, and n itself when mul == 0
/// (divisor 1). Kernels divide this way instead of with 64-bit division.
struct MagicDivisor {
  int64_t divisor = 1;
  int64_t mul = 0; ///< the multiplier's bits, as unsigned
  int64_t shift = 0;
};
/// The multiplier and shift for `divisor` (>= 1; any other value gives the
/// identity, which the kernels never use).
MagicDivisor makeMagicDivisor(int64_t divisor);
/// What a kernel computes: n / d.divisor for 0 <= n < 2^63.
int64_t applyMagicDivisor(int64_t n, const MagicDivisor &d);

/// The CUDA type of one access of `width` bytes (16, 8, 4, 2; any other
/// width is one byte), shared by every kernel source the library prints.
const char *cudaAccessType(int64_t width);
/// Prints the opening of a pack (`pack`) or unpack kernel up to its
/// parameter struct: `extern "C" __global__ void`, `bounds` (launch bounds
/// and a space, or nothing), `<prefix>_pack(` or `<prefix>_unpack(` and the
/// origin and packed pointers, one a line, the source const.
void printKernelHead(std::ostream &os, const std::string &prefix, bool pack,
                     const std::string &bounds = "");

/// The unsigned integer of `width` bytes (2, 4 or 8), for accesses whose
/// value is shifted into or out of a 16-byte chunk (cudaAccessType's 8-byte
/// type, uint2, is a vector, which does not shift).
const char *cudaWordType(int64_t width);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_CUDAEMITTER_H
