//===- GenericPlan.cpp - Work-unit plans for any layout -------------------===//
//
// The pieces and their cutting are the planning passes' (listPieces and
// cutWorkUnits in lib/Core); this file only applies them to every layout,
// strided nests included, under the runtime's limit on table size.
//===----------------------------------------------------------------------===//

#include "GenericPlan.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace ddtc::rt {

namespace {

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

} // namespace

std::string kernelSymbolPrefix(const std::string &shapeKey) {
  std::string p = "ddtc_";
  for (char c : shapeKey)
    p += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return p;
}

int64_t estimateUnits(const CanonicalLayout &layout) {
  // Each run gives at most a prologue, a body and an epilogue; cutting adds
  // at most one unit per unitBytes (>= kUnitBytes) of the instance, and
  // never more than kMaxCutUnits (cutWorkUnits).
  return saturatingAdd(saturatingMul(countRuns(layout), 3),
                       std::min(layout.size / kUnitBytes + 1, kMaxCutUnits));
}

bool makeUnitsPlan(const CanonicalLayout &layout, int64_t maxUnits,
                   KernelPlan &out) {
  if (estimateUnits(layout) > maxUnits)
    return false;
  KernelPlan plan;
  std::string error;
  if (!planWorkUnits(layout, plan, error))
    return false;
  plan.notes.push_back("generic: " + std::to_string(plan.units.size()) +
                       " work unit(s) of at most " +
                       std::to_string(plan.unitBytes) + " bytes, width " +
                       std::to_string(plan.width));
  out = std::move(plan);
  return true;
}

KernelPlan makeUnitsShapePlan(int width, bool chunks) {
  KernelPlan plan;
  plan.family = KernelFamily::Units;
  plan.width = width;
  plan.unitBytes = kUnitBytes;
  if (chunks) {
    plan.layout.size = 1;
    plan.units.push_back({0, 0, 1, 0});
  }
  return plan;
}

} // namespace ddtc::rt
