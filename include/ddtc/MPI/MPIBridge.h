//===- MPIBridge.h - Between datatype trees and MPI handles -----*- C++ -*-===//
//
// importMPIDatatype decodes a live MPI datatype through MPI_Type_get_envelope
// and MPI_Type_get_contents; exportMPIDatatype builds the MPI type a tree
// describes with the MPI constructors. Needs an initialized MPI.
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_MPIBRIDGE_H
#define DDTC_MPI_MPIBRIDGE_H

#include "ddtc/Core/Datatype.h"

#include <mpi.h>

namespace ddtc {

/// Builds the tree of `type` (named or derived, committed or not). Every
/// intermediate handle MPI_Type_get_contents returns is freed as the standard
/// requires; `type` itself is left alone. Returns null and sets `error` for a
/// combiner ddtc cannot represent (naming it), arguments that break a rule, or
/// a type whose size, lb or extent in this MPI library differs from ddtc's
/// (so a layout ddtc would get wrong is refused, never packed).
TypeRef importMPIDatatype(MPI_Datatype type, std::string &error);

/// Builds (but does not commit) the MPI datatype of `type`. The caller frees
/// the result with MPI_Type_free unless it is a named type (isNamed set).
/// Returns false and sets `error` when MPI rejects a constructor call.
bool exportMPIDatatype(const Datatype &type, MPI_Datatype &out, bool &isNamed,
                       std::string &error);

/// The MPI handle of a predefined type, or MPI_DATATYPE_NULL when this MPI
/// does not provide it.
MPI_Datatype getMPIPrimitive(Primitive p);

} // namespace ddtc

#endif // DDTC_MPI_MPIBRIDGE_H
