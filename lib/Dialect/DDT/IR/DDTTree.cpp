//===- DDTTree.cpp - Between ddt ops and datatype trees ---------------------===//

#include "ddtc/Dialect/DDT/DDTTree.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace ddtc;
using namespace ddtc::ddt;

namespace {
struct TreeBuilder {
  llvm::DenseMap<Value, TypeRef> built;
  std::string error;
  Operation *errorOp = nullptr;

  TypeRef build(Value value) {
    if (auto it = built.find(value); it != built.end())
      return it->second;
    Operation *op = value.getDefiningOp();
    auto ctor = dyn_cast_or_null<ConstructorOpInterface>(op);
    if (!ctor) {
      error = "a datatype must be computed by a ddt constructor op";
      errorOp = op;
      return nullptr;
    }
    TypeArgs args;
    ctor.getTypeArgs(args);
    if (auto prim = dyn_cast<PrimitiveOp>(op))
      if (!lookupPrimitive(prim.getName())) {
        error = "unknown MPI primitive type '" + prim.getName().str() + "'";
        errorOp = op;
        return nullptr;
      }
    for (Value operand : op->getOperands()) {
      TypeRef child = build(operand);
      if (!child)
        return nullptr;
      args.children.push_back(std::move(child));
    }
    TypeRef type = Datatype::create(std::move(args), error);
    if (!type) {
      errorOp = op;
      return nullptr;
    }
    built[value] = type;
    return type;
  }
};

Value emitOps(OpBuilder &b, Location loc, const Datatype &t,
              llvm::DenseMap<const Datatype *, Value> &done) {
  if (auto it = done.find(&t); it != done.end())
    return it->second;
  SmallVector<Value> olds;
  for (const TypeRef &c : t.args().children)
    olds.push_back(emitOps(b, loc, *c, done));
  const TypeArgs &a = t.args();
  Value old = olds.empty() ? Value() : olds.front();
  Type dt = DatatypeType::get(b.getContext());
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  auto list = [&](const std::vector<int64_t> &v) {
    return b.getDenseI64ArrayAttr(v);
  };
  Value result;
  switch (a.kind) {
  case Kind::Primitive:
    result = PrimitiveOp::create(
        b, loc, dt, b.getStringAttr(getPrimitiveInfo(a.primitive).mpiName));
    break;
  case Kind::Contiguous:
    result = ContiguousOp::create(b, loc, dt, i64(a.count), old);
    break;
  case Kind::Vector:
    result = VectorOp::create(b, loc, dt, i64(a.count), i64(a.blocklen),
                              i64(a.stride), old);
    break;
  case Kind::HVector:
    result = HVectorOp::create(b, loc, dt, i64(a.count), i64(a.blocklen),
                               i64(a.stride), old);
    break;
  case Kind::Indexed:
    result =
        IndexedOp::create(b, loc, dt, list(a.blocklens), list(a.displs), old);
    break;
  case Kind::HIndexed:
    result =
        HIndexedOp::create(b, loc, dt, list(a.blocklens), list(a.displs), old);
    break;
  case Kind::IndexedBlock:
    result = IndexedBlockOp::create(b, loc, dt, i64(a.blocklen),
                                    list(a.displs), old);
    break;
  case Kind::HIndexedBlock:
    result = HIndexedBlockOp::create(b, loc, dt, i64(a.blocklen),
                                     list(a.displs), old);
    break;
  case Kind::Struct:
    result = StructOp::create(b, loc, dt, list(a.blocklens), list(a.displs),
                              olds);
    break;
  case Kind::Subarray:
    result = SubarrayOp::create(b, loc, dt, list(a.sizes), list(a.subsizes),
                                list(a.starts),
                                b.getBoolAttr(a.order == Order::Fortran), old);
    break;
  case Kind::Darray: {
    SmallVector<int32_t> distribs;
    for (Distribution d : a.distribs)
      distribs.push_back(static_cast<int32_t>(d));
    result = DarrayOp::create(b, loc, dt, i64(a.commSize), i64(a.rank),
                              list(a.sizes), b.getDenseI32ArrayAttr(distribs),
                              list(a.dargs), list(a.psizes),
                              b.getBoolAttr(a.order == Order::Fortran), old);
    break;
  }
  case Kind::Resized:
    result = ResizedOp::create(b, loc, dt, i64(a.lb), i64(a.extent), old);
    break;
  case Kind::Dup:
    result = DupOp::create(b, loc, dt, old);
    break;
  }
  done[&t] = result;
  return result;
}
} // namespace

TypeRef ddtc::ddt::buildTree(Value value, std::string &error,
                             Operation **errorOp) {
  TreeBuilder tb;
  TypeRef type = tb.build(value);
  if (!type) {
    error = tb.error;
    if (errorOp)
      *errorOp = tb.errorOp;
  }
  return type;
}

Value ddtc::ddt::buildOps(OpBuilder &builder, Location loc,
                          const Datatype &type) {
  llvm::DenseMap<const Datatype *, Value> done;
  return emitOps(builder, loc, type, done);
}

DefineOp ddtc::ddt::buildDefine(OpBuilder &builder, Location loc,
                                llvm::StringRef name, const Datatype &type) {
  auto define = DefineOp::create(builder, loc, builder.getStringAttr(name));
  Block *body = new Block();
  define.getBody().push_back(body);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  Value v = buildOps(builder, loc, type);
  YieldOp::create(builder, loc, v);
  return define;
}
