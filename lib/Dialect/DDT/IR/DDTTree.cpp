//===- DDTTree.cpp - Between ddt ops and datatype trees -------------------===//

#include "ddtc/Dialect/DDT/DDTTree.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace ddtc;
using namespace ddtc::ddt;

namespace {
/// Creates the op of the root of `t`, whose old types are `olds`.
Value createOp(OpBuilder &b, Location loc, const Datatype &t,
               ArrayRef<Value> olds) {
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
    result = IndexedBlockOp::create(b, loc, dt, i64(a.blocklen), list(a.displs),
                                    old);
    break;
  case Kind::HIndexedBlock:
    result = HIndexedBlockOp::create(b, loc, dt, i64(a.blocklen),
                                     list(a.displs), old);
    break;
  case Kind::Struct:
    result =
        StructOp::create(b, loc, dt, list(a.blocklens), list(a.displs), olds);
    break;
  case Kind::Subarray:
    result = SubarrayOp::create(b, loc, dt, list(a.sizes), list(a.subsizes),
                                list(a.starts),
                                OrderAttr::get(b.getContext(), a.order), old);
    break;
  case Kind::Darray: {
    SmallVector<Attribute> distribs;
    for (Distribution d : a.distribs)
      distribs.push_back(DistributionAttr::get(b.getContext(), d));
    result = DarrayOp::create(b, loc, dt, i64(a.commSize), i64(a.rank),
                              list(a.sizes), b.getArrayAttr(distribs),
                              list(a.dargs), list(a.psizes),
                              OrderAttr::get(b.getContext(), a.order), old);
    break;
  }
  case Kind::Resized:
    result = ResizedOp::create(b, loc, dt, i64(a.lb), i64(a.extent), old);
    break;
  case Kind::Dup:
    result = DupOp::create(b, loc, dt, old);
    break;
  }
  return result;
}
} // namespace

/// Whether `v` is computed by a ddt op (constructor or reference) in `block`.
static bool isComputedByDDTOpIn(Value v, Block *block) {
  Operation *def = v.getDefiningOp();
  return def && def->getBlock() == block &&
         (isa<RefOp>(def) || isa<ConstructorOpInterface>(def));
}

TypeRef ddtc::ddt::buildTree(DefineOp define, RefResolver resolve,
                             std::string &error, Operation **errorOp,
                             Unresolved unresolved) {
  error.clear();
  auto fail = [&](Operation *op, std::string message) -> TypeRef {
    error = std::move(message);
    if (errorOp)
      *errorOp = op;
    return nullptr;
  };
  Value yielded = define.getYieldedType();
  if (!yielded)
    return fail(define, "@" + define.getSymName().str() +
                            " is already normalized: its body is a "
                            "ddt.layout, not constructor ops");
  Block *body = &define.getBody().front();
  // Ops are visited in body order, so every value is built once and a value
  // computed later than its use (a cycle included) is never followed.
  llvm::DenseMap<Value, TypeRef> built;
  // Why operand `v` of `user` has no tree; empty when skipping is allowed.
  auto whyMissing = [&](Value v, Operation *user,
                        const std::string &what) -> std::string {
    if (!isComputedByDDTOpIn(v, body))
      return what + " must be computed by a ddt constructor or ddt.ref op "
                    "of the same definition";
    if (unresolved == Unresolved::Skip)
      return "";
    if (user->isBeforeInBlock(v.getDefiningOp()) || v.getDefiningOp() == user)
      return what + " is not computed before its use";
    return what + " depends on a reference that is not resolved";
  };
  for (Operation &op : *body) {
    if (auto ref = dyn_cast<RefOp>(op)) {
      std::string why;
      Operation *at = &op;
      if (TypeRef t = resolve(ref, why, at))
        built[ref.getResult()] = std::move(t);
      else if (!why.empty())
        return fail(at, why);
      else if (unresolved == Unresolved::Fail)
        return fail(&op, "the reference to @" + ref.getName().str() +
                             " is not resolved");
      continue;
    }
    auto ctor = dyn_cast<ConstructorOpInterface>(op);
    if (!ctor)
      continue;
    TypeArgs args;
    ctor.getTypeArgs(args);
    if (auto prim = dyn_cast<PrimitiveOp>(op))
      if (!lookupPrimitive(prim.getName()))
        return fail(&op, "unknown MPI primitive type '" + prim.getName().str() +
                             "'");
    bool complete = true;
    for (auto [i, operand] : llvm::enumerate(op.getOperands())) {
      if (auto it = built.find(operand); it != built.end()) {
        args.children.push_back(it->second);
        continue;
      }
      std::string why =
          whyMissing(operand, &op, "operand #" + std::to_string(i));
      if (!why.empty())
        return fail(&op, why);
      complete = false;
      break;
    }
    if (!complete)
      continue;
    std::string rule;
    TypeRef type = Datatype::create(std::move(args), rule);
    if (!type)
      return fail(&op, rule);
    built[op.getResult(0)] = std::move(type);
  }
  if (auto it = built.find(yielded); it != built.end())
    return it->second;
  Operation *yield = &body->back();
  std::string why = whyMissing(yielded, yield, "the yielded datatype");
  return why.empty() ? nullptr : fail(yield, why);
}

DefineOp ddtc::ddt::lookupReferencedDefine(RefOp ref,
                                           SymbolTableCollection &symbols,
                                           std::string &error) {
  std::string name = "@" + ref.getName().str();
  auto define = dyn_cast_or_null<DefineOp>(
      symbols.lookupNearestSymbolFrom(ref, ref.getNameAttr()));
  if (!define) {
    error = "refers to " + name + ", which is not a ddt.define";
    return nullptr;
  }
  // Only an earlier definition: references then never form a cycle.
  Operation *user = define->getBlock()->findAncestorOpInBlock(*ref);
  if (!user || !define->isBeforeInBlock(user)) {
    error = "refers to " + name + ", which is not defined before this use";
    return nullptr;
  }
  if (!define.getYieldedType()) {
    error = "refers to " + name +
            ", which is already normalized (a ddt.layout cannot be an old "
            "type)";
    return nullptr;
  }
  return define;
}

TypeRef DefinitionTrees::get(DefineOp define, std::string &error,
                             Operation **errorOp) {
  if (auto it = trees.find(define); it != trees.end())
    return it->second;
  auto resolve = [&](RefOp ref, std::string &why, Operation *&at) -> TypeRef {
    DefineOp target = lookupReferencedDefine(ref, symbols, why);
    if (!target)
      return nullptr;
    // Definitions are usually asked for in order, so this is a cache hit.
    return get(target, why, &at);
  };
  TypeRef tree = buildTree(define, resolve, error, errorOp);
  if (tree)
    trees[define] = tree;
  return tree;
}

Value ddtc::ddt::buildOps(OpBuilder &builder, Location loc,
                          const Datatype &type, const NamedTypes &named) {
  // Depth first with an explicit stack: a spec may nest thousands deep.
  llvm::DenseMap<const Datatype *, Value> done;
  SmallVector<std::pair<const Datatype *, bool>> stack = {{&type, false}};
  while (!stack.empty()) {
    auto [t, childrenDone] = stack.pop_back_val();
    if (done.count(t))
      continue;
    if (auto it = named.find(t); it != named.end()) {
      done[t] = RefOp::create(
          builder, loc, DatatypeType::get(builder.getContext()),
          FlatSymbolRefAttr::get(builder.getContext(), it->second));
      continue;
    }
    if (!childrenDone) {
      stack.push_back({t, true});
      // Reversed, so the first old type's ops come first.
      for (const TypeRef &c : llvm::reverse(t->args().children))
        if (!done.count(c.get()))
          stack.push_back({c.get(), false});
      continue;
    }
    SmallVector<Value> olds;
    for (const TypeRef &c : t->args().children)
      olds.push_back(done.lookup(c.get()));
    done[t] = createOp(builder, loc, *t, olds);
  }
  return done.lookup(&type);
}

DefineOp ddtc::ddt::buildDefine(OpBuilder &builder, Location loc,
                                llvm::StringRef name, const Datatype &type,
                                const NamedTypes &named) {
  auto define = DefineOp::create(builder, loc, builder.getStringAttr(name));
  Block *body = new Block();
  define.getBody().push_back(body);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  Value v = buildOps(builder, loc, type, named);
  YieldOp::create(builder, loc, v);
  return define;
}
