//===- YaksaType.h - ddtc datatype trees as Yaksa types --------*- C++ -*-===//
//
// Builds the Yaksa type of a ddtc tree by replaying its MPI constructor calls
// with the matching yaksa_type_create_* function, so both engines pack the
// same type. A node Yaksa has no constructor or builtin for is reported by
// name, and the layout is then not run on Yaksa.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_BENCH_YAKSATYPE_H
#define DDTC_TOOLS_DDTC_BENCH_YAKSATYPE_H

#include "YaksaApi.h"

#include "ddtc/Core/Datatype.h"

#include <optional>
#include <string>

namespace ddtc::yaksa {

/// Yaksa's builtin handle for a predefined MPI type of the same layout, or
/// none.
std::optional<Type> builtinFor(Primitive p);

/// A Yaksa type handle and whether it was created (and must be freed) or is
/// a builtin (which must never be: Yaksa keeps builtins in the same handle
/// pool as created types).
struct Built {
  Type type = kTypeNull;
  bool owned = false;
};

/// Creates the Yaksa type of `type` into `out`. Intermediate types are freed
/// once their parent holds them (Yaksa counts references). Returns false
/// with `error` set when a node cannot be expressed or a Yaksa call fails;
/// nothing is left allocated then.
bool buildType(const Api &api, const Datatype &type, Built &out,
               std::string &error);

/// Frees a type made by buildType, unless it is a builtin.
void freeType(const Api &api, Built &type);

/// Checks that Yaksa's size and extent of `built` equal ddtc's figures of
/// `type`: a translation that loses a node shows here first.
bool checkLayout(const Api &api, const Datatype &type, Type built,
                 std::string &error);

} // namespace ddtc::yaksa

#endif // DDTC_TOOLS_DDTC_BENCH_YAKSATYPE_H
