//===- DDTLayout.cpp - Between ddt.layout ops and kernel plans ------------===//

#include "ddtc/Dialect/DDT/DDTLayout.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace ddtc;
using namespace ddtc::ddt;

KernelPlan ddtc::ddt::readPlan(LayoutOp op, PlanStage &stage) {
  CanonicalLayout layout;
  layout.size = static_cast<int64_t>(op.getSize());
  layout.lb = static_cast<int64_t>(op.getLb());
  layout.extent = static_cast<int64_t>(op.getExtent());
  for (auto seg : op.getBody().front().getOps<SegmentOp>()) {
    Segment s;
    s.offset = static_cast<int64_t>(seg.getOffset());
    for (auto [c, st] : llvm::zip(seg.getCounts(), seg.getStrides()))
      s.dims.push_back({c, st});
    for (auto [o, l] : llvm::zip(seg.getRunOffsets(), seg.getRunLengths()))
      s.runs.push_back({o, l});
    layout.segments.push_back(std::move(s));
  }
  KernelPlan plan = makeInitialPlan(layout);
  stage = PlanStage::Layout;
  if (auto width = op.getWidth()) {
    plan.width = static_cast<int64_t>(*width);
    stage = PlanStage::Aligned;
  }
  if (auto bytePath = op.getNeedsBytePath())
    plan.needsBytePath = *bytePath;
  if (auto units = op.getUnits()) {
    ArrayRef<int64_t> u = *units;
    for (size_t i = 0; i + 3 < u.size(); i += 4)
      plan.units.push_back({u[i], u[i + 1], u[i + 2], u[i + 3] != 0});
  }
  if (auto family = op.getFamily()) {
    plan.family = *family;
    stage = PlanStage::Balanced;
  }
  if (auto unitBytes = op.getUnitBytes())
    plan.unitBytes = static_cast<int64_t>(*unitBytes);
  if (auto tile = op.getTileDim())
    plan.tileDim = static_cast<int>(*tile);
  return plan;
}

LayoutOp ddtc::ddt::getNormalizedLayout(DefineOp define,
                                        llvm::StringRef passName) {
  auto layout = dyn_cast<LayoutOp>(define.getBody().front().getTerminator());
  if (!layout)
    define.emitError() << passName
                       << " needs a ddt.layout: run ddt-normalize first";
  return layout;
}

LayoutOp ddtc::ddt::writePlan(DefineOp define, const KernelPlan &plan,
                              PlanStage stage) {
  Block &body = define.getBody().front();
  while (!body.empty())
    body.back().erase();
  OpBuilder b = OpBuilder::atBlockEnd(&body);
  Location loc = define.getLoc();
  const CanonicalLayout &l = plan.layout;
  auto layout = LayoutOp::create(
      b, loc, b.getI64IntegerAttr(l.size), b.getI64IntegerAttr(l.lb),
      b.getI64IntegerAttr(l.extent), IntegerAttr(), BoolAttr(),
      KernelFamilyAttr(), IntegerAttr(), DenseI64ArrayAttr(), IntegerAttr());
  if (stage != PlanStage::Layout) {
    layout.setWidthAttr(b.getI64IntegerAttr(plan.width));
    layout.setNeedsBytePathAttr(b.getBoolAttr(plan.needsBytePath));
  }
  if (stage == PlanStage::Balanced) {
    layout.setFamilyAttr(KernelFamilyAttr::get(b.getContext(), plan.family));
    if (plan.family == KernelFamily::Units)
      layout.setUnitBytesAttr(b.getI64IntegerAttr(plan.unitBytes));
    if (plan.tileDim >= 0)
      layout.setTileDimAttr(b.getI64IntegerAttr(plan.tileDim));
  }
  if (stage != PlanStage::Layout && !plan.units.empty()) {
    SmallVector<int64_t> flat;
    for (const WorkUnit &u : plan.units)
      flat.append({u.packed, u.src, u.length, u.wide ? 1 : 0});
    layout.setUnitsAttr(b.getDenseI64ArrayAttr(flat));
  }
  Block *segments = new Block();
  layout.getBody().push_back(segments);
  b.setInsertionPointToEnd(segments);
  for (const Segment &s : l.segments) {
    SmallVector<int64_t> counts, strides, offsets, lengths;
    for (const Dim &d : s.dims) {
      counts.push_back(d.count);
      strides.push_back(d.stride);
    }
    for (const Run &r : s.runs) {
      offsets.push_back(r.offset);
      lengths.push_back(r.length);
    }
    SegmentOp::create(
        b, loc, b.getI64IntegerAttr(s.offset), b.getDenseI64ArrayAttr(counts),
        b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(offsets),
        b.getDenseI64ArrayAttr(lengths));
  }
  return layout;
}
