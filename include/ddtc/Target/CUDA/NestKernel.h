//===- NestKernel.h - The generic kernel of strided nests -------*- C++ -*-===//
//
// A kernel whose code depends only on its access width: every count, stride
// and offset of the nest it moves comes in its parameter struct, so it is
// compiled once, with the library, and moves any layout that splits into a
// few strided nests, whatever their number of blocks. See docs/Compiler.md,
// "The nest kernel".
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_NESTKERNEL_H
#define DDTC_TARGET_CUDA_NESTKERNEL_H

#include "ddtc/Core/CanonicalLayout.h"
#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ddtc {

/// The levels a nest kernel walks, the level of the instances included.
constexpr int kNestMaxLevels = 8;
/// The most nests (so kernel launches per call) a layout may split into for
/// the nest kernel to serve it.
constexpr int kNestMaxNests = 16;

/// One level of a nest: `count` steps, each `srcStride` bytes in the origin
/// and `packedStride` bytes in the packed stream.
struct NestLevel {
  int64_t count;
  int64_t srcStride;
  int64_t packedStride;
};

/// Blocks of `length` bytes: for every index of `levels` (within one
/// instance, outermost first), the block at origin offset srcBase +
/// sum(i * srcStride) and packed position packedBase + sum(i *
/// packedStride). Packed positions ascend with the index, and each level's
/// packed stride covers the packed span of the levels inside it.
struct Nest {
  int64_t srcBase = 0;
  int64_t packedBase = 0;
  int64_t length = 0;
  std::vector<NestLevel> levels;
  /// The widest access (1 to 16 bytes) every block start allows on both
  /// sides when the buffers are aligned to it and no wider than the block.
  int width = 1;
};

/// Splits one instance of `layout` into nests, one per run of each
/// segment's nest points, in pack order. Fails with `why` set when it needs
/// more than kNestMaxNests nests or a segment has more than
/// kNestMaxLevels - 1 dimensions.
bool splitIntoNests(const CanonicalLayout &layout, std::vector<Nest> &out,
                    std::string &why);

/// Whether the nest kernels `nests` (splitIntoNests of plan.layout) move
/// `plan`'s layout faster than its own kernels: a record period kernel
/// (which stages a period of records at a time in shared memory) of a
/// single run per point whose every nest moves whole aligned words of 4
/// bytes or more, one plain copy each. On an H200 the nest kernels took
/// 0.80 of the period kernels' time to pack three floats of every four and
/// of every five, 0.85 to unpack them
/// (bench/results/2026-11-29-NVIDIA-H200-generic-kernels).
bool nestsBeatPlan(const KernelPlan &plan, const std::vector<Nest> &nests);

/// The one nest of a layout of `size` packed bytes whose blocks follow each
/// other in the packed stream, in the order of their index (one segment of
/// one run that fills its point: vectors, subarrays, contiguous arrays,
/// records without gaps inside), or null. The instances of such a layout
/// extend the nest by one level, so any range of their packed stream maps
/// to origin offsets by dividing alone: the copy kernel needs no table.
const Nest *streamNest(const std::vector<Nest> &nests, int64_t size);

/// One side of a copy: the stream nest of a layout of `size` packed bytes
/// and `count` instances `extent` apart.
struct NestSide {
  const Nest *nest = nullptr;
  int64_t size = 0;
  int64_t extent = 0;
  int64_t count = 0;
};

/// The launch of <prefix>_copy that moves packed bytes [lo, hi) from the
/// instances of `src` to where those of `dst` hold them (the range must lie
/// in both streams). At most `maxBlocks` blocks (0: as many as needed).
LaunchConfig computeNestCopyLaunch(const NestSide &src, const NestSide &dst,
                                   int64_t lo, int64_t hi, int64_t maxBlocks);

/// Rows a copy engine moves in one call (cuMemcpy3D): `depth` planes of
/// `height` rows of `width` bytes, from the source origin's offset
/// `srcOffset` on, rows `srcPitch` bytes apart and planes `srcRowsPerPlane`
/// rows of that pitch apart (0 when depth is 1); the same in the
/// destination. They are the packed bytes [lo, hi) of the copy.
struct RowBlock {
  int64_t lo = 0, hi = 0;
  int64_t srcOffset = 0, dstOffset = 0;
  int64_t width = 0, height = 0, depth = 1;
  int64_t srcPitch = 0, srcRowsPerPlane = 0;
  int64_t dstPitch = 0, dstRowsPerPlane = 0;
};

/// Packed bytes [lo, hi) of a copy between `src` and `dst`
/// (computeNestCopyLaunch's sides) as blocks of rows for a copy engine:
/// both sides' blocks are rows of one length of at least `minRow` bytes,
/// each side at most two levels apart (rows, then planes: levels that
/// continue each other count as one) with the same rows per plane. Sets
/// `rows` (at most three blocks: the rest of a first plane, whole planes,
/// the start of a last one) and the packed range [rowsLo, rowsHi) they
/// cover; the edges of [lo, hi) outside it cut a row and are left to the
/// copy kernel. False, nothing set, when the layouts are not such rows.
bool splitIntoRowBlocks(const NestSide &src, const NestSide &dst, int64_t lo,
                        int64_t hi, int64_t minRow, std::vector<RowBlock> &rows,
                        int64_t &rowsLo, int64_t &rowsHi);

/// The kernel shape of the nest kernels of `width`, as kernelShapeKey names
/// the others' ("nest.w8"), and their symbol prefix ("ddtc_nest_w8").
std::string nestShapeKey(int width);
std::string nestKernelPrefix(int width);

/// The CUDA C++ of the nest kernels of `width` (1, 2, 4, 8 or 16):
///   <prefix>_pack(const unsigned char *origin, unsigned char *packed,
///                 <prefix>_params p, const long long *unused)
///   <prefix>_unpack(unsigned char *origin, const unsigned char *packed,
///                   <prefix>_params p, const long long *unused)
///   <prefix>_copy(const unsigned char *src, unsigned char *dst,
///                 <prefix>_copy_params p, const long long *unused)
/// with the four arguments of the work-unit kernels (the last is unused), so
/// that one launch path serves both. Like emitCUDA's, the source includes
/// nothing and may be concatenated with other kernels' sources.
EmittedKernels emitNestKernels(int width);

/// The launch that moves packed bytes [lo, hi) of `count` instances of a
/// layout (`size` packed bytes, `extent` apart) that falls in `nest`: grid
/// 0 when none does. At most `maxBlocks` blocks (0: as many as needed).
LaunchConfig computeNestLaunch(const Nest &nest, int64_t size, int64_t extent,
                               int64_t count, int64_t lo, int64_t hi,
                               int64_t maxBlocks);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_NESTKERNEL_H
