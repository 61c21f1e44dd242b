//===- Constructors.cpp - The signatures of the type constructors ---------===//
//
// Builds the table of Constructors.def once.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/Constructors.h"

#include <type_traits>

using namespace ddtc;

namespace {

ArgSyntax syntaxOf(ArgField field) {
  switch (field) {
#define DDTC_ARG_FIELD(FIELD, SYNTAX, MEMBER)                                  \
  case ArgField::FIELD:                                                        \
    return ArgSyntax::SYNTAX;
#include "ddtc/Core/Constructors.def"
  }
  return ArgSyntax::Int; // unreachable: every field is listed
}

/// `member` when it has type T and `syntax` is `want`, else null.
template <class T, class M>
T TypeArgs::*memberIf(ArgSyntax syntax, ArgSyntax want, M TypeArgs::*member) {
  if constexpr (std::is_same_v<T, M>)
    return syntax == want ? member : nullptr;
  else
    return nullptr;
}

} // namespace

const std::vector<ConstructorSignature> &ddtc::allConstructors() {
  static const std::vector<ConstructorSignature> table = [] {
    std::vector<ConstructorSignature> t;
#define DDTC_CONSTRUCTOR(KIND, NAME) t.push_back({Kind::KIND, NAME, {}});
#define DDTC_ARGUMENT(NAME, FIELD)                                             \
  t.back().arguments.push_back(                                                \
      {NAME, ArgField::FIELD, syntaxOf(ArgField::FIELD)});
#include "ddtc/Core/Constructors.def"
    return t;
  }();
  return table;
}

const ConstructorSignature *ddtc::getConstructor(Kind kind) {
  // The table is in Kind order, after Primitive.
  size_t index = static_cast<size_t>(kind);
  if (kind == Kind::Primitive || index > allConstructors().size())
    return nullptr;
  return &allConstructors()[index - 1];
}

std::string ddtc::formatArgumentList(const ConstructorSignature &sig) {
  std::string s = "(";
  for (size_t i = 0; i < sig.arguments.size(); ++i) {
    if (i)
      s += ", ";
    s += sig.arguments[i].name;
  }
  return s + ")";
}

int64_t TypeArgs::*ddtc::getIntMember(ArgField field) {
  switch (field) {
#define DDTC_ARG_FIELD(FIELD, SYNTAX, MEMBER)                                  \
  case ArgField::FIELD:                                                        \
    return memberIf<int64_t>(ArgSyntax::SYNTAX, ArgSyntax::Int,                \
                             &TypeArgs::MEMBER);
#include "ddtc/Core/Constructors.def"
  }
  return nullptr;
}

std::vector<int64_t> TypeArgs::*ddtc::getIntListMember(ArgField field) {
  switch (field) {
#define DDTC_ARG_FIELD(FIELD, SYNTAX, MEMBER)                                  \
  case ArgField::FIELD:                                                        \
    return memberIf<std::vector<int64_t>>(                                     \
        ArgSyntax::SYNTAX, ArgSyntax::IntList, &TypeArgs::MEMBER);
#include "ddtc/Core/Constructors.def"
  }
  return nullptr;
}
