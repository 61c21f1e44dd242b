//===- Primitives.cpp - The predefined MPI datatypes ----------------------===//

#include "ddtc/Core/Datatype.h"

#include <cstring>

namespace ddtc {

const std::vector<PrimitiveInfo> &allPrimitives() {
  static const std::vector<PrimitiveInfo> table = {
#define DDTC_PRIMITIVE(ID, NAME, SIZE, EXTENT, LEN0, OFF1, LEN1, ALIGN)        \
  {Primitive::ID, NAME, SIZE, EXTENT, LEN0, OFF1, LEN1, ALIGN},
#include "ddtc/Core/Primitives.def"
  };
  return table;
}

const PrimitiveInfo &getPrimitiveInfo(Primitive p) {
  return allPrimitives()[static_cast<size_t>(p)];
}

std::optional<Primitive> lookupPrimitive(std::string_view name) {
  for (const PrimitiveInfo &info : allPrimitives())
    if (name == info.mpiName)
      return info.id;
  struct Alias {
    Primitive id;
    const char *spelling;
  };
  static const Alias aliases[] = {
#define DDTC_PRIMITIVE_ALIAS(ID, SPELLING) {Primitive::ID, SPELLING},
#include "ddtc/Core/Primitives.def"
  };
  for (const Alias &alias : aliases)
    if (name == alias.spelling)
      return alias.id;
  return std::nullopt;
}

} // namespace ddtc
