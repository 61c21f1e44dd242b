//===- DDTDialect.cpp - The ddt dialect -----------------------------------===//

#include "ddtc/Dialect/DDT/DDTDialect.h"
#include "ddtc/Dialect/DDT/DDTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace ddtc::ddt;

#include "ddtc/Dialect/DDT/DDTOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "ddtc/Dialect/DDT/DDTOpsTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ddtc/Dialect/DDT/DDTOpsAttributes.cpp.inc"

void DDTDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ddtc/Dialect/DDT/DDTOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "ddtc/Dialect/DDT/DDTOpsTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ddtc/Dialect/DDT/DDTOpsAttributes.cpp.inc"
      >();
}
