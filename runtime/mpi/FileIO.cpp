//===- FileIO.cpp - MPI I/O on device buffers, staged ---------------------===//
//
// The MPI library reads and writes files from host memory with its own
// datatype engine, so a device buffer is staged as the collectives stage
// theirs: the bytes its count and type touch are copied into host memory
// (for a read too, so that the bytes between the type's blocks keep their
// values), the MPI library runs the call on the copy, and a read copies it
// back. A nonblocking call keeps its copy with its request, and the Wait or
// Test that completes the request copies a read back. Host and managed
// buffers go to the MPI library unchanged.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include <memory>

#define DDTC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace ddtc::mpi;

namespace {

/// Runs `call` on `buf`, or on a host copy of it when it is device memory;
/// a read's copy goes back to the device after a successful call.
template <typename Call>
int blocking(const void *buf, int count, MPI_Datatype type, bool read,
             Call call) {
  progress();
  if (!onDevice(buf, count, type))
    return call(const_cast<void *>(buf));
  StagedBuffer staged(buf, count, type, /*copyIn=*/true);
  if (!staged.ok())
    return MPI_ERR_NO_MEM;
  int rc = call(staged.host());
  if (rc == MPI_SUCCESS && read && !staged.copyOut())
    return MPI_ERR_OTHER;
  return rc;
}

/// The same for a nonblocking call: the copy stays with its request.
template <typename Call>
int started(const void *buf, int count, MPI_Datatype type, bool read,
            MPI_Request *request, Call call) {
  progress();
  if (!onDevice(buf, count, type))
    return call(const_cast<void *>(buf), request);
  auto staged = std::make_unique<StagedBuffer>(buf, count, type, true);
  if (!staged->ok())
    return MPI_ERR_NO_MEM;
  int rc = call(staged->host(), request);
  if (rc == MPI_SUCCESS)
    watchStagedRequest(*request, read ? nullptr : std::move(staged),
                       read ? std::move(staged) : nullptr, MPI_COMM_SELF);
  return rc;
}

} // namespace

// At an explicit offset: (fh, offset, buf, count, type, status).
#define DDTC_FILE_AT(Name, Buf, read)                                          \
  DDTC_EXPORT int MPI_File_##Name(MPI_File fh, MPI_Offset offset, Buf buf,     \
                                  int count, MPI_Datatype type,                \
                                  MPI_Status *status) {                        \
    return blocking(buf, count, type, read, [&](void *b) {                     \
      return PMPI_File_##Name(fh, offset, b, count, type, status);             \
    });                                                                        \
  }
#define DDTC_FILE_IAT(Name, Buf, read)                                         \
  DDTC_EXPORT int MPI_File_##Name(MPI_File fh, MPI_Offset offset, Buf buf,     \
                                  int count, MPI_Datatype type,                \
                                  MPI_Request *request) {                      \
    return started(buf, count, type, read, request,                           \
                   [&](void *b, MPI_Request *r) {                              \
                     return PMPI_File_##Name(fh, offset, b, count, type, r);   \
                   });                                                         \
  }
// At a file pointer (individual or shared): (fh, buf, count, type, status).
#define DDTC_FILE(Name, Buf, read)                                             \
  DDTC_EXPORT int MPI_File_##Name(MPI_File fh, Buf buf, int count,             \
                                  MPI_Datatype type, MPI_Status *status) {     \
    return blocking(buf, count, type, read, [&](void *b) {                     \
      return PMPI_File_##Name(fh, b, count, type, status);                     \
    });                                                                        \
  }
#define DDTC_FILE_I(Name, Buf, read)                                           \
  DDTC_EXPORT int MPI_File_##Name(MPI_File fh, Buf buf, int count,             \
                                  MPI_Datatype type, MPI_Request *request) {   \
    return started(buf, count, type, read, request,                           \
                   [&](void *b, MPI_Request *r) {                              \
                     return PMPI_File_##Name(fh, b, count, type, r);           \
                   });                                                         \
  }

DDTC_FILE_AT(read_at, void *, true)
DDTC_FILE_AT(read_at_all, void *, true)
DDTC_FILE_AT(write_at, const void *, false)
DDTC_FILE_AT(write_at_all, const void *, false)
DDTC_FILE_IAT(iread_at, void *, true)
DDTC_FILE_IAT(iread_at_all, void *, true)
DDTC_FILE_IAT(iwrite_at, const void *, false)
DDTC_FILE_IAT(iwrite_at_all, const void *, false)

DDTC_FILE(read, void *, true)
DDTC_FILE(read_all, void *, true)
DDTC_FILE(write, const void *, false)
DDTC_FILE(write_all, const void *, false)
DDTC_FILE(read_shared, void *, true)
DDTC_FILE(write_shared, const void *, false)
DDTC_FILE(read_ordered, void *, true)
DDTC_FILE(write_ordered, const void *, false)
DDTC_FILE_I(iread, void *, true)
DDTC_FILE_I(iread_all, void *, true)
DDTC_FILE_I(iwrite, const void *, false)
DDTC_FILE_I(iwrite_all, const void *, false)
DDTC_FILE_I(iread_shared, void *, true)
DDTC_FILE_I(iwrite_shared, const void *, false)
