//===- DDTOps.h - Ops and types of the ddt dialect ----------------*- C++ -*-===//

#ifndef DDTC_DIALECT_DDT_DDTOPS_H
#define DDTC_DIALECT_DDT_DDTOPS_H

#include "ddtc/Core/Datatype.h"
#include "ddtc/Dialect/DDT/DDTDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_TYPEDEF_CLASSES
#include "ddtc/Dialect/DDT/DDTOpsTypes.h.inc"

namespace ddtc::ddt {
/// Checks a constructor op against the MPI rules and the 64-bit layout limit.
mlir::LogicalResult verifyConstructorOp(mlir::Operation *op);
} // namespace ddtc::ddt

#include "ddtc/Dialect/DDT/DDTInterfaces.h.inc"

#define GET_OP_CLASSES
#include "ddtc/Dialect/DDT/DDTOps.h.inc"

#endif // DDTC_DIALECT_DDT_DDTOPS_H
