//===- SpecPrinter.cpp - Printing types as spec-language expressions ------===//
//
// Writes a datatype tree as one inline .ddt expression (primitives by MPI
// name) that parseSpec reads back to an equal tree.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/SpecParser.h"

using namespace ddtc;

namespace {

void printInts(const std::vector<int64_t> &values, std::string &os) {
  os += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      os += ", ";
    os += std::to_string(values[i]);
  }
  os += ']';
}

void printDargs(const std::vector<int64_t> &dargs, std::string &os) {
  os += '[';
  for (size_t i = 0; i < dargs.size(); ++i) {
    if (i)
      os += ", ";
    if (dargs[i] == kDefaultDarg)
      os += "default";
    else
      os += std::to_string(dargs[i]);
  }
  os += ']';
}

void printDistribs(const std::vector<Distribution> &distribs,
                   std::string &os) {
  os += '[';
  for (size_t i = 0; i < distribs.size(); ++i) {
    if (i)
      os += ", ";
    os += getDistributionName(distribs[i]);
  }
  os += ']';
}

const char *orderName(Order order) {
  return order == Order::C ? "C" : "Fortran";
}

void printType(const Datatype &type, std::string &os) {
  const TypeArgs &a = type.args();
  if (a.kind == Kind::Primitive) {
    os += getPrimitiveInfo(a.primitive).mpiName;
    return;
  }
  os += getKindName(a.kind);
  os += '(';
  auto sep = [&] { os += ", "; };
  auto num = [&](int64_t v) { os += std::to_string(v); };
  switch (a.kind) {
  case Kind::Contiguous:
    num(a.count);
    sep();
    break;
  case Kind::Vector:
  case Kind::HVector:
    num(a.count);
    sep();
    num(a.blocklen);
    sep();
    num(a.stride);
    sep();
    break;
  case Kind::Indexed:
  case Kind::HIndexed:
    printInts(a.blocklens, os);
    sep();
    printInts(a.displs, os);
    sep();
    break;
  case Kind::IndexedBlock:
  case Kind::HIndexedBlock:
    num(a.blocklen);
    sep();
    printInts(a.displs, os);
    sep();
    break;
  case Kind::Struct:
    printInts(a.blocklens, os);
    sep();
    printInts(a.displs, os);
    sep();
    os += '[';
    for (size_t i = 0; i < a.children.size(); ++i) {
      if (i)
        sep();
      printType(*a.children[i], os);
    }
    os += "])";
    return;
  case Kind::Subarray:
    printInts(a.sizes, os);
    sep();
    printInts(a.subsizes, os);
    sep();
    printInts(a.starts, os);
    sep();
    os += orderName(a.order);
    sep();
    break;
  case Kind::Darray:
    num(a.commSize);
    sep();
    num(a.rank);
    sep();
    printInts(a.sizes, os);
    sep();
    printDistribs(a.distribs, os);
    sep();
    printDargs(a.dargs, os);
    sep();
    printInts(a.psizes, os);
    sep();
    os += orderName(a.order);
    sep();
    break;
  case Kind::Resized:
    num(a.lb);
    sep();
    num(a.extent);
    sep();
    break;
  case Kind::Dup:
  case Kind::Primitive:
    break;
  }
  // Every constructor but struct ends with its one old type.
  if (!a.children.empty())
    printType(*a.children.front(), os);
  os += ')';
}

} // namespace

std::string ddtc::printSpecExpr(const Datatype &type) {
  std::string os;
  printType(type, os);
  return os;
}
