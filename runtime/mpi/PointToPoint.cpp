//===- PointToPoint.cpp - The point-to-point MPI entry points -------------===//
//
// Each wrapper classifies its buffer and either forwards to the MPI library
// (host and managed memory, MPI_PROC_NULL, empty messages) or hands the
// device buffer to the layer's transfers.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include <map>

#define DDTC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace ddtc::mpi;

namespace {

/// Waits for a host request; while operations of the layer are in flight
/// they progress meanwhile (a peer may wait for them to answer us).
int hostWait(MPI_Request *r, MPI_Status *status) {
  int flag = 0, rc;
  do {
    progress();
    rc = PMPI_Test(r, &flag, status);
  } while (rc == MPI_SUCCESS && !flag);
  return rc;
}

/// Probed zero-byte messages on communicators with a pair: Mrecv must know
/// the communicator to read their note.
std::mutex probedMutex;
std::map<MPI_Message, MPI_Comm> probedComm;

/// After a probe found a message: a zero-byte one announcing a pipeline
/// reports the size that follows.
void fixProbed(MPI_Comm comm, MPI_Status *st, MPI_Message *message) {
  if (!active() || st->MPI_SOURCE == MPI_PROC_NULL)
    return;
  MPI_Count n = 0;
  PMPI_Get_elements_x(st, MPI_BYTE, &n);
  const CommPair *pair = n == 0 ? commPair(comm) : nullptr;
  if (!pair)
    return;
  Note note;
  if (message) {
    std::lock_guard<std::mutex> lock(probedMutex);
    probedComm[*message] = comm;
  }
  if (peekNote(*pair, st->MPI_SOURCE, st->MPI_TAG, note) &&
      (note.kind == Note::Pipelined || note.kind == Note::Ipc))
    PMPI_Status_set_elements_x(st, MPI_BYTE, note.bytes);
}

/// The communicator a message was probed on, when it was a zero-byte one on
/// a communicator with a pair; else MPI_COMM_NULL (MPI_MESSAGE_NO_PROC too).
MPI_Comm takeProbedComm(MPI_Message message) {
  if (message == MPI_MESSAGE_NO_PROC)
    return MPI_COMM_NULL;
  std::lock_guard<std::mutex> lock(probedMutex);
  auto it = probedComm.find(message);
  if (it == probedComm.end())
    return MPI_COMM_NULL;
  MPI_Comm c = it->second;
  probedComm.erase(it);
  return c;
}

bool mine(const void *buf, int count, MPI_Datatype type, int peer) {
  return peer != MPI_PROC_NULL && onDevice(buf, count, type);
}

/// The MPI library's blocking and persistent sends of one mode.
struct HostSend {
  int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
  int (*init)(const void *, int, MPI_Datatype, int, int, MPI_Comm,
              MPI_Request *);
};

HostSend hostSend(SendMode mode) {
  switch (mode) {
  case SendMode::Buffered:
    return {PMPI_Bsend, PMPI_Bsend_init};
  case SendMode::Synchronous:
    return {PMPI_Ssend, PMPI_Ssend_init};
  case SendMode::Ready:
    return {PMPI_Rsend, PMPI_Rsend_init};
  case SendMode::Standard:
    break;
  }
  return {PMPI_Send, PMPI_Send_init};
}

/// Hands the status of a finished call out, unless it is ignored.
void setStatus(MPI_Status *status, const MPI_Status &st) {
  if (status != MPI_STATUS_IGNORE)
    *status = st;
}

/// Ends a host receive into (buf, count, type) that returned `rc` and `st`:
/// a zero-byte message on `comm` may announce the pipelined one that follows
/// (completeHostReceive); MPI_COMM_NULL when none can.
int hostReceived(int rc, void *buf, int count, MPI_Datatype type, MPI_Comm comm,
                 MPI_Status &st, MPI_Status *status) {
  if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
    rc = completeHostReceive(buf, count, type, comm, &st);
  setStatus(status, st);
  return rc;
}

/// Waits for the receive (req[0]) and the send (req[1]) a Sendrecv was made
/// of: the status is the receive's, the error the first that failed.
int waitSendrecv(MPI_Request req[2], MPI_Status *status) {
  MPI_Status st[2];
  int rc = MPI_Waitall(2, req, st);
  setStatus(status, st[0]);
  if (rc == MPI_ERR_IN_STATUS)
    rc = st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
  return rc;
}

/// Probe and Mprobe (`message` set): while operations of the layer are in
/// flight they poll (`poll`: Iprobe, Improbe) instead of blocking in `block`,
/// so that those progress meanwhile (a peer may wait for them to answer us).
template <typename Block, typename Poll>
int probe(MPI_Comm comm, MPI_Message *message, MPI_Status *status, Block block,
          Poll poll) {
  MPI_Status st;
  int rc;
  if (!anyPending()) {
    rc = block(&st);
  } else {
    int flag = 0;
    do {
      progress();
      rc = poll(&flag, &st);
    } while (rc == MPI_SUCCESS && !flag);
  }
  if (rc == MPI_SUCCESS)
    fixProbed(comm, &st, message);
  setStatus(status, st);
  return rc;
}

/// After Iprobe or Improbe returned `rc`: the message found, if any, is
/// reported as Probe reports it.
int probed(int rc, const int *flag, MPI_Comm comm, MPI_Status &st,
           MPI_Message *message, MPI_Status *status) {
  if (rc == MPI_SUCCESS && *flag) {
    fixProbed(comm, &st, message);
    setStatus(status, st);
  }
  return rc;
}

int send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
         MPI_Comm comm, SendMode mode) {
  progress();
  if (!mine(buf, count, type, dest)) {
    beforeHostSend(count, type, dest, tag, comm);
    int rc;
    if (anyInFlight() && mode != SendMode::Buffered) {
      MPI_Request r;
      rc = isendInMode(buf, count, type, dest, tag, comm, mode, &r);
      if (rc == MPI_SUCCESS)
        rc = hostWait(&r, MPI_STATUS_IGNORE);
    } else {
      rc = hostSend(mode).send(buf, count, type, dest, tag, comm);
    }
    return rc;
  }
  return deviceSend(buf, count, type, dest, tag, comm, mode);
}

int isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
          MPI_Comm comm, SendMode mode, MPI_Request *request) {
  progress();
  if (!mine(buf, count, type, dest)) {
    beforeHostSend(count, type, dest, tag, comm);
    return isendInMode(buf, count, type, dest, tag, comm, mode, request);
  }
  return deviceIsend(buf, count, type, dest, tag, comm, mode, request);
}

int sendInit(const void *buf, int count, MPI_Datatype type, int dest, int tag,
             MPI_Comm comm, SendMode mode, MPI_Request *request) {
  if (!mine(buf, count, type, dest)) {
    int rc = hostSend(mode).init(buf, count, type, dest, tag, comm, request);
    if (rc == MPI_SUCCESS)
      watchHostRequest(*request, true, const_cast<void *>(buf), count, type,
                       dest, tag, comm, true);
    return rc;
  }
  return devicePersistent(true, const_cast<void *>(buf), count, type, dest, tag,
                          comm, mode, request);
}

} // namespace

// The four modes of a send (standard, buffered, synchronous, ready) and of
// its nonblocking and persistent forms.
#define DDTC_SEND(Name, mode)                                                  \
  DDTC_EXPORT int MPI_##Name(const void *buf, int count, MPI_Datatype type,    \
                             int dest, int tag, MPI_Comm comm) {               \
    return send(buf, count, type, dest, tag, comm, SendMode::mode);            \
  }
#define DDTC_SEND_REQUEST(Name, impl, mode)                                    \
  DDTC_EXPORT int MPI_##Name(const void *buf, int count, MPI_Datatype type,    \
                             int dest, int tag, MPI_Comm comm,                 \
                             MPI_Request *request) {                           \
    return impl(buf, count, type, dest, tag, comm, SendMode::mode, request);   \
  }

DDTC_SEND(Send, Standard)
DDTC_SEND(Bsend, Buffered)
DDTC_SEND(Ssend, Synchronous)
DDTC_SEND(Rsend, Ready)
DDTC_SEND_REQUEST(Isend, isend, Standard)
DDTC_SEND_REQUEST(Ibsend, isend, Buffered)
DDTC_SEND_REQUEST(Issend, isend, Synchronous)
DDTC_SEND_REQUEST(Irsend, isend, Ready)
DDTC_SEND_REQUEST(Send_init, sendInit, Standard)
DDTC_SEND_REQUEST(Bsend_init, sendInit, Buffered)
DDTC_SEND_REQUEST(Ssend_init, sendInit, Synchronous)
DDTC_SEND_REQUEST(Rsend_init, sendInit, Ready)

DDTC_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source,
                         int tag, MPI_Comm comm, MPI_Status *status) {
  progress();
  if (!mine(buf, count, type, source)) {
    MPI_Status st;
    int rc;
    if (anyInFlight()) {
      MPI_Request r;
      rc = PMPI_Irecv(buf, count, type, source, tag, comm, &r);
      if (rc == MPI_SUCCESS)
        rc = hostWait(&r, &st);
    } else {
      rc = PMPI_Recv(buf, count, type, source, tag, comm, &st);
    }
    return hostReceived(rc, buf, count, type, comm, st, status);
  }
  return deviceRecv(buf, count, type, source, tag, comm, status);
}

DDTC_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source,
                          int tag, MPI_Comm comm, MPI_Request *request) {
  progress();
  if (!mine(buf, count, type, source)) {
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
    if (rc == MPI_SUCCESS)
      watchHostRequest(*request, false, buf, count, type, source, tag, comm,
                       false);
    return rc;
  }
  return deviceIrecv(buf, count, type, source, tag, comm, request);
}

DDTC_EXPORT int MPI_Recv_init(void *buf, int count, MPI_Datatype type,
                              int source, int tag, MPI_Comm comm,
                              MPI_Request *request) {
  if (!mine(buf, count, type, source)) {
    int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, request);
    if (rc == MPI_SUCCESS)
      watchHostRequest(*request, false, buf, count, type, source, tag, comm,
                       true);
    return rc;
  }
  return devicePersistent(false, buf, count, type, source, tag, comm,
                          SendMode::Standard, request);
}

DDTC_EXPORT int MPI_Start(MPI_Request *request) {
  int rc = MPI_SUCCESS;
  if (anyPending() && startRequest(request, rc))
    return rc;
  flushUnposted(); // a persistent host send: the sends before it go first
  return PMPI_Start(request);
}

DDTC_EXPORT int MPI_Startall(int n, MPI_Request requests[]) {
  if (!anyPending())
    return PMPI_Startall(n, requests);
  for (int i = 0; i < n; ++i) {
    int rc = MPI_SUCCESS;
    if (!startRequest(&requests[i], rc)) {
      flushUnposted();
      rc = PMPI_Start(&requests[i]);
    }
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
  if (!s && !r && !anyInFlight()) {
    beforeHostSend(sendcount, sendtype, dest, sendtag, comm);
    MPI_Status st;
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                           recvcount, recvtype, source, recvtag, comm, &st);
    return hostReceived(rc, recvbuf, recvcount, recvtype, comm, st, status);
  }
  // The receive is posted first so that a send to oneself cannot block.
  MPI_Request req[2];
  int rc =
      MPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &req[0]);
  if (rc != MPI_SUCCESS)
    return rc;
  rc = MPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &req[1]);
  if (rc != MPI_SUCCESS)
    return rc;
  return waitSendrecv(req, status);
}

DDTC_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type,
                                     int dest, int sendtag, int source,
                                     int recvtag, MPI_Comm comm,
                                     MPI_Status *status) {
  progress();
  bool device = onDevice(buf, count, type) &&
                (dest != MPI_PROC_NULL || source != MPI_PROC_NULL);
  if (!device) {
    beforeHostSend(count, type, dest, sendtag, comm);
    MPI_Status st;
    int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source,
                                   recvtag, comm, &st);
    return hostReceived(rc, buf, count, type, comm, st, status);
  }
  // The outgoing message is packed (its bytes taken) before the receive can
  // overwrite the buffer: an eager MPI_Isend of a device buffer returns only
  // after the pack has finished.
  MPI_Request req[2];
  int rc;
  {
    EagerSendsOnly eager;
    rc = MPI_Isend(buf, count, type, dest, sendtag, comm, &req[1]);
  }
  if (rc != MPI_SUCCESS)
    return rc;
  rc = MPI_Irecv(buf, count, type, source, recvtag, comm, &req[0]);
  if (rc != MPI_SUCCESS)
    return rc;
  return waitSendrecv(req, status);
}

DDTC_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm,
                          MPI_Status *status) {
  return probe(
      comm, nullptr, status,
      [&](MPI_Status *st) { return PMPI_Probe(source, tag, comm, st); },
      [&](int *flag, MPI_Status *st) {
        return PMPI_Iprobe(source, tag, comm, flag, st);
      });
}

DDTC_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
                           MPI_Status *status) {
  progress();
  MPI_Status st;
  int rc = PMPI_Iprobe(source, tag, comm, flag, &st);
  return probed(rc, flag, comm, st, nullptr, status);
}

DDTC_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm,
                           MPI_Message *message, MPI_Status *status) {
  return probe(
      comm, message, status,
      [&](MPI_Status *st) {
        return PMPI_Mprobe(source, tag, comm, message, st);
      },
      [&](int *flag, MPI_Status *st) {
        return PMPI_Improbe(source, tag, comm, flag, message, st);
      });
}

DDTC_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
                            MPI_Message *message, MPI_Status *status) {
  progress();
  MPI_Status st;
  int rc = PMPI_Improbe(source, tag, comm, flag, message, &st);
  return probed(rc, flag, comm, st, message, status);
}

DDTC_EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype type,
                          MPI_Message *message, MPI_Status *status) {
  progress();
  MPI_Comm comm = takeProbedComm(*message);
  if (*message == MPI_MESSAGE_NO_PROC || !onDevice(buf, count, type)) {
    MPI_Status st;
    int rc = PMPI_Mrecv(buf, count, type, message, &st);
    return hostReceived(rc, buf, count, type, comm, st, status);
  }
  return deviceMrecv(buf, count, type, message, comm, status);
}

DDTC_EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype type,
                           MPI_Message *message, MPI_Request *request) {
  progress();
  MPI_Comm comm = takeProbedComm(*message);
  if (*message == MPI_MESSAGE_NO_PROC || !onDevice(buf, count, type)) {
    int rc = PMPI_Imrecv(buf, count, type, message, request);
    if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
      watchHostRequest(*request, false, buf, count, type, 0, 0, comm, false);
    return rc;
  }
  return deviceImrecv(buf, count, type, message, comm, request);
}
