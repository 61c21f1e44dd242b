//===- Datatype.cpp - MPI datatype trees and their argument rules ---------===//

#include "ddtc/Core/Datatype.h"
#include "CheckedMath.h"
#include "ddtc/Core/Constructors.h"
#include "Layout.h"

#include <sstream>

namespace ddtc {

namespace {
struct KindName {
  Kind kind;
  const char *name;
};
const KindName kKindNames[] = {
    {Kind::Primitive, "primitive"},
#define DDTC_CONSTRUCTOR(KIND, NAME) {Kind::KIND, NAME},
#include "ddtc/Core/Constructors.def"
};

std::string str(int64_t v) { return std::to_string(v); }

std::string nonNegative(const char *what, int64_t v) {
  if (v >= 0)
    return "";
  return std::string(what) + " must be non-negative, got " + str(v);
}

std::string nonNegativeList(const char *what, const std::vector<int64_t> &v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] < 0)
      return std::string(what) + "[" + str(i) + "] must be non-negative, got " +
             str(v[i]);
  return "";
}

std::string sameLength(const char *a, size_t na, const char *b, size_t nb) {
  if (na == nb)
    return "";
  return std::string(a) + " has " + str(na) + " entries but " + b + " has " +
         str(nb);
}

std::string checkSubarray(const TypeArgs &a) {
  size_t n = a.sizes.size();
  if (n == 0)
    return "subarray needs at least one dimension";
  if (auto e = sameLength("sizes", n, "subsizes", a.subsizes.size());
      !e.empty())
    return e;
  if (auto e = sameLength("sizes", n, "starts", a.starts.size()); !e.empty())
    return e;
  for (size_t i = 0; i < n; ++i) {
    std::string d = "[" + str(i) + "]";
    if (a.sizes[i] < 1)
      return "sizes" + d + " must be at least 1, got " + str(a.sizes[i]);
    if (a.subsizes[i] < 1)
      return "subsizes" + d + " must be at least 1, got " + str(a.subsizes[i]);
    if (a.subsizes[i] > a.sizes[i])
      return "subsizes" + d + " = " + str(a.subsizes[i]) + " exceeds sizes" +
             d + " = " + str(a.sizes[i]);
    if (a.starts[i] < 0)
      return "starts" + d + " must be non-negative, got " + str(a.starts[i]);
    if (a.starts[i] > a.sizes[i] - a.subsizes[i])
      return "starts" + d + " + subsizes" + d + " = " +
             str(a.starts[i] + a.subsizes[i]) + " exceeds sizes" + d + " = " +
             str(a.sizes[i]);
  }
  return "";
}

std::string checkDarray(const TypeArgs &a) {
  if (a.commSize < 1)
    return "size (the number of processes) must be at least 1, got " +
           str(a.commSize);
  if (a.rank < 0 || a.rank >= a.commSize)
    return "rank must be in [0, size) = [0, " + str(a.commSize) + "), got " +
           str(a.rank);
  size_t n = a.sizes.size();
  if (n == 0)
    return "darray needs at least one dimension";
  if (auto e = sameLength("gsizes", n, "distribs", a.distribs.size());
      !e.empty())
    return e;
  if (auto e = sameLength("gsizes", n, "dargs", a.dargs.size()); !e.empty())
    return e;
  if (auto e = sameLength("gsizes", n, "psizes", a.psizes.size()); !e.empty())
    return e;
  Checked c;
  int64_t procs = 1;
  for (size_t i = 0; i < n; ++i) {
    std::string d = "[" + str(i) + "]";
    if (a.sizes[i] < 1)
      return "gsizes" + d + " must be at least 1, got " + str(a.sizes[i]);
    if (a.psizes[i] < 1)
      return "psizes" + d + " must be at least 1, got " + str(a.psizes[i]);
    procs = c.mul(procs, a.psizes[i]);
    int64_t darg = a.dargs[i];
    if (darg != kDefaultDarg && darg < 1)
      return "dargs" + d + " must be at least 1 or default, got " + str(darg);
    switch (a.distribs[i]) {
    case Distribution::None:
      if (a.psizes[i] != 1)
        return "dimension " + str(i) + " is not distributed (none) so psizes" +
               d + " must be 1, got " + str(a.psizes[i]);
      break;
    case Distribution::Block:
      if (darg != kDefaultDarg) {
        Checked cc;
        int64_t cover = cc.mul(darg, a.psizes[i]);
        if (!cc.overflowed && cover < a.sizes[i])
          return "block distribution of dimension " + str(i) + " needs dargs" +
                 d + " * psizes" + d + " >= gsizes" + d + ", got " + str(darg) +
                 " * " + str(a.psizes[i]) + " < " + str(a.sizes[i]);
      }
      break;
    case Distribution::Cyclic:
      break;
    }
  }
  if (c.overflowed || procs != a.commSize)
    return "the process grid psizes has " +
           (c.overflowed ? std::string("more than 2^63") : str(procs)) +
           " processes but size is " + str(a.commSize);
  return "";
}

template <typename T> void addList(Hasher &h, const std::vector<T> &values) {
  h.add(values.data(), values.size() * sizeof(T));
}

/// The hash of a node from its kind, the arguments its constructor's
/// signature lists, in order, and its children's hashes (already kept in
/// them): O(own arguments), whatever the size of the tree below.
Hash128 hashNode(const TypeArgs &a) {
  Hasher h;
  h.add(static_cast<int64_t>(a.kind));
  const ConstructorSignature *sig = getConstructor(a.kind);
  if (!sig)
    return h.add(static_cast<int64_t>(a.primitive)).finish();
  auto child = [&](const TypeRef &t) {
    const Hash128 &c = t->hash();
    h.add(&c, sizeof c);
  };
  for (const ConstructorArgument &arg : sig->arguments) {
    switch (arg.syntax) {
    case ArgSyntax::Int:
      h.add(a.*getIntMember(arg.field));
      break;
    case ArgSyntax::IntList:
      addList(h, a.*getIntListMember(arg.field));
      break;
    case ArgSyntax::DistribList:
      addList(h, a.distribs);
      break;
    case ArgSyntax::DargList:
      addList(h, a.dargs);
      break;
    case ArgSyntax::Order:
      h.add(static_cast<int64_t>(a.order));
      break;
    case ArgSyntax::Type:
      child(a.children.front());
      break;
    case ArgSyntax::TypeList:
      h.add(static_cast<int64_t>(a.children.size()));
      for (const TypeRef &t : a.children)
        child(t);
      break;
    }
  }
  return h.finish();
}

size_t expectedChildren(const TypeArgs &a) {
  switch (a.kind) {
  case Kind::Primitive:
    return 0;
  case Kind::Struct:
    return a.blocklens.size();
  default:
    return 1;
  }
}
} // namespace

const char *getKindName(Kind k) {
  return kKindNames[static_cast<size_t>(k)].name;
}

std::optional<Kind> lookupKind(std::string_view name) {
  for (const KindName &kn : kKindNames)
    if (name == kn.name && kn.kind != Kind::Primitive)
      return kn.kind;
  return std::nullopt;
}

const char *getDistributionName(Distribution d) {
  switch (d) {
  case Distribution::Block:
    return "block";
  case Distribution::Cyclic:
    return "cyclic";
  case Distribution::None:
    return "none";
  }
  return "?";
}

const char *getOrderName(Order o) {
  return o == Order::Fortran ? "Fortran" : "C";
}

std::string checkArguments(const TypeArgs &a) {
  switch (a.kind) {
  case Kind::Primitive:
  case Kind::Resized:
  case Kind::Dup:
    return "";
  case Kind::Contiguous:
    return nonNegative("count", a.count);
  case Kind::Vector:
  case Kind::HVector:
    if (auto e = nonNegative("count", a.count); !e.empty())
      return e;
    return nonNegative("blocklen", a.blocklen);
  case Kind::Indexed:
  case Kind::HIndexed:
    if (auto e = sameLength("blocklens", a.blocklens.size(), "displs",
                            a.displs.size());
        !e.empty())
      return e;
    return nonNegativeList("blocklens", a.blocklens);
  case Kind::IndexedBlock:
  case Kind::HIndexedBlock:
    return nonNegative("blocklen", a.blocklen);
  case Kind::Struct:
    if (auto e = sameLength("blocklens", a.blocklens.size(), "displs",
                            a.displs.size());
        !e.empty())
      return e;
    if (auto e = sameLength("blocklens", a.blocklens.size(), "types",
                            a.children.size());
        !e.empty())
      return e;
    return nonNegativeList("blocklens", a.blocklens);
  case Kind::Subarray:
    return checkSubarray(a);
  case Kind::Darray:
    return checkDarray(a);
  }
  return "unknown constructor";
}

TypeRef Datatype::create(TypeArgs args, std::string &error) {
  if (auto e = checkArguments(args); !e.empty()) {
    error = e;
    return nullptr;
  }
  if (args.children.size() != expectedChildren(args)) {
    error = std::string(getKindName(args.kind)) + " takes " +
            str(expectedChildren(args)) + " old type(s), got " +
            str(args.children.size());
    return nullptr;
  }
  for (const TypeRef &c : args.children)
    if (!c) {
      error = "old type is missing";
      return nullptr;
    }
  LayoutInfo layout;
  if (!computeLayout(args, layout, error))
    return nullptr;
  const Hash128 hash = hashNode(args);
  std::shared_ptr<Datatype> t(new Datatype(std::move(args)));
  t->layout_ = layout;
  t->hash_ = hash;
  return t;
}

TypeRef Datatype::primitive(Primitive p) {
  TypeArgs a;
  a.kind = Kind::Primitive;
  a.primitive = p;
  std::string error;
  return create(std::move(a), error);
}

TypeRef Datatype::contiguous(int64_t count, TypeRef old, std::string &error) {
  TypeArgs a;
  a.kind = Kind::Contiguous;
  a.count = count;
  a.children = {std::move(old)};
  return create(std::move(a), error);
}

TypeRef Datatype::vector(int64_t count, int64_t blocklen, int64_t stride,
                         TypeRef old, std::string &error) {
  TypeArgs a;
  a.kind = Kind::Vector;
  a.count = count;
  a.blocklen = blocklen;
  a.stride = stride;
  a.children = {std::move(old)};
  return create(std::move(a), error);
}

TypeRef Datatype::hvector(int64_t count, int64_t blocklen, int64_t strideBytes,
                          TypeRef old, std::string &error) {
  TypeArgs a;
  a.kind = Kind::HVector;
  a.count = count;
  a.blocklen = blocklen;
  a.stride = strideBytes;
  a.children = {std::move(old)};
  return create(std::move(a), error);
}

TypeRef Datatype::resized(int64_t lb, int64_t extent, TypeRef old,
                          std::string &error) {
  TypeArgs a;
  a.kind = Kind::Resized;
  a.lb = lb;
  a.extent = extent;
  a.children = {std::move(old)};
  return create(std::move(a), error);
}

int64_t getBlockLength(const TypeArgs &a, size_t i) {
  bool oneLength =
      a.kind == Kind::IndexedBlock || a.kind == Kind::HIndexedBlock;
  return oneLength ? a.blocklen : a.blocklens[i];
}

int64_t getBlockDisplacement(const TypeArgs &a, size_t i, int64_t oldExtent) {
  bool inExtents = a.kind == Kind::Indexed || a.kind == Kind::IndexedBlock;
  return inExtents ? a.displs[i] * oldExtent : a.displs[i];
}

bool equalTrees(const Datatype &x, const Datatype &y) {
  if (&x == &y)
    return true;
  // Equal trees hash equal: different hashes settle it at once.
  if (x.hash() != y.hash())
    return false;
  const TypeArgs &a = x.args(), &b = y.args();
  if (a.kind != b.kind || a.children.size() != b.children.size())
    return false;
  bool same = true;
  switch (a.kind) {
  case Kind::Primitive:
    same = a.primitive == b.primitive;
    break;
  case Kind::Contiguous:
    same = a.count == b.count;
    break;
  case Kind::Vector:
  case Kind::HVector:
    same =
        a.count == b.count && a.blocklen == b.blocklen && a.stride == b.stride;
    break;
  case Kind::Indexed:
  case Kind::HIndexed:
  case Kind::Struct:
    same = a.blocklens == b.blocklens && a.displs == b.displs;
    break;
  case Kind::IndexedBlock:
  case Kind::HIndexedBlock:
    same = a.blocklen == b.blocklen && a.displs == b.displs;
    break;
  case Kind::Subarray:
    same = a.sizes == b.sizes && a.subsizes == b.subsizes &&
           a.starts == b.starts && a.order == b.order;
    break;
  case Kind::Darray:
    same = a.commSize == b.commSize && a.rank == b.rank && a.sizes == b.sizes &&
           a.distribs == b.distribs && a.dargs == b.dargs &&
           a.psizes == b.psizes && a.order == b.order;
    break;
  case Kind::Resized:
    same = a.lb == b.lb && a.extent == b.extent;
    break;
  case Kind::Dup:
    break;
  }
  if (!same)
    return false;
  for (size_t i = 0; i < a.children.size(); ++i)
    if (!equalTrees(*a.children[i], *b.children[i]))
      return false;
  return true;
}

} // namespace ddtc
