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
#include <type_traits>

#define DDTC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace ddtc::mpi;

namespace {

/// Runs `call` on `buf`, or on a host copy of it when it is device memory.
/// A blocking call (`Last` is its MPI_Status *) copies a read back after it
/// succeeds; a nonblocking one (MPI_Request *) leaves the copy with its
/// request, for the Wait or Test that completes it.
template <typename Last, typename Call>
int staged(const void *buf, int count, MPI_Datatype type, bool read,
           Last last, Call call) {
  progress();
  if (!onDevice(buf, count, type))
    return call(const_cast<void *>(buf));
  auto copy = std::make_unique<StagedBuffer>(buf, count, type, true);
  if (!copy->ok())
    return MPI_ERR_NO_MEM;
  int rc = call(copy->host());
  if constexpr (std::is_same_v<Last, MPI_Request *>) {
    if (rc == MPI_SUCCESS)
      watchStagedRequest(*last, read ? nullptr : std::move(copy),
                         read ? std::move(copy) : nullptr, MPI_COMM_SELF);
  } else {
    if (rc == MPI_SUCCESS && read && !copy->copyOut())
      return MPI_ERR_OTHER;
  }
  return rc;
}

} // namespace

// At an explicit offset: (fh, offset, buf, count, type, status or request).
#define DDTC_FILE_AT(Name, Buf, read, Last)                                    \
  DDTC_EXPORT int MPI_File_##Name(MPI_File fh, MPI_Offset offset, Buf buf,     \
                                  int count, MPI_Datatype type, Last last) {   \
    return staged(buf, count, type, read, last, [&](void *b) {                 \
      return PMPI_File_##Name(fh, offset, b, count, type, last);               \
    });                                                                        \
  }
// At a file pointer (individual or shared): (fh, buf, count, type, status
// or request).
#define DDTC_FILE(Name, Buf, read, Last)                                       \
  DDTC_EXPORT int MPI_File_##Name(MPI_File fh, Buf buf, int count,             \
                                  MPI_Datatype type, Last last) {              \
    return staged(buf, count, type, read, last, [&](void *b) {                 \
      return PMPI_File_##Name(fh, b, count, type, last);                       \
    });                                                                        \
  }

DDTC_FILE_AT(read_at, void *, true, MPI_Status *)
DDTC_FILE_AT(read_at_all, void *, true, MPI_Status *)
DDTC_FILE_AT(write_at, const void *, false, MPI_Status *)
DDTC_FILE_AT(write_at_all, const void *, false, MPI_Status *)
DDTC_FILE_AT(iread_at, void *, true, MPI_Request *)
DDTC_FILE_AT(iread_at_all, void *, true, MPI_Request *)
DDTC_FILE_AT(iwrite_at, const void *, false, MPI_Request *)
DDTC_FILE_AT(iwrite_at_all, const void *, false, MPI_Request *)

DDTC_FILE(read, void *, true, MPI_Status *)
DDTC_FILE(read_all, void *, true, MPI_Status *)
DDTC_FILE(write, const void *, false, MPI_Status *)
DDTC_FILE(write_all, const void *, false, MPI_Status *)
DDTC_FILE(read_shared, void *, true, MPI_Status *)
DDTC_FILE(write_shared, const void *, false, MPI_Status *)
DDTC_FILE(read_ordered, void *, true, MPI_Status *)
DDTC_FILE(write_ordered, const void *, false, MPI_Status *)
DDTC_FILE(iread, void *, true, MPI_Request *)
DDTC_FILE(iread_all, void *, true, MPI_Request *)
DDTC_FILE(iwrite, const void *, false, MPI_Request *)
DDTC_FILE(iwrite_all, const void *, false, MPI_Request *)
DDTC_FILE(iread_shared, void *, true, MPI_Request *)
DDTC_FILE(iwrite_shared, const void *, false, MPI_Request *)
