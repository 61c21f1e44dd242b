//===- DDTTree.h - Between ddt ops and datatype trees -----------*- C++ -*-===//
//
// A definition's tree is built once, by one walk over its body in order, so
// the cost is linear in the ops; a ddt.ref is resolved to the tree of the
// definition it names, which is built once too (DefinitionTrees).
//===----------------------------------------------------------------------===//

#ifndef DDTC_DIALECT_DDT_DDTTREE_H
#define DDTC_DIALECT_DDT_DDTTREE_H

#include "ddtc/Core/Datatype.h"
#include "ddtc/Dialect/DDT/DDTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace ddtc::ddt {

/// Resolves a ddt.ref to the tree of the definition it names. On failure it
/// returns null and sets `error` and `errorOp` (the op to report on); null
/// with an empty `error` means the reference is not resolved here.
using RefResolver = llvm::function_ref<TypeRef(RefOp ref, std::string &error,
                                               mlir::Operation *&errorOp)>;

/// What buildTree does with an operand it has no tree for (an unresolved
/// reference, or a value computed after its use).
enum class Unresolved {
  Fail, ///< an error: every operand must be known (verified IR)
  Skip  ///< leave the ops that depend on it unchecked (the verifier)
};

/// The datatype tree `define` yields, walking its body once in order. Returns
/// null and sets `error` and `errorOp` (the op at fault) when an op breaks a
/// rule or an operand is not computed by an earlier ddt op; with
/// Unresolved::Skip it returns null with an empty `error` when the yielded
/// value depends on something unresolved. Null too when `define` is already
/// normalized (no yield).
TypeRef buildTree(DefineOp define, RefResolver resolve, std::string &error,
                  mlir::Operation **errorOp = nullptr,
                  Unresolved unresolved = Unresolved::Fail);

/// The definition a ddt.ref names, or null with `error` set: it must be a
/// ddt.define of constructor ops that comes before the reference in the same
/// block (so references never form a cycle).
DefineOp lookupReferencedDefine(RefOp ref, mlir::SymbolTableCollection &symbols,
                                std::string &error);

/// The trees of the definitions of one module, each built once; a ddt.ref
/// resolves to the tree of the definition it names.
class DefinitionTrees {
public:
  /// The tree `define` yields; null with `error` and `errorOp` set when it
  /// (or a definition it refers to) breaks a rule, or is normalized.
  TypeRef get(DefineOp define, std::string &error,
              mlir::Operation **errorOp = nullptr);

private:
  mlir::SymbolTableCollection symbols;
  llvm::DenseMap<mlir::Operation *, TypeRef> trees;
};

/// Datatypes already named by earlier definitions: buildOps refers to them
/// with a ddt.ref instead of copying their ops.
using NamedTypes = llvm::DenseMap<const Datatype *, std::string>;

/// Creates the ops that compute `type` at the builder's insertion point and
/// returns the final value; subtrees shared in `type` share one value and a
/// subtree listed in `named` is a ddt.ref.
mlir::Value buildOps(mlir::OpBuilder &builder, mlir::Location loc,
                     const Datatype &type,
                     const NamedTypes &named = NamedTypes());

/// Creates `ddt.define @name { ... }` for `type`, referring to the
/// definitions in `named` where `type` uses them.
DefineOp buildDefine(mlir::OpBuilder &builder, mlir::Location loc,
                     llvm::StringRef name, const Datatype &type,
                     const NamedTypes &named = NamedTypes());

} // namespace ddtc::ddt

#endif // DDTC_DIALECT_DDT_DDTTREE_H
