//===- TypeFromMPI.cpp - ddtc_type_from_mpi -------------------------------===//
//
// Decodes the MPI handle into a datatype tree and makes the handle of that
// tree, as ddtc_type_from_spec does of a parsed one (no spec text between).
// Besides the C API, this library shares with libddtc, built from the same
// sources, the layout of a handle and of a tree.
//===----------------------------------------------------------------------===//

#include "ddtc/ddtc_mpi.h"

#include "TypeObject.h"

#include "ddtc/MPI/MPIBridge.h"

#include <new>
#include <string>

extern "C" ddtc_status ddtc_type_from_mpi(MPI_Datatype datatype,
                                          ddtc_type *out) {
  const char *fn = "ddtc_type_from_mpi";
  if (!out)
    return ddtc_report_error(DDTC_ERROR_INVALID_ARGUMENT,
                             "ddtc_type_from_mpi: out is null");
  *out = nullptr;
  try {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
      return ddtc_report_error(
          DDTC_ERROR_INVALID_ARGUMENT,
          "ddtc_type_from_mpi: MPI is not initialized (or already finalized)");
    std::string error;
    ddtc::TypeRef tree = ddtc::importMPIDatatype(datatype, error);
    if (!tree)
      return ddtc_report_error(DDTC_ERROR_UNSUPPORTED_TYPE,
                               (std::string(fn) + ": " + error).c_str());
    *out = ddtc::rt::newTypeHandle(std::move(tree), "mpi_type").release();
    return DDTC_SUCCESS;
  } catch (const std::bad_alloc &) {
    return ddtc_report_error(DDTC_ERROR_OUT_OF_MEMORY,
                             "ddtc_type_from_mpi: out of host memory");
  } catch (...) {
    return ddtc_report_error(DDTC_ERROR_INTERNAL,
                             "ddtc_type_from_mpi: internal error");
  }
}
