//===- GenericPlan.h - Work-unit plans for any layout -----------*- C++ -*-===//
//
// The generic kernels are the work-unit (Units family) kernels: their code
// depends only on the access width, so they are compiled once, when the
// library is built, and serve any type while its specialized kernel compiles.
// This file builds the work-unit plan of a layout whatever family the
// planning passes would pick for it, and names kernels after their shape.
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_GENERICPLAN_H
#define DDTC_RUNTIME_GENERICPLAN_H

#include "ddtc/Core/KernelPlan.h"

#include <string>

namespace ddtc::rt {

/// The access widths of the generic kernels.
constexpr int kGenericWidths[] = {1, 2, 4, 8, 16};

/// The symbol prefix of the kernels of one shape (kernelShapeKey): "ddtc_"
/// and the key with each character that cannot appear in a C identifier
/// replaced by '_', e.g. "ddtc_units_w8".
std::string kernelSymbolPrefix(const std::string &shapeKey);

/// An upper bound on the work units makeUnitsPlan makes for `layout`
/// (saturates at INT64_MAX), computed from the description without listing
/// the runs.
int64_t estimateUnits(const CanonicalLayout &layout);

/// A Units-family plan of `layout`: its runs (one instance, pack order) split
/// into a prologue, a wide body and an epilogue at the access width that
/// alignAccesses proves for the layout (listPieces), then cut into work
/// units as stair balancing does (cutWorkUnits). Returns false, leaving
/// `out` alone, when the bound of estimateUnits exceeds `maxUnits` or the
/// layout has too many runs to list.
bool makeUnitsPlan(const CanonicalLayout &layout, int64_t maxUnits,
                   KernelPlan &out);

/// A plan whose only meaningful fields are the family (Units), the width
/// and whether its units are short (unitsByChunks: one unit of one byte):
/// what emitCUDA needs to print the generic kernels of that shape.
KernelPlan makeUnitsShapePlan(int width, bool chunks);

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_GENERICPLAN_H
