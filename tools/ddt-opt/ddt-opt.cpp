//===- ddt-opt.cpp - Runs ddt passes on textual IR ------------------------===//
//
// The MLIR driver for the ddt dialect: parses, verifies, runs passes and
// prints. Used by the lit tests.
//===----------------------------------------------------------------------===//

#include "ddtc/Dialect/DDT/DDTDialect.h"
#include "ddtc/Dialect/DDT/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  // --version adds the ddtc version to the LLVM one.
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "ddtc " << DDTC_VERSION << "\n"; });
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  ddtc::ddt::registerDDTPasses();
  ddtc::ddt::registerPlanningPipeline();
  mlir::DialectRegistry registry;
  registry.insert<ddtc::ddt::DDTDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "ddt optimizer driver\n", registry));
}
