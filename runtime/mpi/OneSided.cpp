//===- OneSided.cpp - One-sided calls refuse device memory ----------------===//
//
// The layer does not move one-sided communication on device memory. Passed
// on, a device pointer would reach the MPI library, which reads and writes
// window and origin memory from the host: a library without CUDA support
// then crashes the process, or reads the wrong bytes. So windows over device
// memory (MPI_Win_create, MPI_Win_attach) and device origin, result and
// compare buffers of the communication calls are refused with
// MPI_ERR_BUFFER, through the communicator's error handler for a window's
// creation and the window's for the others, with a DDTC_MPI_VERBOSE line
// naming the call and the argument. Host and managed memory, and windows
// the MPI library allocates (MPI_Win_allocate, MPI_Win_allocate_shared), go
// to the MPI library unchanged.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#define DDTC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace ddtc::mpi;

namespace {

/// Whether one of the named buffers is device memory: then reports which
/// (`call` and the argument's name) and returns true.
bool refused(const char *call,
             std::initializer_list<std::pair<const char *, bool>> buffers) {
  for (const auto &[name, device] : buffers)
    if (device) {
      note(1,
           "%s: %s is device memory; one-sided communication on device "
           "memory is not supported (MPI_ERR_BUFFER)",
           call, name);
      return true;
    }
  return false;
}

int refuseOnWindow(MPI_Win win) {
  PMPI_Win_call_errhandler(win, MPI_ERR_BUFFER);
  return MPI_ERR_BUFFER;
}

} // namespace

DDTC_EXPORT int MPI_Win_create(void *base, MPI_Aint size, int dispUnit,
                               MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  if (size > 0 && active() &&
      refused("MPI_Win_create",
              {{"the window's memory (base)", isDeviceBuffer(base)}})) {
    *win = MPI_WIN_NULL;
    PMPI_Comm_call_errhandler(comm, MPI_ERR_BUFFER);
    return MPI_ERR_BUFFER;
  }
  return PMPI_Win_create(base, size, dispUnit, info, comm, win);
}

DDTC_EXPORT int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) {
  if (size > 0 && active() &&
      refused("MPI_Win_attach",
              {{"the memory attached (base)", isDeviceBuffer(base)}}))
    return refuseOnWindow(win);
  return PMPI_Win_attach(win, base, size);
}

DDTC_EXPORT int MPI_Put(const void *origin, int originCount,
                        MPI_Datatype originType, int targetRank,
                        MPI_Aint targetDisp, int targetCount,
                        MPI_Datatype targetType, MPI_Win win) {
  if (refused("MPI_Put", {{"the origin buffer",
                           onDevice(origin, originCount, originType)}}))
    return refuseOnWindow(win);
  return PMPI_Put(origin, originCount, originType, targetRank, targetDisp,
                  targetCount, targetType, win);
}

DDTC_EXPORT int MPI_Get(void *origin, int originCount, MPI_Datatype originType,
                        int targetRank, MPI_Aint targetDisp, int targetCount,
                        MPI_Datatype targetType, MPI_Win win) {
  if (refused("MPI_Get", {{"the origin buffer",
                           onDevice(origin, originCount, originType)}}))
    return refuseOnWindow(win);
  return PMPI_Get(origin, originCount, originType, targetRank, targetDisp,
                  targetCount, targetType, win);
}

DDTC_EXPORT int MPI_Rput(const void *origin, int originCount,
                         MPI_Datatype originType, int targetRank,
                         MPI_Aint targetDisp, int targetCount,
                         MPI_Datatype targetType, MPI_Win win,
                         MPI_Request *request) {
  if (refused("MPI_Rput", {{"the origin buffer",
                            onDevice(origin, originCount, originType)}}))
    return refuseOnWindow(win);
  return PMPI_Rput(origin, originCount, originType, targetRank, targetDisp,
                   targetCount, targetType, win, request);
}

DDTC_EXPORT int MPI_Rget(void *origin, int originCount, MPI_Datatype originType,
                         int targetRank, MPI_Aint targetDisp, int targetCount,
                         MPI_Datatype targetType, MPI_Win win,
                         MPI_Request *request) {
  if (refused("MPI_Rget", {{"the origin buffer",
                            onDevice(origin, originCount, originType)}}))
    return refuseOnWindow(win);
  return PMPI_Rget(origin, originCount, originType, targetRank, targetDisp,
                   targetCount, targetType, win, request);
}

DDTC_EXPORT int MPI_Accumulate(const void *origin, int originCount,
                               MPI_Datatype originType, int targetRank,
                               MPI_Aint targetDisp, int targetCount,
                               MPI_Datatype targetType, MPI_Op op,
                               MPI_Win win) {
  if (refused("MPI_Accumulate", {{"the origin buffer",
                                  onDevice(origin, originCount, originType)}}))
    return refuseOnWindow(win);
  return PMPI_Accumulate(origin, originCount, originType, targetRank,
                         targetDisp, targetCount, targetType, op, win);
}

DDTC_EXPORT int MPI_Raccumulate(const void *origin, int originCount,
                                MPI_Datatype originType, int targetRank,
                                MPI_Aint targetDisp, int targetCount,
                                MPI_Datatype targetType, MPI_Op op, MPI_Win win,
                                MPI_Request *request) {
  if (refused("MPI_Raccumulate", {{"the origin buffer",
                                   onDevice(origin, originCount, originType)}}))
    return refuseOnWindow(win);
  return PMPI_Raccumulate(origin, originCount, originType, targetRank,
                          targetDisp, targetCount, targetType, op, win,
                          request);
}

DDTC_EXPORT int MPI_Get_accumulate(const void *origin, int originCount,
                                   MPI_Datatype originType, void *result,
                                   int resultCount, MPI_Datatype resultType,
                                   int targetRank, MPI_Aint targetDisp,
                                   int targetCount, MPI_Datatype targetType,
                                   MPI_Op op, MPI_Win win) {
  if (refused(
          "MPI_Get_accumulate",
          {{"the origin buffer", onDevice(origin, originCount, originType)},
           {"the result buffer", onDevice(result, resultCount, resultType)}}))
    return refuseOnWindow(win);
  return PMPI_Get_accumulate(origin, originCount, originType, result,
                             resultCount, resultType, targetRank, targetDisp,
                             targetCount, targetType, op, win);
}

DDTC_EXPORT int MPI_Rget_accumulate(const void *origin, int originCount,
                                    MPI_Datatype originType, void *result,
                                    int resultCount, MPI_Datatype resultType,
                                    int targetRank, MPI_Aint targetDisp,
                                    int targetCount, MPI_Datatype targetType,
                                    MPI_Op op, MPI_Win win,
                                    MPI_Request *request) {
  if (refused(
          "MPI_Rget_accumulate",
          {{"the origin buffer", onDevice(origin, originCount, originType)},
           {"the result buffer", onDevice(result, resultCount, resultType)}}))
    return refuseOnWindow(win);
  return PMPI_Rget_accumulate(origin, originCount, originType, result,
                              resultCount, resultType, targetRank, targetDisp,
                              targetCount, targetType, op, win, request);
}

DDTC_EXPORT int MPI_Fetch_and_op(const void *origin, void *result,
                                 MPI_Datatype type, int targetRank,
                                 MPI_Aint targetDisp, MPI_Op op, MPI_Win win) {
  // MPI_NO_OP reads no origin buffer (it may be null).
  if (refused(
          "MPI_Fetch_and_op",
          {{"the origin buffer", op != MPI_NO_OP && onDevice(origin, 1, type)},
           {"the result buffer", onDevice(result, 1, type)}}))
    return refuseOnWindow(win);
  return PMPI_Fetch_and_op(origin, result, type, targetRank, targetDisp, op,
                           win);
}

DDTC_EXPORT int MPI_Compare_and_swap(const void *origin, const void *compare,
                                     void *result, MPI_Datatype type,
                                     int targetRank, MPI_Aint targetDisp,
                                     MPI_Win win) {
  if (refused("MPI_Compare_and_swap",
              {{"the origin buffer", onDevice(origin, 1, type)},
               {"the compare buffer", onDevice(compare, 1, type)},
               {"the result buffer", onDevice(result, 1, type)}}))
    return refuseOnWindow(win);
  return PMPI_Compare_and_swap(origin, compare, result, type, targetRank,
                               targetDisp, win);
}
