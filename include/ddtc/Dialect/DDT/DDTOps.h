//===- DDTOps.h - Ops and types of the ddt dialect --------------*- C++ -*-===//

#ifndef DDTC_DIALECT_DDT_DDTOPS_H
#define DDTC_DIALECT_DDT_DDTOPS_H

#include "ddtc/Core/Datatype.h"
#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Dialect/DDT/DDTDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_TYPEDEF_CLASSES
#include "ddtc/Dialect/DDT/DDTOpsTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ddtc/Dialect/DDT/DDTOpsAttributes.h.inc"

namespace ddtc::ddt {
/// Every value of the core enums that the dialect's attributes hold.
inline constexpr KernelFamily kKernelFamilies[] = {KernelFamily::Strided,
                                                   KernelFamily::Units};
inline constexpr Order kOrders[] = {Order::C, Order::Fortran};
inline constexpr Distribution kDistributions[] = {
    Distribution::Block, Distribution::Cyclic, Distribution::None};

/// Parses a keyword that names one of `values` (by the core library's name
/// function `name`); otherwise reports "expected <what> 'a', 'b' or 'c'".
template <typename Enum, size_t N>
mlir::FailureOr<Enum>
parseEnumKeyword(mlir::AsmParser &parser, const Enum (&values)[N],
                 const char *(*name)(Enum), llvm::StringRef what) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  llvm::StringRef word;
  if (succeeded(parser.parseOptionalKeyword(&word)))
    for (Enum v : values)
      if (word == name(v))
        return v;
  std::string expected;
  for (size_t i = 0; i < N; ++i)
    expected += (i == 0       ? ""
                 : i + 1 == N ? " or "
                              : ", ") +
                ("'" + std::string(name(values[i])) + "'");
  return parser.emitError(loc, "expected ") << what << " " << expected;
}

/// Checks a constructor op against the MPI rules and the 64-bit layout limit.
mlir::LogicalResult verifyConstructorOp(mlir::Operation *op);
} // namespace ddtc::ddt

#include "ddtc/Dialect/DDT/DDTInterfaces.h.inc"

#define GET_OP_CLASSES
#include "ddtc/Dialect/DDT/DDTOps.h.inc"

#endif // DDTC_DIALECT_DDT_DDTOPS_H
