/*===- ddtc_mpi.h - ddtc types from MPI datatypes -------------------------===*
 *
 * In libddtc-mpi-import, built when MPI is found: link it with libddtc and
 * the MPI library. Include mpi.h before or through this header.
 *===----------------------------------------------------------------------===*/

#ifndef DDTC_DDTC_MPI_H
#define DDTC_DDTC_MPI_H

#include <mpi.h>

#include "ddtc/ddtc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Decodes `datatype` (named or derived, committed or not) with
   MPI_Type_get_envelope and MPI_Type_get_contents into a new, uncommitted
   ddtc type. MPI must be initialized; `datatype` is left alone. Fails with
   DDTC_ERROR_UNSUPPORTED_TYPE for a combiner ddtc does not represent, or a
   type whose size, lb or extent in this MPI library differs from ddtc's. */
DDTC_API ddtc_status ddtc_type_from_mpi(MPI_Datatype datatype,
                                        ddtc_type *out);

#ifdef __cplusplus
}
#endif

#endif /* DDTC_DDTC_MPI_H */
