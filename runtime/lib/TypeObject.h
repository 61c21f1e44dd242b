//===- TypeObject.h - What a ddtc_type holds --------------------*- C++ -*-===//
//
// A type's tree, its kernel plans once committed (the specialized plan of the
// planning passes, and what the generic kernels run: the nests of a strided
// layout, else a work-unit plan), the
// cache entries of its specialized kernels per architecture, and per CUDA
// context its loaded kernels and uploaded work-unit tables.
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_TYPEOBJECT_H
#define DDTC_RUNTIME_TYPEOBJECT_H

#include "DeviceContext.h"
#include "KernelCache.h"

#include "ddtc/Core/Datatype.h"
#include "ddtc/Target/CUDA/NestKernel.h"

namespace ddtc::rt {

struct ArchKernels {
  int arch = 0;
  std::shared_ptr<KernelEntry> entry;
  bool memoryHit = false; ///< the entry existed when the type asked for it
};

/// The kernels a commit took, and the architecture they are for.
struct KnownKernels {
  int arch = 0;
  std::shared_ptr<KernelEntry> entry;
};

struct TypeOnContext {
  DeviceContext *dc = nullptr;
  cu::CUdeviceptr specializedTable = 0, genericTable = 0;
  /// The unit table of `copyUnits` (ddtc_copy), when the type has one.
  cu::CUdeviceptr copyTable = 0;
  const LoadedModule *specialized = nullptr, *generic = nullptr;
  /// The nest kernels, by access width (index log2 of it).
  const LoadedModule *nest[5] = {};
  const ArchKernels *kernels = nullptr;
  /// The specialized kernels could not be loaded here: the generic ones
  /// serve the type (when there are).
  bool specializedUnusable = false;
  /// Whether the nest kernels serve the type better than its own (-1: not
  /// decided yet; TypeObject.cpp, nestsServeBetter).
  signed char nestsBetter = -1;
};

} // namespace ddtc::rt

struct ddtc_type_s {
  ddtc::TypeRef type;
  std::string name;

  std::mutex m;
  std::atomic<bool> committed{false};
  /// Everything below is set by the commit, under `m`.
  bool empty = false; ///< no data: no kernel needed
  int commitArch = 0;
  /// The planning passes' plan; shared by every handle of an equal tree.
  /// A Units plan's units are its unit table (uploaded as they are).
  std::shared_ptr<const ddtc::KernelPlan> specialized;
  /// What the generic kernels run, made on first need: for a strided plan,
  /// its nests (the nest kernels, no table); else the work-unit plan,
  /// `specialized` itself when that is a Units plan. Neither when the layout
  /// splits into too many nests and has too many units.
  bool genericTried = false;
  std::shared_ptr<const std::vector<ddtc::Nest>> nests;
  std::shared_ptr<const ddtc::KernelPlan> generic;
  /// A work-unit plan made for ddtc_copy between two buffers of this type
  /// map where `generic` is none (a strided type: its nests), on first need.
  bool copyUnitsTried = false;
  std::shared_ptr<const ddtc::KernelPlan> copyUnits;
  std::vector<std::unique_ptr<ddtc::rt::ArchKernels>> kernels;
  /// The first entry of `kernels`, made with the handle (newTypeHandle).
  std::unique_ptr<ddtc::rt::ArchKernels> spareKernels;
  std::vector<ddtc::rt::TypeOnContext> contexts;
  /// The type shifted by i bytes (1-15), made for calls whose origin lies i
  /// bytes past a 16-byte boundary where the type's kernels need more
  /// alignment (alignmentVariant); under `m`. A variant has none itself.
  std::unique_ptr<ddtc_type_s> shifted[16];
  /// Bit i: the variant for offset i could not be made; calls from such
  /// origins take the type's own kernels without planning it again.
  std::atomic<uint16_t> variantsFailed{0};
  bool isVariant = false;
};

namespace ddtc::rt {

/// A new handle of `tree` (ddtc_type_from_spec's and ddtc_type_from_mpi's):
/// uncommitted, nothing planned. Inline because
/// libddtc-mpi-import, which makes handles of the trees it imports, reaches
/// libddtc through its C API only; the two are built from the same sources.
inline std::unique_ptr<ddtc_type_s> newTypeHandle(TypeRef tree,
                                                  std::string name) {
  auto t = std::make_unique<ddtc_type_s>();
  t->type = std::move(tree);
  t->name = std::move(name);
  // A commit of a tree seen before allocates nothing: what it fills comes
  // with the handle. (Right after the parse of a large spec, the
  // allocator's lists are out of the caches: two allocations took the
  // commit from about 1.5 to 2.5 us.)
  t->kernels.reserve(1);
  t->spareKernels = std::make_unique<ddtc::rt::ArchKernels>();
  return t;
}

Status commitType(ddtc_type_s &t);
Status waitType(ddtc_type_s &t);
Status typeKernelInfo(ddtc_type_s &t, ddtc_kernel_info &info);
/// Packs (or unpacks) as ddtc_pack (ddtc_unpack) describes.
/// Whether ddtc_copy serves the pair: both committed, and each one strided
/// nest in pack order (streamNest) or both one type map whose work units
/// average 256 bytes or more. The error says which type fails and why.
Status copySupported(ddtc_type_s &src, ddtc_type_s &dst);
/// Whether ddtc_copy moves committed `t` between two buffers of its type
/// map in words of 4 bytes or more: a units copy of such a width, or a
/// nest copy whose blocks are words of 4 or more, or whose blocks 16 does
/// not divide (records: loaded as aligned 16-byte vectors around the
/// block, stored from registers).
bool copiesInWords(ddtc_type_s &t);

/// ddtc_copy: packed bytes [lo, hi) of `srcCount` instances of `src` at
/// `srcOrigin`, written where `dstCount` instances of `dst` at `dstOrigin`
/// hold them, by one launch of the nest kernels' copy.
Status runCopy(ddtc_type_s &src, const void *srcOrigin, int64_t srcCount,
               ddtc_type_s &dst, void *dstOrigin, int64_t dstCount, int64_t lo,
               int64_t hi, void *stream, int maxCtas);

Status runKernel(bool pack, ddtc_type_s &t, const void *origin, int64_t count,
                 int64_t lo, int64_t hi, const void *packed, void *stream,
                 int maxCtas);
/// For a caller that has asked the driver about its buffers already
/// (libddtc-mpi's transfers: it looked up the user's first byte when it took
/// the call, and the packed side is its own ring or mapping), the calling
/// thread's packs and unpacks within the scope skip the pointer checks of
/// DDTC_CHECK_POINTERS: two driver queries a call that a thread coming to
/// the call cold pays for in cache misses. The kinds that choose kernels
/// (a pack into host memory) are still asked.
class KnownPointers {
public:
  KnownPointers();
  ~KnownPointers();
  KnownPointers(const KnownPointers &) = delete;
  KnownPointers &operator=(const KnownPointers &) = delete;

private:
  bool outer_;
};
/// Whether the calling thread is within a KnownPointers scope.
bool pointersKnown();

/// Frees the type's device memory; the caller deletes it.
void releaseType(ddtc_type_s &t);

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_TYPEOBJECT_H
