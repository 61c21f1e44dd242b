//===- TypeCache.cpp - The ddtc type kept with each MPI datatype ----------===//
//
// A datatype is decoded once (at MPI_Type_commit, or at its first use with a
// device buffer) straight into a datatype tree, never through spec text, and
// kept as an attribute of the handle. MPI_Type_free drops the attribute's
// reference; operations in flight hold their own, so a type freed while its
// message is moving stays alive until the message is done. A type ddtc cannot
// represent or plan keeps an info without a ddtc type: its buffers are then
// staged through host memory for the MPI library's own datatype engine.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include "TypeObject.h"
#include "ddtc/MPI/MPIBridge.h"

#include <map>

namespace ddtc::mpi {
namespace {

int keyval = MPI_KEYVAL_INVALID;
std::mutex typeMutex;
std::map<MPI_Datatype, TypeInfo *> namedTypes; // never freed

int deleteAttribute(MPI_Datatype, int, void *value, void *) {
  releaseType(static_cast<TypeInfo *>(value));
  return MPI_SUCCESS;
}

/// Whether the packed stream of any count is the memory from true_lb on.
bool isContiguousTree(const Datatype &t) {
  switch (t.kind()) {
  case Kind::Primitive:
    return true;
  case Kind::Contiguous:
  case Kind::Dup:
    return isContiguousTree(*t.child());
  default:
    return false;
  }
}

std::atomic<uint64_t> serials{0};

TypeInfo *decode(MPI_Datatype datatype) {
  auto *info = new TypeInfo;
  info->serial = serials.fetch_add(1, std::memory_order_relaxed) + 1;
  MPI_Count size = 0, lb = 0, extent = 0, tlb = 0, textent = 0;
  PMPI_Type_size_x(datatype, &size);
  PMPI_Type_get_extent_x(datatype, &lb, &extent);
  PMPI_Type_get_true_extent_x(datatype, &tlb, &textent);
  info->size = size;
  info->lb = lb;
  info->extent = extent;
  info->trueLb = tlb;
  info->trueExtent = textent;
  std::string error;
  TypeRef tree = importMPIDatatype(datatype, error);
  if (!tree) {
    info->why = error;
    return info;
  }
  info->contiguous =
      isContiguousTree(*tree) && size == extent && size == textent && lb == tlb;
  auto *t = new (std::nothrow) ddtc_type_s;
  if (!t) {
    info->why = "out of host memory";
    return info;
  }
  t->type = tree;
  t->name = "mpi_type";
  info->type = t;
  return info;
}

/// Commits the ddtc type (its kernels planned) and sets what the layer
/// reads of its layout; a type that cannot be planned loses its ddtc type.
void commitAndDescribe(TypeInfo *info) {
  if (!info->type)
    return;
  if (ddtc_type_commit(info->type) != DDTC_SUCCESS) {
    info->why = ddtc_last_error();
    ddtc_type_free(&info->type);
    noteOnce("a datatype is staged through host memory (ddtc cannot plan "
             "it: " +
             info->why + ")");
    return;
  }
  if (!info->type->specialized)
    return;
  const CanonicalLayout &layout = info->type->specialized->layout;
  info->traffic.read = estimateReadAmplification(layout, 64);
  info->traffic.write = estimateWriteAmplification(layout);
  // Normalization merges touching runs and folds contiguous dimensions: a
  // type whose bytes leave no gap and come in memory order is one run (a
  // subarray of whole planes, a vector of touching blocks).
  if (layout.segments.size() == 1 && layout.segments[0].dims.empty() &&
      layout.segments[0].runs.size() == 1) {
    const Segment &seg = layout.segments[0];
    info->contiguousOnce = seg.offset + seg.runs[0].offset == info->trueLb &&
                           seg.runs[0].length == info->size &&
                           info->size == info->trueExtent;
    info->contiguous = info->contiguous ||
                       (info->contiguousOnce && info->extent == info->size);
  }
}

/// Plans the type's kernels (at its first use with a device buffer: types
/// only ever used on the host cost no planning and no compile). A type that
/// cannot be planned is staged from then on.
void plan(TypeInfo *info) {
  std::lock_guard<std::mutex> lock(typeMutex);
  if (info->planned.load(std::memory_order_relaxed))
    return;
  commitAndDescribe(info);
  // Last: a thread that finds the type planned without taking the lock
  // reads the type and the figures set above.
  info->planned.store(true, std::memory_order_release);
}

bool isNamed(MPI_Datatype datatype) {
  int ni, na, nd, combiner;
  PMPI_Type_get_envelope(datatype, &ni, &na, &nd, &combiner);
  return combiner == MPI_COMBINER_NAMED;
}

TypeInfo *lookupOrDecode(MPI_Datatype datatype) {
  std::lock_guard<std::mutex> lock(typeMutex);
  if (isNamed(datatype)) {
    TypeInfo *&slot = namedTypes[datatype];
    if (!slot)
      slot = decode(datatype);
    return slot;
  }
  void *value = nullptr;
  int flag = 0;
  PMPI_Type_get_attr(datatype, keyval, &value, &flag);
  if (flag)
    return static_cast<TypeInfo *>(value);
  TypeInfo *info = decode(datatype);
  if (!info->type)
    noteOnce("a datatype is staged through host memory (ddtc does not pack "
             "it: " +
             info->why + ")");
  PMPI_Type_set_attr(datatype, keyval, info);
  return info;
}

} // namespace

void initTypes() {
  if (keyval == MPI_KEYVAL_INVALID)
    PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, deleteAttribute, &keyval,
                            nullptr);
}

TypeInfo *acquireType(MPI_Datatype datatype) {
  TypeInfo *info = lookupOrDecode(datatype);
  info->refs.fetch_add(1, std::memory_order_relaxed);
  return info;
}

TypeInfo *acquirePlannedType(MPI_Datatype datatype) {
  TypeInfo *info = acquireType(datatype);
  if (!info->planned.load(std::memory_order_acquire))
    plan(info);
  return info;
}

void releaseType(TypeInfo *info) {
  if (info && info->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (info->type)
      ddtc_type_free(&info->type);
    delete info;
  }
}

void commitType(MPI_Datatype datatype) {
  // Without a CUDA driver no buffer is device memory: nothing to prepare.
  if (keyval != MPI_KEYVAL_INVALID && haveDriver())
    lookupOrDecode(datatype);
}

void typeSpan(const TypeInfo &t, int64_t count, int64_t &first, int64_t &span) {
  first = 0;
  span = 0;
  if (count <= 0 || t.size == 0)
    return;
  int64_t lo = t.trueLb, hi = t.trueLb + t.trueExtent;
  int64_t step = (count - 1) * t.extent;
  first = step < 0 ? lo + step : lo;
  span = (step < 0 ? hi : hi + step) - first;
}

bool copiesInWords(const TypeInfo &info) {
  if (!info.planned.load(std::memory_order_acquire) || !info.type)
    return false;
  signed char known = info.copiesInWords.load(std::memory_order_acquire);
  if (known < 0) {
    // Two threads may both ask: the same answer, and the type's copy plan
    // is made once under its own lock.
    known = rt::copiesInWords(*info.type) ? 1 : 0;
    info.copiesInWords.store(known, std::memory_order_release);
  }
  return known == 1;
}

} // namespace ddtc::mpi
