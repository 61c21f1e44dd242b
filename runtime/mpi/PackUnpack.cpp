//===- PackUnpack.cpp - MPI_Pack and MPI_Unpack with device buffers -------===//
//
// The packed bytes are ddtc's, which equal MPI_Pack's. Either side may be
// device memory; a host packed buffer is written through pinned memory.
// MPI_Pack_size needs no buffer and is the MPI library's.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include <cstring>

#define DDTC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace ddtc::mpi;

namespace {

/// Moves `bytes` packed bytes between the instances at `data` and `packed`
/// (pack when `pack`), through pinned memory when `packed` is host memory.
int moveDevice(bool pack, const TypeInfo &t, const void *data, int count,
               void *packed, int64_t bytes, MPI_Comm comm) {
  bool packedOnDevice = isDeviceBuffer(packed);
  void *target = packed;
  void *pinned = nullptr;
  if (!packedOnDevice) {
    pinned = pinnedAcquire(static_cast<size_t>(bytes));
    if (!pinned)
      return raise(comm, MPI_ERR_NO_MEM, "cannot get pinned host memory");
    target = pinned;
    if (!pack)
      std::memcpy(pinned, packed, static_cast<size_t>(bytes));
  }
  void *stream = threadStream(data);
  bool ok;
  char *origin = const_cast<char *>(static_cast<const char *>(data));
  if (pack)
    ok = ddtc_pack(t.type, data, count, 0, bytes, target, stream,
                   settings().maxCtas) == DDTC_SUCCESS;
  else
    ok = ddtc_unpack(t.type, origin, count, 0, bytes, target, stream,
                     settings().maxCtas) == DDTC_SUCCESS;
  std::string error;
  if (ok && !syncStream(stream, error))
    ok = false;
  if (ok && pack && pinned)
    std::memcpy(packed, pinned, static_cast<size_t>(bytes));
  if (pinned)
    pinnedRelease(pinned, static_cast<size_t>(bytes));
  return ok ? MPI_SUCCESS
            : raise(comm, MPI_ERR_OTHER,
                    error.empty() ? ddtc_last_error() : error.c_str());
}

/// Packs or unpacks device data whose type ddtc cannot pack: the MPI
/// library's engine on a host copy of the instances.
int moveStaged(bool pack, const void *data, int count, MPI_Datatype type,
               void *packed, int size, int *position, MPI_Comm comm) {
  StagedBuffer s(data, count, type, /*copyIn=*/true);
  if (!s.ok())
    return raise(comm, MPI_ERR_OTHER, "cannot stage a device buffer");
  int rc = pack ? PMPI_Pack(s.host(), count, type, packed, size, position, comm)
                : PMPI_Unpack(packed, size, position, s.host(), count, type,
                              comm);
  if (rc == MPI_SUCCESS && !pack && !s.copyOut())
    return raise(comm, MPI_ERR_OTHER, "cannot copy a staged buffer back");
  return rc;
}

} // namespace

DDTC_EXPORT int MPI_Pack(const void *inbuf, int incount, MPI_Datatype type,
                         void *outbuf, int outsize, int *position,
                         MPI_Comm comm) {
  bool in = onDevice(inbuf, incount, type);
  bool out = active() && outsize > 0 && isDeviceBuffer(outbuf);
  if (!in && !out)
    return PMPI_Pack(inbuf, incount, type, outbuf, outsize, position, comm);
  TypeInfo *t = acquirePlannedType(type);
  int64_t bytes = t->size * incount;
  int rc;
  if (*position < 0 || bytes > int64_t(outsize) - *position) {
    rc = raise(comm, MPI_ERR_TRUNCATE,
               "MPI_Pack: the output buffer is too small");
  } else if (!in) {
    // Host data into a device buffer: the MPI library packs on the host.
    std::string tmp(static_cast<size_t>(bytes), '\0');
    int pos = 0;
    rc = PMPI_Pack(inbuf, incount, type, tmp.data(), static_cast<int>(bytes),
                   &pos, comm);
    if (rc == MPI_SUCCESS &&
        !copyToDevice(static_cast<char *>(outbuf) + *position, tmp.data(),
                      static_cast<size_t>(bytes)))
      rc = raise(comm, MPI_ERR_OTHER, "MPI_Pack: copy to the device failed");
    if (rc == MPI_SUCCESS)
      *position += static_cast<int>(bytes);
  } else if (!t->type) {
    if (out) {
      std::string tmp(static_cast<size_t>(bytes), '\0');
      int pos = 0;
      rc = moveStaged(true, inbuf, incount, type, tmp.data(),
                      static_cast<int>(bytes), &pos, comm);
      if (rc == MPI_SUCCESS &&
          !copyToDevice(static_cast<char *>(outbuf) + *position, tmp.data(),
                        static_cast<size_t>(bytes)))
        rc = raise(comm, MPI_ERR_OTHER, "MPI_Pack: copy to the device failed");
      if (rc == MPI_SUCCESS)
        *position += static_cast<int>(bytes);
    } else {
      rc = moveStaged(true, inbuf, incount, type, outbuf, outsize, position,
                      comm);
    }
  } else {
    rc = moveDevice(true, *t, inbuf, incount,
                    static_cast<char *>(outbuf) + *position, bytes, comm);
    if (rc == MPI_SUCCESS)
      *position += static_cast<int>(bytes);
  }
  releaseType(t);
  return rc;
}

DDTC_EXPORT int MPI_Unpack(const void *inbuf, int insize, int *position,
                           void *outbuf, int outcount, MPI_Datatype type,
                           MPI_Comm comm) {
  bool out = onDevice(outbuf, outcount, type);
  bool in = active() && insize > 0 && isDeviceBuffer(inbuf);
  if (!in && !out)
    return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, type, comm);
  TypeInfo *t = acquirePlannedType(type);
  int64_t bytes = t->size * outcount;
  const char *src = static_cast<const char *>(inbuf) + *position;
  int rc = MPI_SUCCESS;
  std::string tmp;
  if (*position < 0 || bytes > int64_t(insize) - *position) {
    rc = raise(comm, MPI_ERR_TRUNCATE,
               "MPI_Unpack: the input holds fewer bytes than the type needs");
  } else if (in && (!out || !t->type)) {
    // Device packed bytes for the host engine: bring them over first.
    tmp.resize(static_cast<size_t>(bytes));
    if (!copyToHost(tmp.data(), src, static_cast<size_t>(bytes)))
      rc = raise(comm, MPI_ERR_OTHER, "MPI_Unpack: copy from the device failed");
    src = tmp.data();
  }
  if (rc == MPI_SUCCESS) {
    int pos = 0;
    if (!out)
      rc = PMPI_Unpack(src, static_cast<int>(bytes), &pos, outbuf, outcount,
                       type, comm);
    else if (!t->type)
      rc = moveStaged(false, outbuf, outcount, type, const_cast<char *>(src),
                      static_cast<int>(bytes), &pos, comm);
    else
      rc = moveDevice(false, *t, outbuf, outcount, const_cast<char *>(src),
                      bytes, comm);
    if (rc == MPI_SUCCESS)
      *position += static_cast<int>(bytes);
  }
  releaseType(t);
  return rc;
}
