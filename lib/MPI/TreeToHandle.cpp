//===- TreeToHandle.cpp - Build the MPI datatype a tree describes ---------===//
//
// Each node becomes one call of the MPI constructor of its kind; the handles
// of inner nodes are freed once the root is built.
//===----------------------------------------------------------------------===//

#include "MPIPrimitives.h"

#include "ddtc/MPI/MPIBridge.h"

#include <limits>
#include <unordered_map>
#include <vector>

using namespace ddtc;

namespace {

std::string describeMPIError(int rc) {
  char text[MPI_MAX_ERROR_STRING + 1] = {0};
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS || len <= 0)
    return "error code " + std::to_string(rc);
  return std::string(text, static_cast<size_t>(len));
}

class Exporter {
public:
  explicit Exporter(std::string &error) : error_(error) {}
  ~Exporter() { freeInner(MPI_DATATYPE_NULL); }

  /// Builds the handle of `type`; `isNamed` tells whether it is predefined.
  bool build(const Datatype &type, MPI_Datatype &out, bool &isNamed);
  /// Frees every derived handle built so far except `keep`.
  void freeInner(MPI_Datatype keep);

private:
  bool buildDerived(const Datatype &type, MPI_Datatype &out);
  /// The handle of child `i` of `type` (built once per node).
  bool child(const Datatype &type, size_t i, MPI_Datatype &out);

  bool toInt(int64_t value, const char *what, const Datatype &type, int &out);
  bool toInts(const std::vector<int64_t> &values, const char *what,
              const Datatype &type, std::vector<int> &out);
  bool toAint(int64_t value, const char *what, const Datatype &type,
              MPI_Aint &out);
  bool toAints(const std::vector<int64_t> &values, const char *what,
               const Datatype &type, std::vector<MPI_Aint> &out);
  bool check(int rc, const char *call);

  std::string &error_;
  std::unordered_map<const Datatype *, MPI_Datatype> built_;
  std::vector<MPI_Datatype> inner_;
};

bool Exporter::toInt(int64_t value, const char *what, const Datatype &type,
                     int &out) {
  if (value < std::numeric_limits<int>::min() ||
      value > std::numeric_limits<int>::max()) {
    error_ = std::string(getKindName(type.kind())) + ": " + what + " " +
             std::to_string(value) +
             " does not fit in the int argument of the MPI constructor";
    return false;
  }
  out = static_cast<int>(value);
  return true;
}

bool Exporter::toInts(const std::vector<int64_t> &values, const char *what,
                      const Datatype &type, std::vector<int> &out) {
  // Never hand MPI a null array, even for zero entries.
  out.assign(values.empty() ? 1 : values.size(), 0);
  for (size_t i = 0; i < values.size(); ++i)
    if (!toInt(values[i], what, type, out[i]))
      return false;
  return true;
}

bool Exporter::toAint(int64_t value, const char *what, const Datatype &type,
                      MPI_Aint &out) {
  if (sizeof(MPI_Aint) < sizeof(int64_t) &&
      (value < static_cast<int64_t>(std::numeric_limits<MPI_Aint>::min()) ||
       value > static_cast<int64_t>(std::numeric_limits<MPI_Aint>::max()))) {
    error_ = std::string(getKindName(type.kind())) + ": " + what + " " +
             std::to_string(value) + " does not fit in MPI_Aint";
    return false;
  }
  out = static_cast<MPI_Aint>(value);
  return true;
}

bool Exporter::toAints(const std::vector<int64_t> &values, const char *what,
                       const Datatype &type, std::vector<MPI_Aint> &out) {
  out.assign(values.empty() ? 1 : values.size(), 0);
  for (size_t i = 0; i < values.size(); ++i)
    if (!toAint(values[i], what, type, out[i]))
      return false;
  return true;
}

bool Exporter::check(int rc, const char *call) {
  if (rc == MPI_SUCCESS)
    return true;
  error_ = std::string(call) + " failed: " + describeMPIError(rc);
  return false;
}

void Exporter::freeInner(MPI_Datatype keep) {
  for (MPI_Datatype &h : inner_)
    if (h != keep && h != MPI_DATATYPE_NULL)
      MPI_Type_free(&h);
  inner_.clear();
  built_.clear();
}

bool Exporter::build(const Datatype &type, MPI_Datatype &out, bool &isNamed) {
  if (type.kind() == Kind::Primitive) {
    Primitive p = type.args().primitive;
    out = getMPIPrimitive(p);
    isNamed = true;
    if (out == MPI_DATATYPE_NULL) {
      error_ = std::string(getPrimitiveInfo(p).mpiName) +
               " is not provided by this MPI library";
      return false;
    }
    return true;
  }
  isNamed = false;
  auto it = built_.find(&type);
  if (it != built_.end()) {
    out = it->second;
    return true;
  }
  if (!buildDerived(type, out))
    return false;
  built_.emplace(&type, out);
  inner_.push_back(out);
  return true;
}

bool Exporter::child(const Datatype &type, size_t i, MPI_Datatype &out) {
  bool named = false;
  return build(*type.child(i), out, named);
}

bool Exporter::buildDerived(const Datatype &type, MPI_Datatype &out) {
  const TypeArgs &a = type.args();
  out = MPI_DATATYPE_NULL;
  int count = 0, blocklen = 0, stride = 0;
  MPI_Aint strideBytes = 0;
  std::vector<int> blocklens, displs;
  std::vector<MPI_Aint> byteDispls;
  MPI_Datatype old = MPI_DATATYPE_NULL;
  auto numBlocks = [&](size_t n) {
    return toInt(static_cast<int64_t>(n), "number of blocks", type, count);
  };

  switch (a.kind) {
  case Kind::Primitive:
    break; // Handled by build().
  case Kind::Contiguous:
    return toInt(a.count, "count", type, count) && child(type, 0, old) &&
           check(MPI_Type_contiguous(count, old, &out), "MPI_Type_contiguous");
  case Kind::Vector:
    return toInt(a.count, "count", type, count) &&
           toInt(a.blocklen, "blocklength", type, blocklen) &&
           toInt(a.stride, "stride", type, stride) && child(type, 0, old) &&
           check(MPI_Type_vector(count, blocklen, stride, old, &out),
                 "MPI_Type_vector");
  case Kind::HVector:
    return toInt(a.count, "count", type, count) &&
           toInt(a.blocklen, "blocklength", type, blocklen) &&
           toAint(a.stride, "stride", type, strideBytes) &&
           child(type, 0, old) &&
           check(
               MPI_Type_create_hvector(count, blocklen, strideBytes, old, &out),
               "MPI_Type_create_hvector");
  case Kind::Indexed:
    return numBlocks(a.blocklens.size()) &&
           toInts(a.blocklens, "blocklength", type, blocklens) &&
           toInts(a.displs, "displacement", type, displs) &&
           child(type, 0, old) &&
           check(MPI_Type_indexed(count, blocklens.data(), displs.data(), old,
                                  &out),
                 "MPI_Type_indexed");
  case Kind::HIndexed:
    return numBlocks(a.blocklens.size()) &&
           toInts(a.blocklens, "blocklength", type, blocklens) &&
           toAints(a.displs, "displacement", type, byteDispls) &&
           child(type, 0, old) &&
           check(MPI_Type_create_hindexed(count, blocklens.data(),
                                          byteDispls.data(), old, &out),
                 "MPI_Type_create_hindexed");
  case Kind::IndexedBlock:
    return numBlocks(a.displs.size()) &&
           toInt(a.blocklen, "blocklength", type, blocklen) &&
           toInts(a.displs, "displacement", type, displs) &&
           child(type, 0, old) &&
           check(MPI_Type_create_indexed_block(count, blocklen, displs.data(),
                                               old, &out),
                 "MPI_Type_create_indexed_block");
  case Kind::HIndexedBlock:
    return numBlocks(a.displs.size()) &&
           toInt(a.blocklen, "blocklength", type, blocklen) &&
           toAints(a.displs, "displacement", type, byteDispls) &&
           child(type, 0, old) &&
           check(MPI_Type_create_hindexed_block(count, blocklen,
                                                byteDispls.data(), old, &out),
                 "MPI_Type_create_hindexed_block");
  case Kind::Struct: {
    if (!numBlocks(a.blocklens.size()) ||
        !toInts(a.blocklens, "blocklength", type, blocklens) ||
        !toAints(a.displs, "displacement", type, byteDispls))
      return false;
    std::vector<MPI_Datatype> types(a.children.empty() ? 1 : a.children.size(),
                                    MPI_DATATYPE_NULL);
    for (size_t i = 0; i < a.children.size(); ++i)
      if (!child(type, i, types[i]))
        return false;
    return check(MPI_Type_create_struct(count, blocklens.data(),
                                        byteDispls.data(), types.data(), &out),
                 "MPI_Type_create_struct");
  }
  case Kind::Subarray: {
    int ndims = 0;
    std::vector<int> sizes, subsizes, starts;
    return toInt(static_cast<int64_t>(a.sizes.size()), "number of dimensions",
                 type, ndims) &&
           toInts(a.sizes, "size", type, sizes) &&
           toInts(a.subsizes, "subsize", type, subsizes) &&
           toInts(a.starts, "start", type, starts) && child(type, 0, old) &&
           check(MPI_Type_create_subarray(
                     ndims, sizes.data(), subsizes.data(), starts.data(),
                     a.order == Order::C ? MPI_ORDER_C : MPI_ORDER_FORTRAN, old,
                     &out),
                 "MPI_Type_create_subarray");
  }
  case Kind::Darray: {
    int ndims = 0, size = 0, rank = 0;
    std::vector<int> gsizes, psizes, distribs, dargs;
    if (!toInt(static_cast<int64_t>(a.sizes.size()), "number of dimensions",
               type, ndims) ||
        !toInt(a.commSize, "size", type, size) ||
        !toInt(a.rank, "rank", type, rank) ||
        !toInts(a.sizes, "gsize", type, gsizes) ||
        !toInts(a.psizes, "psize", type, psizes))
      return false;
    distribs.assign(gsizes.size(), MPI_DISTRIBUTE_NONE);
    dargs.assign(gsizes.size(), MPI_DISTRIBUTE_DFLT_DARG);
    for (size_t i = 0; i < a.distribs.size(); ++i) {
      switch (a.distribs[i]) {
      case Distribution::Block:
        distribs[i] = MPI_DISTRIBUTE_BLOCK;
        break;
      case Distribution::Cyclic:
        distribs[i] = MPI_DISTRIBUTE_CYCLIC;
        break;
      case Distribution::None:
        distribs[i] = MPI_DISTRIBUTE_NONE;
        break;
      }
    }
    for (size_t i = 0; i < a.dargs.size(); ++i) {
      if (a.dargs[i] == kDefaultDarg)
        dargs[i] = MPI_DISTRIBUTE_DFLT_DARG;
      else if (!toInt(a.dargs[i], "darg", type, dargs[i]))
        return false;
    }
    return child(type, 0, old) &&
           check(MPI_Type_create_darray(
                     size, rank, ndims, gsizes.data(), distribs.data(),
                     dargs.data(), psizes.data(),
                     a.order == Order::C ? MPI_ORDER_C : MPI_ORDER_FORTRAN, old,
                     &out),
                 "MPI_Type_create_darray");
  }
  case Kind::Resized: {
    MPI_Aint lb = 0, extent = 0;
    return toAint(a.lb, "lb", type, lb) &&
           toAint(a.extent, "extent", type, extent) && child(type, 0, old) &&
           check(MPI_Type_create_resized(old, lb, extent, &out),
                 "MPI_Type_create_resized");
  }
  case Kind::Dup:
    return child(type, 0, old) &&
           check(MPI_Type_dup(old, &out), "MPI_Type_dup");
  }
  error_ = "unknown datatype kind";
  return false;
}

} // namespace

bool ddtc::exportMPIDatatype(const Datatype &type, MPI_Datatype &out,
                             bool &isNamed, std::string &error) {
  out = MPI_DATATYPE_NULL;
  isNamed = false;
  Exporter exporter(error);
  MPI_Datatype handle = MPI_DATATYPE_NULL;
  bool named = false;
  if (!exporter.build(type, handle, named))
    return false; // The exporter frees what it built.
  // The parent keeps what it needs of its children: free them, not the root.
  exporter.freeInner(handle);
  out = handle;
  isNamed = named;
  return true;
}
