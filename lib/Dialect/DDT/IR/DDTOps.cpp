//===- DDTOps.cpp - Ops of the ddt dialect --------------------------------===//
//
// The ops only describe their arguments (getTypeArgs); the MPI rules and the
// layout figures come from ddtc's core library, so the verifier, the spec
// parser and the MPI importer report the same messages.
//===----------------------------------------------------------------------===//

#include "ddtc/Dialect/DDT/DDTOps.h"
#include "ddtc/Dialect/DDT/DDTTree.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace ddtc;
using namespace ddtc::ddt;

#include "ddtc/Dialect/DDT/DDTInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Custom assembly
//===----------------------------------------------------------------------===//

static ParseResult parsePrimitiveName(OpAsmParser &parser, StringAttr &name) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<Primitive> prim = lookupPrimitive(word);
  if (!prim)
    return parser.emitError(loc, "unknown MPI primitive type '") << word << "'";
  name = parser.getBuilder().getStringAttr(getPrimitiveInfo(*prim).mpiName);
  return success();
}

static void printPrimitiveName(OpAsmPrinter &p, Operation *, StringAttr name) {
  p << name.getValue();
}

static ParseResult parseArrayOrder(OpAsmParser &parser, OrderAttr &order) {
  FailureOr<Order> value =
      parseEnumKeyword(parser, kOrders, getOrderName, "array order");
  if (failed(value))
    return failure();
  order = OrderAttr::get(parser.getContext(), *value);
  return success();
}

static void printArrayOrder(OpAsmPrinter &p, Operation *, OrderAttr order) {
  p << getOrderName(order.getValue());
}

static ParseResult parseDistributions(OpAsmParser &parser,
                                      ArrayAttr &distribs) {
  SmallVector<Attribute> values;
  auto parseOne = [&]() -> ParseResult {
    FailureOr<Distribution> d = parseEnumKeyword(
        parser, kDistributions, getDistributionName, "distribution");
    if (failed(d))
      return failure();
    values.push_back(DistributionAttr::get(parser.getContext(), *d));
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseOne))
    return failure();
  distribs = parser.getBuilder().getArrayAttr(values);
  return success();
}

static void printDistributions(OpAsmPrinter &p, Operation *,
                               ArrayAttr distribs) {
  p << '[';
  llvm::interleaveComma(distribs, p, [&](Attribute d) {
    if (auto distribution = dyn_cast<DistributionAttr>(d))
      p << getDistributionName(distribution.getValue());
    else
      p.printAttribute(d); // invalid; the verifier says so
  });
  p << ']';
}

static ParseResult parseDargs(OpAsmParser &parser, DenseI64ArrayAttr &dargs) {
  SmallVector<int64_t> values;
  auto parseOne = [&]() -> ParseResult {
    if (succeeded(parser.parseOptionalKeyword("default"))) {
      values.push_back(kDefaultDarg);
      return success();
    }
    int64_t v;
    if (parser.parseInteger(v))
      return failure();
    values.push_back(v);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseOne))
    return failure();
  dargs = parser.getBuilder().getDenseI64ArrayAttr(values);
  return success();
}

static void printDargs(OpAsmPrinter &p, Operation *, DenseI64ArrayAttr dargs) {
  p << '[';
  llvm::interleaveComma(dargs.asArrayRef(), p, [&](int64_t d) {
    if (d == kDefaultDarg)
      p << "default";
    else
      p << d;
  });
  p << ']';
}

//===----------------------------------------------------------------------===//
// Arguments of each constructor
//===----------------------------------------------------------------------===//

static std::vector<int64_t> toVector(ArrayRef<int64_t> a) {
  return std::vector<int64_t>(a.begin(), a.end());
}

void PrimitiveOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::Primitive;
  if (std::optional<Primitive> p = lookupPrimitive(getName()))
    args.primitive = *p;
}

void ContiguousOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::Contiguous;
  args.count = getCount();
}

void VectorOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::Vector;
  args.count = getCount();
  args.blocklen = getBlocklen();
  args.stride = getStride();
}

void HVectorOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::HVector;
  args.count = getCount();
  args.blocklen = getBlocklen();
  args.stride = getStride();
}

void IndexedOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::Indexed;
  args.blocklens = toVector(getBlocklens());
  args.displs = toVector(getDispls());
}

void HIndexedOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::HIndexed;
  args.blocklens = toVector(getBlocklens());
  args.displs = toVector(getDispls());
}

void IndexedBlockOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::IndexedBlock;
  args.blocklen = getBlocklen();
  args.displs = toVector(getDispls());
}

void HIndexedBlockOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::HIndexedBlock;
  args.blocklen = getBlocklen();
  args.displs = toVector(getDispls());
}

void StructOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::Struct;
  args.blocklens = toVector(getBlocklens());
  args.displs = toVector(getDispls());
}

void SubarrayOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::Subarray;
  args.sizes = toVector(getSizes());
  args.subsizes = toVector(getSubsizes());
  args.starts = toVector(getStarts());
  args.order = getOrder();
}

void DarrayOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::Darray;
  args.commSize = getSize();
  args.rank = getRank();
  args.sizes = toVector(getGsizes());
  // Called by the verifier, after the attribute constraints held.
  for (Attribute d : getDistribs())
    if (auto distribution = dyn_cast<DistributionAttr>(d))
      args.distribs.push_back(distribution.getValue());
  args.dargs = toVector(getDargs());
  args.psizes = toVector(getPsizes());
  args.order = getOrder();
}

void ResizedOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::Resized;
  args.lb = getLb();
  args.extent = getExtent();
}

void DupOp::getTypeArgs(TypeArgs &args) { args.kind = Kind::Dup; }

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

LogicalResult ddtc::ddt::verifyConstructorOp(Operation *op) {
  if (auto prim = dyn_cast<PrimitiveOp>(op))
    if (!lookupPrimitive(prim.getName()))
      return op->emitOpError("unknown MPI primitive type '")
             << prim.getName() << "'";
  TypeArgs args;
  cast<ConstructorOpInterface>(op).getTypeArgs(args);
  args.children.resize(op->getNumOperands());
  if (std::string rule = checkArguments(args); !rule.empty())
    return op->emitOpError(rule);
  // Only the op's own arguments: the layout, which can overflow only with
  // the old types, is checked once per definition (DefineOp::verifyRegions).
  return success();
}

LogicalResult DefineOp::verifyRegions() {
  // One walk over the body builds the tree and reports an overflow on the op
  // where it appears. References are resolved by the passes and ddtc, which
  // see the whole module; what depends on one is left to them, and a value
  // used before it is computed to the dominance check.
  auto unresolved = [](RefOp, std::string &, Operation *&) -> TypeRef {
    return nullptr;
  };
  if (!getYieldedType())
    return success(); // normalized: the ddt.layout checks itself
  std::string error;
  Operation *culprit = nullptr;
  if (!buildTree(*this, unresolved, error, &culprit, Unresolved::Skip) &&
      !error.empty())
    return culprit->emitOpError(error);
  return success();
}

LogicalResult RefOp::verifySymbolUses(SymbolTableCollection &symbols) {
  std::string error;
  if (!lookupReferencedDefine(*this, symbols, error))
    return emitOpError(error);
  return success();
}

Value DefineOp::getYieldedType() {
  // Also called on IR being verified, whose body may be empty.
  if (getBody().empty() || getBody().front().empty())
    return Value();
  if (auto yield = dyn_cast<YieldOp>(getBody().front().back()))
    return yield.getDatatype();
  return Value();
}

#define GET_OP_CLASSES
#include "ddtc/Dialect/DDT/DDTOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Canonical layout
//===----------------------------------------------------------------------===//

LogicalResult SegmentOp::verify() {
  if (getCounts().size() != getStrides().size())
    return emitOpError("has ") << getCounts().size() << " dimension counts but "
                               << getStrides().size() << " strides";
  for (auto [i, c] : llvm::enumerate(getCounts()))
    if (c < 1)
      return emitOpError("dimension ")
             << i << " count must be at least 1, got " << c;
  if (getRunOffsets().size() != getRunLengths().size())
    return emitOpError("has ") << getRunOffsets().size() << " run offsets but "
                               << getRunLengths().size() << " run lengths";
  if (getRunLengths().empty())
    return emitOpError("needs at least one run");
  for (auto [i, l] : llvm::enumerate(getRunLengths()))
    if (l < 1)
      return emitOpError("run ")
             << i << " length must be at least 1, got " << l;
  return success();
}

LogicalResult LayoutOp::verify() {
  int64_t packed = 0;
  bool overflow = false;
  for (auto seg : getBody().front().getOps<SegmentOp>()) {
    int64_t bytes = 0, points = 1;
    for (int64_t l : seg.getRunLengths())
      overflow |= __builtin_add_overflow(bytes, l, &bytes);
    for (int64_t c : seg.getCounts())
      overflow |= __builtin_mul_overflow(points, c, &points);
    overflow |= __builtin_mul_overflow(points, bytes, &bytes);
    overflow |= __builtin_add_overflow(packed, bytes, &packed);
  }
  if (overflow)
    return emitOpError("segments pack more than 2^63 bytes");
  if (packed != static_cast<int64_t>(getSize()))
    return emitOpError("size ")
           << static_cast<int64_t>(getSize()) << " does not match the "
           << packed << " bytes its segments pack";
  if (auto width = getWidth()) {
    int64_t w = static_cast<int64_t>(*width);
    if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16)
      return emitOpError("width must be 1, 2, 4, 8 or 16, got ") << w;
  }
  if (auto units = getUnits())
    if (units->size() % 4 != 0)
      return emitOpError("units must hold quadruples (packed, source, "
                         "length, wide), got ")
             << units->size() << " values";
  if (auto tile = getTileDim()) {
    // The tile kernels pair a dimension with the innermost one of the one
    // strided segment.
    auto segs = getBody().front().getOps<SegmentOp>();
    int64_t d = static_cast<int64_t>(*tile);
    if (std::distance(segs.begin(), segs.end()) != 1 ||
        (*segs.begin()).getRunLengths().size() != 1 || d < 0 ||
        d + 1 >= static_cast<int64_t>((*segs.begin()).getCounts().size()))
      return emitOpError("tile_dim needs one strided segment and names one "
                         "of its dimensions but the innermost, got ")
             << d;
  }
  return success();
}
