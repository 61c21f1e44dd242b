//===- HandleToTree.cpp - Decode a live MPI datatype into a tree ----------===//
//
// Walks a handle with MPI_Type_get_envelope and MPI_Type_get_contents and
// rebuilds each constructor call with Datatype::create, so the argument rules
// of the core apply to imported types exactly as to parsed ones.
//===----------------------------------------------------------------------===//

#include "MPIPrimitives.h"

#include "ddtc/MPI/MPIBridge.h"

#include <vector>

using namespace ddtc;
using namespace ddtc::mpi_detail;

namespace {

/// Whether a handle MPI_Type_get_contents returned is ours to free: derived
/// types are, predefined ones are not. The F90 parameterized types count as
/// predefined (MPI_Type_create_f90_* handles must never be freed).
bool mustFree(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL)
    return false;
  int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
  if (MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
    return false;
  return combiner != MPI_COMBINER_NAMED && combiner != MPI_COMBINER_F90_REAL &&
         combiner != MPI_COMBINER_F90_COMPLEX &&
         combiner != MPI_COMBINER_F90_INTEGER;
}

/// The datatype handles one MPI_Type_get_contents call returned; frees the
/// derived ones when it goes out of scope.
struct ContentHandles {
  std::vector<MPI_Datatype> types;
  ~ContentHandles() {
    for (MPI_Datatype &t : types)
      if (mustFree(t))
        MPI_Type_free(&t);
  }
};

class Importer {
public:
  explicit Importer(std::string &error) : error_(error) {}
  TypeRef import(MPI_Datatype type, unsigned depth);

private:
  TypeRef importNamed(MPI_Datatype type);
  bool fail(const std::string &combinerName, const std::string &message) {
    error_ = combinerName + ": " + message;
    return false;
  }
  std::string &error_;
};

/// Reads `n` ints from `ints` starting at `pos`, advancing it.
std::vector<int64_t> take(const std::vector<int> &ints, size_t &pos, size_t n) {
  std::vector<int64_t> out;
  out.reserve(n);
  for (size_t i = 0; i < n && pos < ints.size(); ++i)
    out.push_back(ints[pos++]);
  return out;
}

std::vector<int64_t> widen(const std::vector<MPI_Aint> &addrs, size_t from,
                           size_t n) {
  std::vector<int64_t> out;
  out.reserve(n);
  for (size_t i = 0; i < n && from + i < addrs.size(); ++i)
    out.push_back(static_cast<int64_t>(addrs[from + i]));
  return out;
}

TypeRef Importer::importNamed(MPI_Datatype type) {
  if (std::optional<Primitive> p = lookupMPIPrimitive(type))
    return Datatype::primitive(*p);
  std::string name = getMPITypeName(type);
  error_ = "cannot represent the predefined MPI datatype " +
           (name.empty() ? std::string("(unnamed)") : name);
  return nullptr;
}

TypeRef Importer::import(MPI_Datatype type, unsigned depth) {
  if (type == MPI_DATATYPE_NULL) {
    error_ = "cannot import MPI_DATATYPE_NULL";
    return nullptr;
  }
  // MPI builds types bottom-up, so a tree this deep means a broken handle.
  if (depth > 10000) {
    error_ = "datatype nesting is too deep";
    return nullptr;
  }
  int numInts = 0, numAddrs = 0, numTypes = 0, combiner = MPI_COMBINER_NAMED;
  int rc =
      MPI_Type_get_envelope(type, &numInts, &numAddrs, &numTypes, &combiner);
  if (rc != MPI_SUCCESS) {
    error_ = "MPI_Type_get_envelope failed on the datatype";
    return nullptr;
  }
  if (combiner == MPI_COMBINER_NAMED)
    return importNamed(type);

  std::string name = getCombinerName(combiner);
  TypeArgs args;
  switch (combiner) {
  case MPI_COMBINER_DUP:
    args.kind = Kind::Dup;
    break;
  case MPI_COMBINER_CONTIGUOUS:
    args.kind = Kind::Contiguous;
    break;
  case MPI_COMBINER_VECTOR:
    args.kind = Kind::Vector;
    break;
  case MPI_COMBINER_HVECTOR:
    args.kind = Kind::HVector;
    break;
  case MPI_COMBINER_INDEXED:
    args.kind = Kind::Indexed;
    break;
  case MPI_COMBINER_HINDEXED:
    args.kind = Kind::HIndexed;
    break;
  case MPI_COMBINER_INDEXED_BLOCK:
    args.kind = Kind::IndexedBlock;
    break;
  case MPI_COMBINER_HINDEXED_BLOCK:
    args.kind = Kind::HIndexedBlock;
    break;
  case MPI_COMBINER_STRUCT:
    args.kind = Kind::Struct;
    break;
  case MPI_COMBINER_SUBARRAY:
    args.kind = Kind::Subarray;
    break;
  case MPI_COMBINER_DARRAY:
    args.kind = Kind::Darray;
    break;
  case MPI_COMBINER_RESIZED:
    args.kind = Kind::Resized;
    break;
  default:
    error_ = "cannot represent " + name;
    return nullptr;
  }

  std::vector<int> ints(static_cast<size_t>(numInts > 0 ? numInts : 0) + 1, 0);
  std::vector<MPI_Aint> addrs(
      static_cast<size_t>(numAddrs > 0 ? numAddrs : 0) + 1, 0);
  ContentHandles handles;
  handles.types.assign(static_cast<size_t>(numTypes > 0 ? numTypes : 0) + 1,
                       MPI_DATATYPE_NULL);
  rc = MPI_Type_get_contents(type, numInts, numAddrs, numTypes, ints.data(),
                             addrs.data(), handles.types.data());
  if (rc != MPI_SUCCESS) {
    error_ = name + ": MPI_Type_get_contents failed";
    return nullptr;
  }
  ints.resize(static_cast<size_t>(numInts));
  addrs.resize(static_cast<size_t>(numAddrs));
  handles.types.resize(static_cast<size_t>(numTypes));

  auto expect = [&](int wantInts, int wantAddrs, int wantTypes) {
    if (numInts == wantInts && numAddrs == wantAddrs && numTypes == wantTypes)
      return true;
    return fail(
        name, "MPI_Type_get_envelope reports " + std::to_string(numInts) +
                  " integers, " + std::to_string(numAddrs) + " addresses and " +
                  std::to_string(numTypes) + " datatypes, expected " +
                  std::to_string(wantInts) + ", " + std::to_string(wantAddrs) +
                  " and " + std::to_string(wantTypes));
  };
  auto countOf = [&]() -> int { return numInts > 0 ? ints[0] : -1; };

  bool ok = true;
  size_t pos = 0;
  switch (args.kind) {
  case Kind::Dup:
    ok = expect(0, 0, 1);
    break;
  case Kind::Contiguous:
    ok = expect(1, 0, 1);
    if (ok)
      args.count = ints[0];
    break;
  case Kind::Vector:
    ok = expect(3, 0, 1);
    if (ok) {
      args.count = ints[0];
      args.blocklen = ints[1];
      args.stride = ints[2];
    }
    break;
  case Kind::HVector:
    ok = expect(2, 1, 1);
    if (ok) {
      args.count = ints[0];
      args.blocklen = ints[1];
      args.stride = addrs[0];
    }
    break;
  case Kind::Indexed: {
    int n = countOf();
    ok = n >= 0 && expect(2 * n + 1, 0, 1);
    if (ok) {
      pos = 1;
      args.blocklens = take(ints, pos, n);
      args.displs = take(ints, pos, n);
    }
    break;
  }
  case Kind::HIndexed: {
    int n = countOf();
    ok = n >= 0 && expect(n + 1, n, 1);
    if (ok) {
      pos = 1;
      args.blocklens = take(ints, pos, n);
      args.displs = widen(addrs, 0, n);
    }
    break;
  }
  case Kind::IndexedBlock: {
    int n = countOf();
    ok = n >= 0 && expect(n + 2, 0, 1);
    if (ok) {
      args.blocklen = ints[1];
      pos = 2;
      args.displs = take(ints, pos, n);
    }
    break;
  }
  case Kind::HIndexedBlock: {
    int n = countOf();
    ok = n >= 0 && expect(2, n, 1);
    if (ok) {
      args.blocklen = ints[1];
      args.displs = widen(addrs, 0, n);
    }
    break;
  }
  case Kind::Struct: {
    int n = countOf();
    ok = n >= 0 && expect(n + 1, n, n);
    if (ok) {
      pos = 1;
      args.blocklens = take(ints, pos, n);
      args.displs = widen(addrs, 0, n);
    }
    break;
  }
  case Kind::Subarray: {
    int nd = countOf();
    ok = nd >= 0 && expect(3 * nd + 2, 0, 1);
    if (ok) {
      pos = 1;
      args.sizes = take(ints, pos, nd);
      args.subsizes = take(ints, pos, nd);
      args.starts = take(ints, pos, nd);
      int order = ints[pos];
      if (order == MPI_ORDER_C)
        args.order = Order::C;
      else if (order == MPI_ORDER_FORTRAN)
        args.order = Order::Fortran;
      else
        ok = fail(name, "unknown order " + std::to_string(order));
    }
    break;
  }
  case Kind::Darray: {
    int nd = numInts >= 3 ? ints[2] : -1;
    ok = nd >= 0 && expect(4 * nd + 4, 0, 1);
    if (ok) {
      args.commSize = ints[0];
      args.rank = ints[1];
      pos = 3;
      args.sizes = take(ints, pos, nd);
      for (int i = 0; i < nd && ok; ++i) {
        int d = ints[pos++];
        if (d == MPI_DISTRIBUTE_BLOCK)
          args.distribs.push_back(Distribution::Block);
        else if (d == MPI_DISTRIBUTE_CYCLIC)
          args.distribs.push_back(Distribution::Cyclic);
        else if (d == MPI_DISTRIBUTE_NONE)
          args.distribs.push_back(Distribution::None);
        else
          ok = fail(name, "unknown distribution " + std::to_string(d));
      }
      for (int i = 0; i < nd && ok; ++i) {
        int darg = ints[pos++];
        args.dargs.push_back(darg == MPI_DISTRIBUTE_DFLT_DARG ? kDefaultDarg
                                                              : darg);
      }
      if (ok) {
        args.psizes = take(ints, pos, nd);
        int order = ints[pos];
        if (order == MPI_ORDER_C)
          args.order = Order::C;
        else if (order == MPI_ORDER_FORTRAN)
          args.order = Order::Fortran;
        else
          ok = fail(name, "unknown order " + std::to_string(order));
      }
    }
    break;
  }
  case Kind::Resized:
    ok = expect(0, 2, 1);
    if (ok) {
      args.lb = addrs[0];
      args.extent = addrs[1];
    }
    break;
  case Kind::Primitive:
    break;
  }
  if (!ok) {
    if (error_.empty())
      error_ = name + ": MPI_Type_get_contents returned malformed arguments";
    return nullptr;
  }

  for (MPI_Datatype child : handles.types) {
    TypeRef c = import(child, depth + 1);
    if (!c)
      return nullptr;
    args.children.push_back(std::move(c));
  }

  std::string rule;
  TypeRef result = Datatype::create(std::move(args), rule);
  if (!result) {
    error_ = name + ": " + rule;
    return nullptr;
  }
  return result;
}

} // namespace

TypeRef ddtc::importMPIDatatype(MPI_Datatype type, std::string &error) {
  error.clear();
  Importer importer(error);
  TypeRef tree = importer.import(type, 0);
  if (!tree)
    return nullptr;
  // The tree is only as good as ddtc's model of this library's layout rules:
  // if the library places instances differently, packing count > 1 of them
  // would move the wrong bytes, so refuse rather than guess.
  MPI_Count size = 0;
  MPI_Count lb = 0, extent = 0;
  if (MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
      MPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS) {
    error = "cannot query the size and extent of the MPI datatype";
    return nullptr;
  }
  const LayoutInfo &l = tree->layout();
  if (size != l.size || lb != l.lb || extent != l.extent) {
    error = "the MPI library lays this datatype out with size " +
            std::to_string(size) + ", lb " + std::to_string(lb) + ", extent " +
            std::to_string(extent) + " but ddtc computes size " +
            std::to_string(l.size) + ", lb " + std::to_string(l.lb) +
            ", extent " + std::to_string(l.extent) +
            "; ddtc follows Open MPI's layout rules (docs/Architecture.md)";
    return nullptr;
  }
  return tree;
}
