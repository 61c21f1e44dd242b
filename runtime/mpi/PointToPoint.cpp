//===- PointToPoint.cpp - The point-to-point MPI entry points ---------------===//
//
// Each wrapper classifies its buffer and either forwards to the MPI library
// (host and managed memory, MPI_PROC_NULL, empty messages) or hands the
// device buffer to the layer's transfers.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#define DDTC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace ddtc::mpi;

namespace {

bool mine(const void *buf, int count, MPI_Datatype type, int peer) {
  return peer != MPI_PROC_NULL && onDevice(buf, count, type);
}

int send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
         MPI_Comm comm, SendMode mode) {
  progress();
  if (!mine(buf, count, type, dest)) {
    switch (mode) {
    case SendMode::Buffered:
      return PMPI_Bsend(buf, count, type, dest, tag, comm);
    case SendMode::Synchronous:
      return PMPI_Ssend(buf, count, type, dest, tag, comm);
    case SendMode::Ready:
      return PMPI_Rsend(buf, count, type, dest, tag, comm);
    case SendMode::Standard:
      break;
    }
    return PMPI_Send(buf, count, type, dest, tag, comm);
  }
  return deviceSend(buf, count, type, dest, tag, comm, mode);
}

int isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
          MPI_Comm comm, SendMode mode, MPI_Request *request) {
  progress();
  if (!mine(buf, count, type, dest)) {
    switch (mode) {
    case SendMode::Buffered:
      return PMPI_Ibsend(buf, count, type, dest, tag, comm, request);
    case SendMode::Synchronous:
      return PMPI_Issend(buf, count, type, dest, tag, comm, request);
    case SendMode::Ready:
      return PMPI_Irsend(buf, count, type, dest, tag, comm, request);
    case SendMode::Standard:
      break;
    }
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
  }
  return deviceIsend(buf, count, type, dest, tag, comm, mode, request);
}

int sendInit(const void *buf, int count, MPI_Datatype type, int dest, int tag,
             MPI_Comm comm, SendMode mode, MPI_Request *request) {
  if (!mine(buf, count, type, dest)) {
    switch (mode) {
    case SendMode::Buffered:
      return PMPI_Bsend_init(buf, count, type, dest, tag, comm, request);
    case SendMode::Synchronous:
      return PMPI_Ssend_init(buf, count, type, dest, tag, comm, request);
    case SendMode::Ready:
      return PMPI_Rsend_init(buf, count, type, dest, tag, comm, request);
    case SendMode::Standard:
      break;
    }
    return PMPI_Send_init(buf, count, type, dest, tag, comm, request);
  }
  return devicePersistent(true, const_cast<void *>(buf), count, type, dest,
                          tag, comm, mode, request);
}

} // namespace

DDTC_EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype type,
                         int dest, int tag, MPI_Comm comm) {
  return send(buf, count, type, dest, tag, comm, SendMode::Standard);
}
DDTC_EXPORT int MPI_Bsend(const void *buf, int count, MPI_Datatype type,
                          int dest, int tag, MPI_Comm comm) {
  return send(buf, count, type, dest, tag, comm, SendMode::Buffered);
}
DDTC_EXPORT int MPI_Ssend(const void *buf, int count, MPI_Datatype type,
                          int dest, int tag, MPI_Comm comm) {
  return send(buf, count, type, dest, tag, comm, SendMode::Synchronous);
}
DDTC_EXPORT int MPI_Rsend(const void *buf, int count, MPI_Datatype type,
                          int dest, int tag, MPI_Comm comm) {
  return send(buf, count, type, dest, tag, comm, SendMode::Ready);
}

DDTC_EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype type,
                          int dest, int tag, MPI_Comm comm,
                          MPI_Request *request) {
  return isend(buf, count, type, dest, tag, comm, SendMode::Standard,
               request);
}
DDTC_EXPORT int MPI_Ibsend(const void *buf, int count, MPI_Datatype type,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request) {
  return isend(buf, count, type, dest, tag, comm, SendMode::Buffered,
               request);
}
DDTC_EXPORT int MPI_Issend(const void *buf, int count, MPI_Datatype type,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request) {
  return isend(buf, count, type, dest, tag, comm, SendMode::Synchronous,
               request);
}
DDTC_EXPORT int MPI_Irsend(const void *buf, int count, MPI_Datatype type,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request) {
  return isend(buf, count, type, dest, tag, comm, SendMode::Ready, request);
}

DDTC_EXPORT int MPI_Send_init(const void *buf, int count, MPI_Datatype type,
                              int dest, int tag, MPI_Comm comm,
                              MPI_Request *request) {
  return sendInit(buf, count, type, dest, tag, comm, SendMode::Standard,
                  request);
}
DDTC_EXPORT int MPI_Bsend_init(const void *buf, int count, MPI_Datatype type,
                               int dest, int tag, MPI_Comm comm,
                               MPI_Request *request) {
  return sendInit(buf, count, type, dest, tag, comm, SendMode::Buffered,
                  request);
}
DDTC_EXPORT int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type,
                               int dest, int tag, MPI_Comm comm,
                               MPI_Request *request) {
  return sendInit(buf, count, type, dest, tag, comm, SendMode::Synchronous,
                  request);
}
DDTC_EXPORT int MPI_Rsend_init(const void *buf, int count, MPI_Datatype type,
                               int dest, int tag, MPI_Comm comm,
                               MPI_Request *request) {
  return sendInit(buf, count, type, dest, tag, comm, SendMode::Ready,
                  request);
}

DDTC_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source,
                         int tag, MPI_Comm comm, MPI_Status *status) {
  progress();
  if (!mine(buf, count, type, source))
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
  return deviceRecv(buf, count, type, source, tag, comm, status);
}

DDTC_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source,
                          int tag, MPI_Comm comm, MPI_Request *request) {
  progress();
  if (!mine(buf, count, type, source))
    return PMPI_Irecv(buf, count, type, source, tag, comm, request);
  return deviceIrecv(buf, count, type, source, tag, comm, request);
}

DDTC_EXPORT int MPI_Recv_init(void *buf, int count, MPI_Datatype type,
                              int source, int tag, MPI_Comm comm,
                              MPI_Request *request) {
  if (!mine(buf, count, type, source))
    return PMPI_Recv_init(buf, count, type, source, tag, comm, request);
  return devicePersistent(false, buf, count, type, source, tag, comm,
                          SendMode::Standard, request);
}

DDTC_EXPORT int MPI_Start(MPI_Request *request) {
  int rc = MPI_SUCCESS;
  if (anyPending() && startRequest(request, rc))
    return rc;
  return PMPI_Start(request);
}

DDTC_EXPORT int MPI_Startall(int n, MPI_Request requests[]) {
  if (!anyPending())
    return PMPI_Startall(n, requests);
  for (int i = 0; i < n; ++i) {
    int rc = MPI_SUCCESS;
    if (!startRequest(&requests[i], rc))
      rc = PMPI_Start(&requests[i]);
    if (rc != MPI_SUCCESS)
      return rc;
  }
  return MPI_SUCCESS;
}

DDTC_EXPORT int MPI_Sendrecv(const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, int dest, int sendtag,
                             void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int source, int recvtag,
                             MPI_Comm comm, MPI_Status *status) {
  progress();
  bool s = mine(sendbuf, sendcount, sendtype, dest);
  bool r = mine(recvbuf, recvcount, recvtype, source);
  if (!s && !r)
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                         recvcount, recvtype, source, recvtag, comm, status);
  // The receive is posted first so that a send to oneself cannot block.
  MPI_Request req[2];
  int rc = MPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm,
                     &req[0]);
  if (rc != MPI_SUCCESS)
    return rc;
  rc = MPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &req[1]);
  if (rc != MPI_SUCCESS)
    return rc;
  MPI_Status st[2];
  rc = MPI_Waitall(2, req, st);
  if (status != MPI_STATUS_IGNORE)
    *status = st[0];
  if (rc == MPI_ERR_IN_STATUS)
    rc = st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
  return rc;
}

DDTC_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type,
                                     int dest, int sendtag, int source,
                                     int recvtag, MPI_Comm comm,
                                     MPI_Status *status) {
  progress();
  bool device = onDevice(buf, count, type) &&
                (dest != MPI_PROC_NULL || source != MPI_PROC_NULL);
  if (!device)
    return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source,
                                 recvtag, comm, status);
  // The outgoing message is packed (its bytes taken) before the receive can
  // overwrite the buffer: MPI_Isend of a device buffer returns only after
  // the pack has finished.
  MPI_Request req[2];
  int rc = MPI_Isend(buf, count, type, dest, sendtag, comm, &req[1]);
  if (rc != MPI_SUCCESS)
    return rc;
  rc = MPI_Irecv(buf, count, type, source, recvtag, comm, &req[0]);
  if (rc != MPI_SUCCESS)
    return rc;
  MPI_Status st[2];
  rc = MPI_Waitall(2, req, st);
  if (status != MPI_STATUS_IGNORE)
    *status = st[0];
  if (rc == MPI_ERR_IN_STATUS)
    rc = st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
  return rc;
}

DDTC_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm,
                          MPI_Status *status) {
  if (!anyPending())
    return PMPI_Probe(source, tag, comm, status);
  int flag = 0;
  for (;;) {
    progress();
    int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
    if (rc != MPI_SUCCESS || flag)
      return rc;
  }
}

DDTC_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
                           MPI_Status *status) {
  progress();
  return PMPI_Iprobe(source, tag, comm, flag, status);
}

DDTC_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm,
                           MPI_Message *message, MPI_Status *status) {
  if (!anyPending())
    return PMPI_Mprobe(source, tag, comm, message, status);
  int flag = 0;
  for (;;) {
    progress();
    int rc = PMPI_Improbe(source, tag, comm, &flag, message, status);
    if (rc != MPI_SUCCESS || flag)
      return rc;
  }
}

DDTC_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
                            MPI_Message *message, MPI_Status *status) {
  progress();
  return PMPI_Improbe(source, tag, comm, flag, message, status);
}

DDTC_EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype type,
                          MPI_Message *message, MPI_Status *status) {
  progress();
  if (*message == MPI_MESSAGE_NO_PROC || !onDevice(buf, count, type))
    return PMPI_Mrecv(buf, count, type, message, status);
  return deviceMrecv(buf, count, type, message, status);
}

DDTC_EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype type,
                           MPI_Message *message, MPI_Request *request) {
  progress();
  if (*message == MPI_MESSAGE_NO_PROC || !onDevice(buf, count, type))
    return PMPI_Imrecv(buf, count, type, message, request);
  return deviceImrecv(buf, count, type, message, request);
}
