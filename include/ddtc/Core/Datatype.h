//===- Datatype.h - MPI datatype trees --------------------------*- C++ -*-===//
//
// A datatype tree is the MPI constructor calls that built a type, with their
// arguments exactly as MPI takes them. A Datatype exists only when its
// arguments obey the MPI rules and its layout fits in 64 bits, so code that
// holds one never re-checks it. Each node keeps the hash of its tree, made
// once when it is built from its arguments and its children's hashes, so
// naming a tree costs the same whatever its size.
//===----------------------------------------------------------------------===//

#ifndef DDTC_CORE_DATATYPE_H
#define DDTC_CORE_DATATYPE_H

#include "ddtc/Core/Hash.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddtc {

/// The predefined (named) MPI datatypes.
enum class Primitive : uint8_t {
#define DDTC_PRIMITIVE(ID, ...) ID,
#include "ddtc/Core/Primitives.def"
};

/// The layout of a predefined type: at most two runs of bytes,
/// [0, len0) and [off1, off1 + len1).
struct PrimitiveInfo {
  Primitive id;
  const char *mpiName; ///< "MPI_DOUBLE"
  int64_t size, extent, len0, off1, len1;
  int64_t align; ///< what the MPI library rounds extents to
};

const PrimitiveInfo &getPrimitiveInfo(Primitive p);
/// All predefined types, in declaration order.
const std::vector<PrimitiveInfo> &allPrimitives();
/// Finds a predefined type by MPI name ("MPI_DOUBLE") or C spelling
/// ("double", "unsigned long long"); the spelling's words must be separated by
/// single spaces.
std::optional<Primitive> lookupPrimitive(std::string_view name);

/// MPI type constructors (Constructors.def); `Primitive` is a named type.
enum class Kind : uint8_t {
  Primitive,
#define DDTC_CONSTRUCTOR(KIND, NAME) KIND,
#include "ddtc/Core/Constructors.def"
};
/// The spec-language name of a constructor: "vector", "indexed_block", ...
const char *getKindName(Kind k);
std::optional<Kind> lookupKind(std::string_view name);

enum class Order : uint8_t { C, Fortran };
enum class Distribution : uint8_t { Block, Cyclic, None };
const char *getDistributionName(Distribution d); ///< "block", "cyclic", "none"
const char *getOrderName(Order o);               ///< "C", "Fortran"

/// The darg meaning "use the default" (MPI_DISTRIBUTE_DFLT_DARG).
constexpr int64_t kDefaultDarg = -1;

class Datatype;
using TypeRef = std::shared_ptr<const Datatype>;

/// The arguments of one MPI constructor call. Only the fields the kind uses
/// are meaningful; the others keep their defaults.
struct TypeArgs {
  Kind kind = Kind::Primitive;
  Primitive primitive = Primitive::Byte; ///< Primitive
  int64_t count = 0;                     ///< contiguous, vector, hvector
  int64_t blocklen = 0; ///< vector, hvector, indexed_block, hindexed_block
  int64_t stride = 0; ///< vector (in extents of the old type), hvector (bytes)
  std::vector<int64_t> blocklens; ///< indexed, hindexed, struct
  /// indexed, indexed_block: in extents of the old type; hindexed,
  /// hindexed_block, struct: in bytes.
  std::vector<int64_t> displs;
  std::vector<int64_t> sizes;         ///< subarray sizes, darray gsizes
  std::vector<int64_t> subsizes;      ///< subarray
  std::vector<int64_t> starts;        ///< subarray
  Order order = Order::C;             ///< subarray, darray
  int64_t commSize = 0;               ///< darray `size`
  int64_t rank = 0;                   ///< darray
  std::vector<Distribution> distribs; ///< darray
  std::vector<int64_t> dargs;         ///< darray; kDefaultDarg for default
  std::vector<int64_t> psizes;        ///< darray
  int64_t lb = 0, extent = 0;         ///< resized
  /// The old type; struct has one per block.
  std::vector<TypeRef> children;
};

/// The MPI layout figures of a type (MPI_Type_size, MPI_Type_get_extent,
/// MPI_Type_get_true_extent), and what the MPI library keeps to compute the
/// figures of types built from it.
struct LayoutInfo {
  int64_t size = 0;
  int64_t lb = 0, extent = 0;
  /// The true bounds; both 0 when the type holds no data.
  int64_t trueLb = 0, trueExtent = 0;
  /// The alignment the extent is rounded to (0 for an empty type).
  int64_t align = 1;
  /// Bounds set explicitly (by resized, subarray, darray). They stick: a type
  /// built from it takes its lb (ub) only from such bounds, and its extent is
  /// not rounded to the alignment.
  bool explicitLb = false, explicitUb = false;
  /// True when the type holds at least one byte of data.
  bool hasData = false;
  /// True when the data is one run [trueLb, trueUb) in ascending pack order.
  bool contiguousData = false;
  /// True when one instance is the single run [lb, lb + size) and
  /// extent == size: consecutive instances are one run.
  bool dense = false;
  int64_t ub() const { return lb + extent; }
  int64_t trueUb() const { return trueLb + trueExtent; }
};

class Datatype {
public:
  /// Checks `args` against the MPI rules and computes the layout. Returns null
  /// and sets `error` to the rule that was broken when they are invalid or a
  /// figure of the layout overflows 64 bits.
  static TypeRef create(TypeArgs args, std::string &error);

  /// Shorthands that build valid types or return null with `error` set.
  static TypeRef primitive(Primitive p);
  static TypeRef contiguous(int64_t count, TypeRef old, std::string &error);
  static TypeRef vector(int64_t count, int64_t blocklen, int64_t stride,
                        TypeRef old, std::string &error);
  static TypeRef hvector(int64_t count, int64_t blocklen, int64_t strideBytes,
                         TypeRef old, std::string &error);
  static TypeRef resized(int64_t lb, int64_t extent, TypeRef old,
                         std::string &error);

  Kind kind() const { return args_.kind; }
  const TypeArgs &args() const { return args_; }
  const LayoutInfo &layout() const { return layout_; }
  const TypeRef &child(size_t i = 0) const { return args_.children[i]; }
  size_t numChildren() const { return args_.children.size(); }
  /// The structural hash of the tree (see hashTree).
  const Hash128 &hash() const { return hash_; }

private:
  explicit Datatype(TypeArgs args) : args_(std::move(args)) {}
  TypeArgs args_;
  LayoutInfo layout_;
  Hash128 hash_;
};

/// Returns the first MPI rule that the arguments of one constructor call
/// break (its children are taken as valid), or an empty string. This is the
/// one list of argument rules: the spec parser, the dialect verifier and the
/// MPI importer all report its messages.
std::string checkArguments(const TypeArgs &args);

/// For (h)indexed, (h)indexed_block and struct calls: the number of old-type
/// copies in block i, and the byte displacement of block i (indexed and
/// indexed_block count displacements in extents of the old type). Only for
/// validated types, whose displacements fit in 64 bits.
int64_t getBlockLength(const TypeArgs &args, size_t i);
int64_t getBlockDisplacement(const TypeArgs &args, size_t i, int64_t oldExtent);

/// Structural equality of two trees (same constructors, same arguments).
/// Trees of different hashes are different: answered without a walk.
bool equalTrees(const Datatype &a, const Datatype &b);

/// The hash of a datatype tree: of each constructor and the arguments its
/// signature lists (what the spec printer writes), so trees equal under
/// equalTrees hash equal whatever spec text, MPI handle or C API calls they
/// came from, and changing any argument anywhere changes it (but for 128-bit
/// collisions). Kept in the root node: no walk.
inline const Hash128 &hashTree(const Datatype &type) { return type.hash(); }

} // namespace ddtc

#endif // DDTC_CORE_DATATYPE_H
