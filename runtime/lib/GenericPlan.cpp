//===- GenericPlan.cpp - Work-unit plans for any layout --------------------===//
//
// alignAccesses lists prologue/body/epilogue pieces only for layouts that
// are not all strided nests (those get the strided family), so the pieces
// are listed here for every layout, with the width alignAccesses proved.
//===----------------------------------------------------------------------===//

#include "GenericPlan.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace ddtc::rt {

namespace {

constexpr int64_t kWarp = 32;
/// Accesses each lane makes per work unit, as in stair balancing.
constexpr int64_t kAccessesPerLane = 4;

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
  // Each run gives at most a prologue, an epilogue and ceil(body / unit)
  // units; the width is at least 1, so unit >= 128 bytes.
  const int64_t minUnit = kWarp * kAccessesPerLane;
  int64_t total = 0;
  for (const Segment &s : layout.segments) {
    int64_t perPoint = 0;
    for (const Run &r : s.runs)
      perPoint = saturatingAdd(perPoint, r.length / minUnit + 3);
    total = saturatingAdd(total, saturatingMul(s.points(), perPoint));
  }
  return total;
}

bool makeUnitsPlan(const CanonicalLayout &layout, int64_t maxUnits,
                   KernelPlan &out) {
  if (estimateUnits(layout) > maxUnits)
    return false;
  KernelPlan plan = makeInitialPlan(layout);
  alignAccesses(plan);
  const int64_t width = plan.width;
  const int64_t unit = kWarp * width * kAccessesPerLane;
  plan.family = KernelFamily::Units;
  plan.unitBytes = unit;
  plan.units.clear();
  auto cut = [&](int64_t packed, int64_t src, int64_t length, bool wide) {
    for (int64_t at = 0; at < length; at += unit)
      plan.units.push_back(
          {packed + at, src + at, std::min(unit, length - at), wide});
  };
  int64_t packed = 0;
  for (const Run &r : flattenLayout(layout, 1)) {
    const int64_t src = r.offset, len = r.length;
    // Bytes before the first source byte aligned to the width.
    const int64_t head =
        std::min(len, (width - ((src % width) + width) % width) % width);
    const int64_t body = (len - head) / width * width;
    const int64_t tail = len - head - body;
    cut(packed, src, head, false);
    cut(packed + head, src + head, body, width > 1);
    cut(packed + head + body, src + head + body, tail, false);
    packed += len;
  }
  plan.notes.push_back("generic: " + std::to_string(plan.units.size()) +
                       " work unit(s) of at most " + std::to_string(unit) +
                       " bytes, width " + std::to_string(width));
  out = std::move(plan);
  return true;
}

KernelPlan makeUnitsShapePlan(int width) {
  KernelPlan plan;
  plan.family = KernelFamily::Units;
  plan.width = width;
  plan.unitBytes = kWarp * width * kAccessesPerLane;
  return plan;
}

} // namespace ddtc::rt
