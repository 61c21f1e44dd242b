//===- MPIImportTest.cpp - ddtc_type_from_mpi against the MPI library -----===//

#include "ddtc/ddtc_mpi.h"

#include <cstdio>
#include <cstring>

static int failures = 0;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n",      \
                   __FILE__, __LINE__, #cond, ddtc_last_error());              \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  ddtc_type t = nullptr;
  // Before MPI_Init: refused with a message.
  EXPECT(ddtc_type_from_mpi(MPI_INT, &t) == DDTC_ERROR_INVALID_ARGUMENT);
  EXPECT(std::strstr(ddtc_last_error(), "not initialized") != nullptr);
  MPI_Init(&argc, &argv);

  MPI_Datatype vec, rec, resized;
  MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &vec);
  int blocklens[3] = {1, 2, 1};
  MPI_Aint displs[3] = {0, 8, 16};
  MPI_Datatype types[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
  MPI_Type_create_struct(3, blocklens, displs, types, &rec);
  MPI_Type_create_resized(rec, -8, 40, &resized);

  int64_t v = 0;
  EXPECT(ddtc_type_from_mpi(vec, &t) == DDTC_SUCCESS);
  EXPECT(ddtc_type_size(t, &v) == DDTC_SUCCESS && v == 48);
  EXPECT(ddtc_type_extent(t, &v) == DDTC_SUCCESS && v == 96);
  EXPECT(ddtc_type_free(&t) == DDTC_SUCCESS);

  EXPECT(ddtc_type_from_mpi(resized, &t) == DDTC_SUCCESS);
  EXPECT(ddtc_type_size(t, &v) == DDTC_SUCCESS && v == 17);
  EXPECT(ddtc_type_lb(t, &v) == DDTC_SUCCESS && v == -8);
  EXPECT(ddtc_type_extent(t, &v) == DDTC_SUCCESS && v == 40);
  EXPECT(ddtc_type_free(&t) == DDTC_SUCCESS);

  EXPECT(ddtc_type_from_mpi(MPI_DOUBLE_INT, &t) == DDTC_SUCCESS);
  EXPECT(ddtc_type_size(t, &v) == DDTC_SUCCESS && v == 12);
  EXPECT(ddtc_type_free(&t) == DDTC_SUCCESS);

  EXPECT(ddtc_type_from_mpi(vec, nullptr) == DDTC_ERROR_INVALID_ARGUMENT);

  MPI_Type_free(&vec);
  MPI_Type_free(&rec);
  MPI_Type_free(&resized);
  MPI_Finalize();
  std::printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
