//===- Constructors.h - The signatures of the type constructors -*- C++ -*-===//
//
// The arguments each constructor takes, in order, and where TypeArgs keeps
// each one: the one description (Constructors.def) that the spec parser,
// the spec printer and the tools that edit arguments all read.
//===----------------------------------------------------------------------===//

#ifndef DDTC_CORE_CONSTRUCTORS_H
#define DDTC_CORE_CONSTRUCTORS_H

#include "ddtc/Core/Datatype.h"

#include <string>
#include <vector>

namespace ddtc {

/// Where an argument goes in TypeArgs.
enum class ArgField : uint8_t {
#define DDTC_ARG_FIELD(FIELD, SYNTAX, MEMBER) FIELD,
#include "ddtc/Core/Constructors.def"
};

/// How an argument is written in the spec language.
enum class ArgSyntax : uint8_t {
  Int,         ///< 12
  IntList,     ///< [1, 2, 3]
  DistribList, ///< [block, cyclic, none]
  DargList,    ///< [2, default]
  Order,       ///< C | Fortran
  Type,        ///< one type
  TypeList,    ///< [type, ...]
};

struct ConstructorArgument {
  const char *name; ///< as the messages and the docs call it: "blocklen"
  ArgField field;
  ArgSyntax syntax;
};

struct ConstructorSignature {
  Kind kind;
  const char *name; ///< the spec-language name: "indexed_block"
  std::vector<ConstructorArgument>
      arguments; ///< in the order of MPI's C binding
};

/// Every constructor, in the order of the Kind enum (Primitive excluded).
const std::vector<ConstructorSignature> &allConstructors();
/// The signature of a constructor; null for Kind::Primitive.
const ConstructorSignature *getConstructor(Kind kind);
/// "(count, blocklen, stride, type)"
std::string formatArgumentList(const ConstructorSignature &sig);

/// The member of TypeArgs that holds an argument of syntax Int (IntList), or
/// null for a field of another syntax.
int64_t TypeArgs::*getIntMember(ArgField field);
std::vector<int64_t> TypeArgs::*getIntListMember(ArgField field);

} // namespace ddtc

#endif // DDTC_CORE_CONSTRUCTORS_H
