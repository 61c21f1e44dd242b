//===- PlanningPipelineTest.cpp - The passes plan as planKernel does ------===//
//
// The runtime plans with ddtc::planKernel, without IR; ddtc and ddt-opt plan
// with the MLIR passes. Both must give the same plan for any type.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Dialect/DDT/DDTLayout.h"
#include "ddtc/Dialect/DDT/DDTTree.h"
#include "ddtc/Dialect/DDT/Passes.h"
#include "ddtc/Testing/RandomDatatype.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace ddtc;

namespace {

void expectSamePlan(const KernelPlan &ir, const KernelPlan &core,
                    const std::string &name) {
  EXPECT_EQ(ir.layout.size, core.layout.size) << name;
  EXPECT_EQ(ir.layout.lb, core.layout.lb) << name;
  EXPECT_EQ(ir.layout.extent, core.layout.extent) << name;
  EXPECT_TRUE(ir.layout.segments == core.layout.segments)
      << name << "\npasses: " << describeLayout(ir.layout)
      << "\nplanKernel: " << describeLayout(core.layout);
  EXPECT_EQ(ir.family, core.family) << name;
  EXPECT_EQ(ir.width, core.width) << name;
  EXPECT_EQ(ir.needsBytePath, core.needsBytePath) << name;
  EXPECT_TRUE(ir.units == core.units) << name;
  EXPECT_EQ(ir.tileDim, core.tileDim) << name;
  if (core.family == KernelFamily::Units) {
    EXPECT_EQ(ir.unitBytes, core.unitBytes) << name;
  }
}

TEST(PlanningPipeline, MatchesPlanKernel) {
  mlir::MLIRContext context;
  context.loadDialect<ddt::DDTDialect>();
  mlir::OpBuilder builder(&context);
  mlir::Location loc = builder.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());

  // Random trees, each also used through a reference by a later definition,
  // as ddtc writes a spec whose bindings build on each other.
  const uint64_t seed = 20261123;
  const int cases = 300;
  RandomDatatypeOptions options;
  std::vector<std::pair<std::string, TypeRef>> types;
  ddt::NamedTypes named;
  for (int i = 0; i < cases; ++i) {
    std::mt19937_64 rng(randomCaseSeed(seed, i));
    TypeRef t = generateRandomDatatype(rng, options).type;
    std::string error;
    TypeRef pair = Datatype::contiguous(2, t, error);
    ASSERT_TRUE(pair) << error;
    std::string name = "t" + std::to_string(i);
    ddt::buildDefine(builder, loc, name, *t, named);
    named.try_emplace(t.get(), name);
    ddt::buildDefine(builder, loc, "pair_" + name, *pair, named);
    types.push_back({name, t});
    types.push_back({"pair_" + name, pair});
  }

  mlir::PassManager pm(&context);
  ddt::buildPlanningPipeline(pm);
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));

  size_t i = 0;
  int families[2] = {0, 0};
  for (auto define : module->getOps<ddt::DefineOp>()) {
    ASSERT_LT(i, types.size());
    const auto &[name, type] = types[i++];
    ASSERT_EQ(define.getSymName(), name);
    auto layout =
        mlir::dyn_cast<ddt::LayoutOp>(define.getBody().front().getTerminator());
    ASSERT_TRUE(layout) << name;
    ddt::PlanStage stage;
    KernelPlan fromPasses = ddt::readPlan(layout, stage);
    EXPECT_EQ(stage, ddt::PlanStage::Balanced) << name;
    KernelPlan core;
    std::string error;
    ASSERT_TRUE(planKernel(*type, core, error)) << name << ": " << error;
    expectSamePlan(fromPasses, core, name);
    ++families[core.family == KernelFamily::Strided ? 0 : 1];
  }
  EXPECT_EQ(i, types.size());
  // The cases reach both kernel families.
  EXPECT_GT(families[0], 0);
  EXPECT_GT(families[1], 0);
}

} // namespace
