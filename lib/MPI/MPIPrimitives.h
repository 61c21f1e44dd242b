//===- MPIPrimitives.h - Named MPI types and their names --------*- C++ -*-===//
//
// Lookups shared by the MPI importer and exporter; private to lib/MPI.
//===----------------------------------------------------------------------===//

#ifndef DDTC_LIB_MPI_MPIPRIMITIVES_H
#define DDTC_LIB_MPI_MPIPRIMITIVES_H

#include "ddtc/Core/Datatype.h"

#include <mpi.h>

#include <optional>
#include <string>

namespace ddtc {
namespace mpi_detail {

/// The Primitive whose MPI handle is `type`. Where MPI defines two names for
/// one handle (MPI_LONG_LONG and MPI_LONG_LONG_INT), the one declared first in
/// Primitives.def is returned.
std::optional<Primitive> lookupMPIPrimitive(MPI_Datatype type);

/// "MPI_COMBINER_VECTOR", or "MPI combiner N" for one this file does not know.
std::string getCombinerName(int combiner);

/// The name MPI gives a type (MPI_Type_get_name), or "" when it has none.
std::string getMPITypeName(MPI_Datatype type);

} // namespace mpi_detail
} // namespace ddtc

#endif // DDTC_LIB_MPI_MPIPRIMITIVES_H
