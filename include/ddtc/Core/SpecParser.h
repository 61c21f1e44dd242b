//===- SpecParser.h - The .ddt spec language --------------------*- C++ -*-===//
//
// One binding per line, `name = constructor(args...)`, `#` starts a comment.
// Constructors take their arguments in the order of the MPI C binding; types
// are MPI names, C spellings or earlier bindings. See docs/SpecLanguage.md.
//===----------------------------------------------------------------------===//

#ifndef DDTC_CORE_SPECPARSER_H
#define DDTC_CORE_SPECPARSER_H

#include "ddtc/Core/Datatype.h"

namespace ddtc {

struct SpecBinding {
  std::string name;
  TypeRef type;
  unsigned line = 0, column = 0; ///< where the name is written, 1-based
};

struct SpecFile {
  std::vector<SpecBinding> bindings; ///< in file order
  /// The binding called `name`, or null.
  const SpecBinding *find(std::string_view name) const;
};

/// Parses a whole spec. On failure returns false and sets `error` to
/// "FILENAME:LINE:COL: error: MESSAGE" naming what was expected or the MPI rule
/// the arguments broke, followed by the source line and a caret.
bool parseSpec(std::string_view text, std::string_view filename, SpecFile &out,
               std::string &error);

/// Prints a type as one spec-language expression that parses back to an equal
/// tree (primitives by MPI name), e.g. "vector(3, 2, 5, MPI_DOUBLE)".
std::string printSpecExpr(const Datatype &type);

} // namespace ddtc

#endif // DDTC_CORE_SPECPARSER_H
