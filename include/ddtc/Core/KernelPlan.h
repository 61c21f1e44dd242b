//===- KernelPlan.h - How a kernel moves a canonical layout -------*- C++ -*-===//
//
// The kernel-plan level: the canonical layout plus the decisions a kernel
// needs (access width, work units, thread mapping). Passes fill it in
// (stair balancing, alignment prologues); the CUDA emitter only prints it.
//===----------------------------------------------------------------------===//

#ifndef DDTC_CORE_KERNELPLAN_H
#define DDTC_CORE_KERNELPLAN_H

#include "ddtc/Core/CanonicalLayout.h"

namespace ddtc {

/// A piece of one instance handled by one warp in the generic kernel: copy
/// `length` bytes between packed position `packed` and source offset `src`
/// (both relative to the instance). `wide` is set when src and packed are
/// both multiples of the plan's width and length is too, so the whole unit
/// moves with width-byte accesses.
struct WorkUnit {
  int64_t packed;
  int64_t src;
  int64_t length;
  bool wide;
  bool operator==(const WorkUnit &o) const {
    return packed == o.packed && src == o.src && length == o.length &&
           wide == o.wide;
  }
};

enum class KernelFamily : uint8_t {
  /// Every segment is a strided nest: each thread maps its chunk of the
  /// packed stream to a source address with div/mod on the dimensions.
  Strided,
  /// A work-unit table (one warp per unit), for any layout.
  Units,
};

/// The name of a kernel family in the IR and in messages: "strided", "units".
const char *getKernelFamilyName(KernelFamily family);

struct KernelPlan {
  CanonicalLayout layout;
  KernelFamily family = KernelFamily::Units;
  /// Bytes per access (1, 2, 4, 8 or 16), proven safe for the body of every
  /// run when the buffers are aligned to it (see baseAlignment).
  int64_t width = 1;
  /// The alignment of the buffer pointers the width relies on; the launcher
  /// uses a width-1 launch for buffers aligned less.
  int64_t baseAlignment = 16;
  /// Strided family: whether some chunk of `width` bytes can straddle two
  /// runs or start unaligned (then the kernel keeps a byte-wise path).
  bool needsBytePath = true;
  /// Units family: the work units of one instance, in packed order, each at
  /// most unitBytes long (stair balancing).
  std::vector<WorkUnit> units;
  int64_t unitBytes = 0;
  /// Threads per CUDA block the launcher uses.
  int threadsPerBlock = 256;
  /// What the passes did, for --emit=explain.
  std::vector<std::string> notes;
};

/// A plan for `layout` with width 1, the units family and no work units:
/// the starting point the planning passes refine.
KernelPlan makeInitialPlan(const CanonicalLayout &layout);

/// Alignment prologues: proves the widest access (16, 8, 4, 2, 1 bytes) that
/// the layout's offsets, strides and run lengths allow for the bulk of the
/// bytes. For the units family it lists each run as pieces: a prologue up to
/// the first aligned source byte, a wide body, an epilogue (units with no
/// length limit yet). Returns whether it changed the plan.
bool alignAccesses(KernelPlan &plan);

/// Stair balancing: picks the strided family when every segment is a
/// strided nest; otherwise cuts the pieces into work units of equal size
/// (unitBytes, a multiple of 32 threads times the width; the last piece of a
/// run may be shorter), so no warp idles on a long run while others finish
/// short ones. Returns whether it changed the plan.
bool balanceWorkUnits(KernelPlan &plan);

/// The whole pipeline: lower, detect vectors, align, balance.
KernelPlan planKernel(const Datatype &type);

} // namespace ddtc

#endif // DDTC_CORE_KERNELPLAN_H
