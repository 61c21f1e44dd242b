//===- DDTDialect.h - The ddt dialect ---------------------------*- C++ -*-===//

#ifndef DDTC_DIALECT_DDT_DDTDIALECT_H
#define DDTC_DIALECT_DDT_DDTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ddtc/Dialect/DDT/DDTOpsDialect.h.inc"

#endif // DDTC_DIALECT_DDT_DDTDIALECT_H
