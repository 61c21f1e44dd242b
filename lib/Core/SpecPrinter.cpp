//===- SpecPrinter.cpp - Printing types as spec-language expressions ------===//
//
// Writes a datatype tree as one inline .ddt expression (primitives by MPI
// name) that parseSpec reads back to an equal tree, its arguments in the
// order of Constructors.def.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/Constructors.h"
#include "ddtc/Core/SpecParser.h"

using namespace ddtc;

namespace {

/// `[a, b, ...]`, each entry written by `print`.
template <class T, class Print>
void printList(const std::vector<T> &values, std::string &os, Print print) {
  os += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      os += ", ";
    print(values[i]);
  }
  os += ']';
}

void printType(const Datatype &type, std::string &os) {
  const TypeArgs &a = type.args();
  const ConstructorSignature *sig = getConstructor(a.kind);
  if (!sig) {
    os += getPrimitiveInfo(a.primitive).mpiName;
    return;
  }
  os += sig->name;
  os += '(';
  auto num = [&](int64_t v) { os += std::to_string(v); };
  auto child = [&](const TypeRef &t) { printType(*t, os); };
  for (size_t i = 0; i < sig->arguments.size(); ++i) {
    const ConstructorArgument &arg = sig->arguments[i];
    if (i)
      os += ", ";
    switch (arg.syntax) {
    case ArgSyntax::Int:
      num(a.*getIntMember(arg.field));
      break;
    case ArgSyntax::IntList:
      printList(a.*getIntListMember(arg.field), os, num);
      break;
    case ArgSyntax::DistribList:
      printList(a.distribs, os,
                [&](Distribution d) { os += getDistributionName(d); });
      break;
    case ArgSyntax::DargList:
      printList(a.dargs, os, [&](int64_t d) {
        if (d == kDefaultDarg)
          os += "default";
        else
          num(d);
      });
      break;
    case ArgSyntax::Order:
      os += a.order == Order::C ? "C" : "Fortran";
      break;
    case ArgSyntax::Type:
      child(a.children.front());
      break;
    case ArgSyntax::TypeList:
      printList(a.children, os, child);
      break;
    }
  }
  os += ')';
}

} // namespace

std::string ddtc::printSpecExpr(const Datatype &type) {
  std::string os;
  printType(type, os);
  return os;
}
