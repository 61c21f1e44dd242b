//===- DDTOps.cpp - Ops of the ddt dialect ----------------------------------===//
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
    return parser.emitError(loc, "unknown MPI primitive type '")
           << word << "'";
  name = parser.getBuilder().getStringAttr(getPrimitiveInfo(*prim).mpiName);
  return success();
}

static void printPrimitiveName(OpAsmPrinter &p, Operation *, StringAttr name) {
  p << name.getValue();
}

static ParseResult parseArrayOrder(OpAsmParser &parser, BoolAttr &fortran) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  if (word != "C" && word != "Fortran")
    return parser.emitError(loc, "expected array order 'C' or 'Fortran'");
  fortran = parser.getBuilder().getBoolAttr(word == "Fortran");
  return success();
}

static void printArrayOrder(OpAsmPrinter &p, Operation *, BoolAttr fortran) {
  p << (fortran.getValue() ? "Fortran" : "C");
}

static ParseResult parseDistributions(OpAsmParser &parser,
                                      DenseI32ArrayAttr &distribs) {
  SmallVector<int32_t> values;
  auto parseOne = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef word;
    if (parser.parseKeyword(&word))
      return failure();
    for (Distribution d :
         {Distribution::Block, Distribution::Cyclic, Distribution::None})
      if (word == getDistributionName(d)) {
        values.push_back(static_cast<int32_t>(d));
        return success();
      }
    return parser.emitError(loc,
                            "expected distribution 'block', 'cyclic' or 'none'");
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseOne))
    return failure();
  distribs = parser.getBuilder().getDenseI32ArrayAttr(values);
  return success();
}

static void printDistributions(OpAsmPrinter &p, Operation *,
                               DenseI32ArrayAttr distribs) {
  p << '[';
  llvm::interleaveComma(distribs.asArrayRef(), p, [&](int32_t d) {
    if (d >= 0 && d <= 2)
      p << getDistributionName(static_cast<Distribution>(d));
    else
      p << d; // invalid; the verifier says so
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
  args.order = getFortran() ? Order::Fortran : Order::C;
}

void DarrayOp::getTypeArgs(TypeArgs &args) {
  args.kind = Kind::Darray;
  args.commSize = getSize();
  args.rank = getRank();
  args.sizes = toVector(getGsizes());
  for (int32_t d : getDistribs())
    args.distribs.push_back(static_cast<Distribution>(d));
  args.dargs = toVector(getDargs());
  args.psizes = toVector(getPsizes());
  args.order = getFortran() ? Order::Fortran : Order::C;
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
  if (auto darray = dyn_cast<DarrayOp>(op))
    for (int32_t d : darray.getDistribs())
      if (d < 0 || d > 2)
        return op->emitOpError("distribution code ")
               << d << " is not block (0), cyclic (1) or none (2)";
  TypeArgs args;
  cast<ConstructorOpInterface>(op).getTypeArgs(args);
  args.children.resize(op->getNumOperands());
  if (std::string rule = checkArguments(args); !rule.empty())
    return op->emitOpError(rule);
  // The layout of the whole tree: overflow shows only with the old types.
  std::string error;
  Operation *culprit = nullptr;
  if (!buildTree(op->getResult(0), error, &culprit) && culprit == op)
    return op->emitOpError(error);
  return success();
}

Value DefineOp::getYieldedType() {
  return cast<YieldOp>(getBody().front().getTerminator()).getDatatype();
}

#define GET_OP_CLASSES
#include "ddtc/Dialect/DDT/DDTOps.cpp.inc"
