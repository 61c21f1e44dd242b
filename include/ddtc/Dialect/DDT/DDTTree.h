//===- DDTTree.h - Between ddt ops and datatype trees ------------*- C++ -*-===//

#ifndef DDTC_DIALECT_DDT_DDTTREE_H
#define DDTC_DIALECT_DDT_DDTTREE_H

#include "ddtc/Core/Datatype.h"
#include "ddtc/Dialect/DDT/DDTOps.h"

#include "mlir/IR/Builders.h"

namespace ddtc::ddt {

/// The datatype tree `value` computes. Returns null and sets `error` (and
/// `errorOp`, the constructor at fault) when an op breaks a rule.
TypeRef buildTree(mlir::Value value, std::string &error,
                  mlir::Operation **errorOp = nullptr);

/// Creates the ops that compute `type` at the builder's insertion point and
/// returns the final value; subtrees shared in `type` share one value.
mlir::Value buildOps(mlir::OpBuilder &builder, mlir::Location loc,
                     const Datatype &type);

/// Creates `ddt.define @name { ... }` for `type`.
DefineOp buildDefine(mlir::OpBuilder &builder, mlir::Location loc,
                     llvm::StringRef name, const Datatype &type);

} // namespace ddtc::ddt

#endif // DDTC_DIALECT_DDT_DDTTREE_H
