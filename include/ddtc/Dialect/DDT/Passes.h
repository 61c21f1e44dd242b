//===- Passes.h - Passes of the ddt dialect -----------------------*- C++ -*-===//

#ifndef DDTC_DIALECT_DDT_PASSES_H
#define DDTC_DIALECT_DDT_PASSES_H

#include "ddtc/Dialect/DDT/DDTOps.h"

#include "mlir/Pass/Pass.h"

namespace ddtc::ddt {

#define GEN_PASS_DECL
#include "ddtc/Dialect/DDT/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ddtc/Dialect/DDT/Passes.h.inc"

} // namespace ddtc::ddt

#endif // DDTC_DIALECT_DDT_PASSES_H
