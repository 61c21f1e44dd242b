//===- FileIO.cpp - MPI I/O on device buffers, staged ---------------------===//
//
// The MPI library reads and writes files from host memory with its own
// datatype engine, so a device buffer is staged as the collectives stage
// theirs: the bytes its count and type touch are copied into host memory
// (for a read too, so that the bytes between the type's blocks keep their
// values), the MPI library runs the call on the copy, and a read copies it
// back. A nonblocking call keeps its copy with its request, and the Wait or
// Test that completes the request copies a read back; a split collective
// (`_begin`/`_end`) keeps it with its file handle, which holds at most one
// such operation at a time, and its `_end` copies a read back. Host and
// managed buffers go to the MPI library unchanged.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

#define DDTC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace ddtc::mpi;

namespace {

/// Runs `call` on `buf`, or, when it is device memory, on a new host copy of
/// it, which `copy` then holds.
template <typename Call>
int onHostCopy(const void *buf, int count, MPI_Datatype type,
               std::unique_ptr<StagedBuffer> &copy, Call call) {
  progress();
  if (!onDevice(buf, count, type))
    return call(const_cast<void *>(buf));
  copy = std::make_unique<StagedBuffer>(buf, count, type, true);
  if (!copy->ok())
    return MPI_ERR_NO_MEM;
  return call(copy->host());
}

/// Runs `call` on `buf` or a host copy of it. A blocking call (`Last` is its
/// MPI_Status *) copies a read back after it succeeds; a nonblocking one
/// (MPI_Request *) leaves the copy with its request, for the Wait or Test
/// that completes it.
template <typename Last, typename Call>
int staged(const void *buf, int count, MPI_Datatype type, bool read,
           Last last, Call call) {
  std::unique_ptr<StagedBuffer> copy;
  int rc = onHostCopy(buf, count, type, copy, call);
  if (!copy || rc != MPI_SUCCESS)
    return rc;
  if constexpr (std::is_same_v<Last, MPI_Request *>)
    watchStagedRequest(*last, read ? nullptr : std::move(copy),
                       read ? std::move(copy) : nullptr, MPI_COMM_SELF);
  else if (read && !copy->copyOut())
    return MPI_ERR_OTHER;
  return rc;
}

/// The host copies of the split collectives begun on device buffers, by
/// file handle.
struct SplitCopies {
  std::mutex mutex;
  std::map<MPI_File, std::unique_ptr<StagedBuffer>> byFile;
};
SplitCopies &splitCopies() {
  static SplitCopies copies;
  return copies;
}

/// Begins a split collective: `call` runs on `buf` or on a host copy of it,
/// kept for the matching end.
template <typename Call>
int beginSplit(MPI_File fh, const void *buf, int count, MPI_Datatype type,
               Call call) {
  std::unique_ptr<StagedBuffer> copy;
  int rc = onHostCopy(buf, count, type, copy, call);
  if (copy && rc == MPI_SUCCESS) {
    SplitCopies &c = splitCopies();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.byFile[fh] = std::move(copy);
  }
  return rc;
}

/// Ends a split collective: `call` runs on the host copy its begin made, if
/// it made one (a read is then copied back to `buf`), else on `buf`.
template <typename Call>
int endSplit(MPI_File fh, bool read, Call call) {
  progress();
  std::unique_ptr<StagedBuffer> copy;
  {
    SplitCopies &c = splitCopies();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.byFile.find(fh);
    if (it != c.byFile.end()) {
      copy = std::move(it->second);
      c.byFile.erase(it);
    }
  }
  if (!copy)
    return call(nullptr);
  int rc = call(copy->host());
  if (rc == MPI_SUCCESS && read && !copy->copyOut())
    return MPI_ERR_OTHER;
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

// The split collectives: (fh, [offset,] buf, count, type) to begin, (fh, buf,
// status) to end.
#define DDTC_FILE_SPLIT_END(Name, Buf, read)                                   \
  DDTC_EXPORT int MPI_File_##Name##_end(MPI_File fh, Buf buf,                  \
                                        MPI_Status *status) {                  \
    return endSplit(fh, read, [&](void *copy) {                                \
      return PMPI_File_##Name##_end(fh, copy ? copy : buf, status);            \
    });                                                                        \
  }
#define DDTC_FILE_SPLIT_AT(Name, Buf, read)                                    \
  DDTC_EXPORT int MPI_File_##Name##_begin(MPI_File fh, MPI_Offset offset,      \
                                          Buf buf, int count,                  \
                                          MPI_Datatype type) {                 \
    return beginSplit(fh, buf, count, type, [&](void *b) {                     \
      return PMPI_File_##Name##_begin(fh, offset, b, count, type);             \
    });                                                                        \
  }                                                                            \
  DDTC_FILE_SPLIT_END(Name, Buf, read)
#define DDTC_FILE_SPLIT(Name, Buf, read)                                       \
  DDTC_EXPORT int MPI_File_##Name##_begin(MPI_File fh, Buf buf, int count,     \
                                          MPI_Datatype type) {                 \
    return beginSplit(fh, buf, count, type, [&](void *b) {                     \
      return PMPI_File_##Name##_begin(fh, b, count, type);                     \
    });                                                                        \
  }                                                                            \
  DDTC_FILE_SPLIT_END(Name, Buf, read)

DDTC_FILE_SPLIT_AT(read_at_all, void *, true)
DDTC_FILE_SPLIT_AT(write_at_all, const void *, false)
DDTC_FILE_SPLIT(read_all, void *, true)
DDTC_FILE_SPLIT(write_all, const void *, false)
DDTC_FILE_SPLIT(read_ordered, void *, true)
DDTC_FILE_SPLIT(write_ordered, const void *, false)
