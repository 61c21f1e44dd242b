//===- DDTAttributes.cpp - Enum attributes of the ddt dialect -------------===//
//
// Each attribute holds a core-library enum and is written `<name>`, with the
// core library's name for the value: `#ddt.family<strided>`.
//===----------------------------------------------------------------------===//

#include "ddtc/Dialect/DDT/DDTOps.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace ddtc;
using namespace ddtc::ddt;

namespace {
template <typename AttrT, typename Enum, size_t N>
Attribute parseEnumAttr(AsmParser &parser, const Enum (&values)[N],
                        const char *(*name)(Enum), StringRef what) {
  if (parser.parseLess())
    return {};
  FailureOr<Enum> value = parseEnumKeyword(parser, values, name, what);
  if (failed(value) || parser.parseGreater())
    return {};
  return AttrT::get(parser.getContext(), *value);
}
} // namespace

Attribute KernelFamilyAttr::parse(AsmParser &parser, Type) {
  return parseEnumAttr<KernelFamilyAttr>(parser, kKernelFamilies,
                                         getKernelFamilyName, "kernel family");
}

void KernelFamilyAttr::print(AsmPrinter &printer) const {
  printer << '<' << getKernelFamilyName(getValue()) << '>';
}

Attribute OrderAttr::parse(AsmParser &parser, Type) {
  return parseEnumAttr<OrderAttr>(parser, kOrders, getOrderName, "array order");
}

void OrderAttr::print(AsmPrinter &printer) const {
  printer << '<' << getOrderName(getValue()) << '>';
}

Attribute DistributionAttr::parse(AsmParser &parser, Type) {
  return parseEnumAttr<DistributionAttr>(parser, kDistributions,
                                         getDistributionName, "distribution");
}

void DistributionAttr::print(AsmPrinter &printer) const {
  printer << '<' << getDistributionName(getValue()) << '>';
}
