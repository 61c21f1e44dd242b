//===- Transfers.cpp - Messages from and to device buffers -------------------===//
//
// Every message is one message of the MPI library on the user's communicator,
// peer and tag, holding the bytes MPI_Pack would produce, as MPI_PACKED: the
// sender packs (ddtc kernel, or a plain copy for contiguous types) into
// pinned host memory and sends it; the receiver receives into pinned memory
// up to its capacity (so truncation, wildcards, probes, ordering and the
// status are the MPI library's) and unpacks what arrived. A type ddtc cannot
// pack is staged whole through host memory with the MPI datatype itself.
//
// The library's own message is posted before the call returns (the pack is
// waited for), so the MPI library progresses it alone; the layer's progress
// only finishes the local side (unpack, releasing buffers, completing the
// user's request).
//
// A request of the user's that stands for an operation is a real MPI request:
// a zero-byte receive on the layer's private copy of MPI_COMM_SELF with a
// tag of its own, completed by a zero-byte send when the operation is done.
// It mixes with other requests in every Wait/Test call, converts to Fortran,
// and persistent operations use a persistent receive the same way.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

namespace ddtc::mpi {

struct Operation {
  bool send = true;
  SendMode mode = SendMode::Standard;
  TypeInfo *info = nullptr;
  MPI_Datatype datatype = MPI_DATATYPE_NULL; ///< valid only while posting
  const void *buf = nullptr;
  int count = 0, peer = 0, tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Message message = MPI_MESSAGE_NULL; ///< for Mrecv/Imrecv
  bool persistent = false;

  // One transfer.
  enum class State { Idle, Posted, Unpacking, Done } state = State::Idle;
  void *pinned = nullptr;
  size_t pinnedBytes = 0;
  void *stream = nullptr;
  void *event = nullptr;
  MPI_Request inner = MPI_REQUEST_NULL;
  std::unique_ptr<StagedBuffer> staged;
  int64_t received = 0;
  int source = MPI_ANY_SOURCE, rtag = MPI_ANY_TAG;
  int error = MPI_SUCCESS;
  bool cancelled = false;
  bool started = false; ///< a start not yet reported by Wait/Test

  // The user's request.
  int completionTag = -1;
  MPI_Request user = MPI_REQUEST_NULL;
  bool userFreed = false;

  ~Operation() {
    releaseType(info);
    if (pinned)
      pinnedRelease(pinned, pinnedBytes);
  }
};

namespace {

std::mutex registryMutex; // guards `inFlight` and `byRequest`
std::vector<OpRef> inFlight;
std::map<MPI_Request, OpRef> byRequest;
std::atomic<int> pendingCount{0};
std::atomic<int> nextTag{0};
int tagLimit = 32767;

int completionTag() {
  static std::once_flag once;
  std::call_once(once, [] {
    void *v = nullptr;
    int flag = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
    if (flag && v)
      tagLimit = *static_cast<int *>(v);
  });
  return nextTag.fetch_add(1, std::memory_order_relaxed) % tagLimit;
}

int packedBytes(const Operation &op) {
  return static_cast<int>(op.info->size * op.count);
}

const char *modeName(SendMode m) {
  switch (m) {
  case SendMode::Standard:
    return "send";
  case SendMode::Buffered:
    return "bsend";
  case SendMode::Synchronous:
    return "ssend";
  case SendMode::Ready:
    return "rsend";
  }
  return "?";
}

int isendMode(const void *buf, int count, MPI_Datatype type, int dest,
              int tag, MPI_Comm comm, SendMode mode, MPI_Request *r) {
  switch (mode) {
  case SendMode::Buffered:
    return PMPI_Ibsend(buf, count, type, dest, tag, comm, r);
  case SendMode::Synchronous:
    return PMPI_Issend(buf, count, type, dest, tag, comm, r);
  case SendMode::Ready:
    return PMPI_Irsend(buf, count, type, dest, tag, comm, r);
  case SendMode::Standard:
    break;
  }
  return PMPI_Isend(buf, count, type, dest, tag, comm, r);
}

/// Packs the whole message into pinned memory and waits for it.
int packWhole(Operation &op) {
  int64_t n = packedBytes(op);
  op.pinnedBytes = static_cast<size_t>(n);
  op.pinned = pinnedAcquire(op.pinnedBytes);
  op.stream = threadStream(op.buf);
  if (!op.pinned || !op.stream)
    return raise(op.comm, MPI_ERR_NO_MEM,
                 "cannot get pinned host memory or a CUDA stream");
  const char *origin = static_cast<const char *>(op.buf);
  bool ok;
  if (op.info->contiguous)
    ok = copyToHostAsync(op.pinned, origin + op.info->trueLb, n, op.stream);
  else
    ok = ddtc_pack(op.info->type, op.buf, op.count, 0, n, op.pinned,
                   op.stream, settings().maxCtas) == DDTC_SUCCESS;
  std::string error;
  if (!ok || !syncStream(op.stream, error))
    return raise(op.comm, MPI_ERR_OTHER,
                 ok ? error.c_str() : ddtc_last_error());
  return MPI_SUCCESS;
}

/// Starts one transfer: the library's message is posted when this returns.
int post(Operation &op) {
  op.state = Operation::State::Posted;
  op.received = 0;
  op.error = MPI_SUCCESS;
  op.cancelled = false;
  op.started = true;
  if (!op.info->type || settings().protocol == Protocol::Staged) {
    // Staged through host memory with the MPI datatype itself.
    op.staged = std::make_unique<StagedBuffer>(op.buf, op.count, op.datatype,
                                               /*copyIn=*/true);
    if (!op.staged->ok())
      return raise(op.comm, MPI_ERR_OTHER, "cannot stage a device buffer");
    if (op.send)
      return isendMode(op.staged->host(), op.count, op.datatype, op.peer,
                       op.tag, op.comm, op.mode, &op.inner);
    if (op.message != MPI_MESSAGE_NULL)
      return PMPI_Imrecv(op.staged->host(), op.count, op.datatype,
                         &op.message, &op.inner);
    return PMPI_Irecv(op.staged->host(), op.count, op.datatype, op.peer,
                      op.tag, op.comm, &op.inner);
  }
  if (op.send) {
    if (int rc = packWhole(op); rc != MPI_SUCCESS)
      return rc;
    note(3, "%s %d bytes to %d tag %d (eager)", modeName(op.mode),
         packedBytes(op), op.peer, op.tag);
    return isendMode(op.pinned, packedBytes(op), MPI_PACKED, op.peer, op.tag,
                     op.comm, op.mode, &op.inner);
  }
  op.pinnedBytes = static_cast<size_t>(packedBytes(op));
  op.pinned = pinnedAcquire(op.pinnedBytes);
  if (!op.pinned)
    return raise(op.comm, MPI_ERR_NO_MEM, "cannot get pinned host memory");
  if (op.message != MPI_MESSAGE_NULL)
    return PMPI_Imrecv(op.pinned, packedBytes(op), MPI_PACKED, &op.message,
                       &op.inner);
  return PMPI_Irecv(op.pinned, packedBytes(op), MPI_PACKED, op.peer, op.tag,
                    op.comm, &op.inner);
}

void finishTransfer(Operation &op) {
  if (op.pinned) {
    pinnedRelease(op.pinned, op.pinnedBytes);
    op.pinned = nullptr;
  }
  op.staged.reset();
  op.state = Operation::State::Done;
}

/// Advances one transfer; returns true when it is done.
bool advance(Operation &op) {
  switch (op.state) {
  case Operation::State::Idle:
  case Operation::State::Done:
    return true;
  case Operation::State::Posted: {
    int flag = 0;
    MPI_Status st;
    int rc = PMPI_Test(&op.inner, &flag, &st);
    if (!flag && rc == MPI_SUCCESS)
      return false;
    if (rc != MPI_SUCCESS)
      op.error = rc;
    if (op.send) {
      finishTransfer(op);
      return true;
    }
    op.source = st.MPI_SOURCE;
    op.rtag = st.MPI_TAG;
    int cancelled = 0;
    PMPI_Test_cancelled(&st, &cancelled);
    op.cancelled = op.cancelled || cancelled;
    MPI_Count n = 0;
    if (op.error == MPI_SUCCESS && !op.cancelled) {
      if (op.staged) {
        PMPI_Get_elements_x(&st, MPI_BYTE, &n);
        op.received = n;
        if (!op.staged->copyOut())
          op.error = MPI_ERR_OTHER;
        finishTransfer(op);
        return true;
      }
      PMPI_Get_elements_x(&st, MPI_BYTE, &n);
      op.received = n;
    }
    if (op.received == 0 || op.staged) {
      finishTransfer(op);
      return true;
    }
    op.stream = threadStream(op.buf);
    char *origin = const_cast<char *>(static_cast<const char *>(op.buf));
    bool ok;
    if (op.info->contiguous)
      ok = copyToDeviceAsync(origin + op.info->trueLb, op.pinned,
                             op.received, op.stream);
    else
      ok = ddtc_unpack(op.info->type, origin, op.count, 0, op.received,
                       op.pinned, op.stream,
                       settings().maxCtas) == DDTC_SUCCESS;
    op.event = ok ? recordEvent(op.stream) : nullptr;
    if (!ok || !op.event) {
      note(1, "unpack failed: %s", ddtc_last_error());
      op.error = MPI_ERR_OTHER;
      finishTransfer(op);
      return true;
    }
    op.state = Operation::State::Unpacking;
    [[fallthrough]];
  }
  case Operation::State::Unpacking:
    if (!eventDone(op.event))
      return false;
    releaseEvent(op.event);
    op.event = nullptr;
    finishTransfer(op);
    return true;
  }
  return true;
}

/// Tells the user's request that its operation is done.
void signalUser(Operation &op) {
  if (op.completionTag >= 0)
    PMPI_Send(nullptr, 0, MPI_BYTE, 0, op.completionTag, selfComm());
}

OpRef makeOp(bool send, const void *buf, int count, MPI_Datatype type,
             int peer, int tag, MPI_Comm comm, SendMode mode) {
  auto op = std::make_shared<Operation>();
  op->send = send;
  op->buf = buf;
  op->count = count;
  op->datatype = type;
  op->info = acquirePlannedType(type);
  op->peer = peer;
  op->tag = tag;
  op->comm = comm;
  op->mode = mode;
  return op;
}

/// Runs a transfer to its end in the calling thread.
int runBlocking(Operation &op, MPI_Status *status) {
  int rc = post(op);
  if (rc != MPI_SUCCESS) {
    finishTransfer(op);
    return rc;
  }
  while (!advance(op))
    progress();
  if (status != MPI_STATUS_IGNORE) {
    status->MPI_SOURCE = op.source;
    status->MPI_TAG = op.rtag;
    status->MPI_ERROR = op.error;
    PMPI_Status_set_elements_x(status, MPI_BYTE, op.received);
    PMPI_Status_set_cancelled(status, op.cancelled);
  }
  return op.error == MPI_SUCCESS ? MPI_SUCCESS
                                 : raise(op.comm, op.error, "receive failed");
}

/// Makes the user's request for `op` and starts it unless persistent.
int issue(const OpRef &op, MPI_Request *request) {
  op->completionTag = completionTag();
  int rc = op->persistent
               ? PMPI_Recv_init(nullptr, 0, MPI_BYTE, 0, op->completionTag,
                                selfComm(), request)
               : PMPI_Irecv(nullptr, 0, MPI_BYTE, 0, op->completionTag,
                            selfComm(), request);
  if (rc != MPI_SUCCESS)
    return rc;
  op->user = *request;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    byRequest[*request] = op;
    pendingCount.fetch_add(1, std::memory_order_release);
  }
  if (op->persistent)
    return MPI_SUCCESS;
  rc = post(*op);
  std::lock_guard<std::mutex> lock(registryMutex);
  if (rc != MPI_SUCCESS) {
    op->error = rc;
    finishTransfer(*op);
    signalUser(*op);
    return MPI_SUCCESS; // reported by Wait/Test, as MPI does
  }
  inFlight.push_back(op);
  pendingCount.fetch_add(1, std::memory_order_release);
  return MPI_SUCCESS;
}

OpRef findOp(MPI_Request request) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = byRequest.find(request);
  return it == byRequest.end() ? nullptr : it->second;
}

} // namespace

bool anyInFlight() {
  std::lock_guard<std::mutex> lock(registryMutex);
  return !inFlight.empty();
}

bool anyPending() {
  return pendingCount.load(std::memory_order_acquire) != 0;
}

void progress() {
  if (!anyPending())
    return;
  std::unique_lock<std::mutex> lock(registryMutex, std::try_to_lock);
  if (!lock.owns_lock())
    return; // another thread is progressing
  for (size_t i = 0; i < inFlight.size();) {
    Operation &op = *inFlight[i];
    if (!advance(op)) {
      ++i;
      continue;
    }
    signalUser(op);
    if (op.userFreed && !op.persistent) {
      byRequest.erase(op.user);
      pendingCount.fetch_sub(1, std::memory_order_release);
    }
    inFlight.erase(inFlight.begin() + static_cast<long>(i));
    pendingCount.fetch_sub(1, std::memory_order_release);
  }
}

int deviceSend(const void *buf, int count, MPI_Datatype type, int dest,
               int tag, MPI_Comm comm, SendMode mode) {
  OpRef op = makeOp(true, buf, count, type, dest, tag, comm, mode);
  return runBlocking(*op, MPI_STATUS_IGNORE);
}

int deviceRecv(void *buf, int count, MPI_Datatype type, int source, int tag,
               MPI_Comm comm, MPI_Status *status) {
  OpRef op =
      makeOp(false, buf, count, type, source, tag, comm, SendMode::Standard);
  return runBlocking(*op, status);
}

int deviceMrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg,
                MPI_Status *status) {
  OpRef op = makeOp(false, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG,
                    MPI_COMM_WORLD, SendMode::Standard);
  op->message = *msg;
  *msg = MPI_MESSAGE_NULL;
  return runBlocking(*op, status);
}

int deviceIsend(const void *buf, int count, MPI_Datatype type, int dest,
                int tag, MPI_Comm comm, SendMode mode, MPI_Request *request) {
  return issue(makeOp(true, buf, count, type, dest, tag, comm, mode), request);
}

int deviceIrecv(void *buf, int count, MPI_Datatype type, int source, int tag,
                MPI_Comm comm, MPI_Request *request) {
  return issue(
      makeOp(false, buf, count, type, source, tag, comm, SendMode::Standard),
      request);
}

int deviceImrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg,
                 MPI_Request *request) {
  OpRef op = makeOp(false, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG,
                    MPI_COMM_WORLD, SendMode::Standard);
  op->message = *msg;
  *msg = MPI_MESSAGE_NULL;
  return issue(op, request);
}

int devicePersistent(bool send, void *buf, int count, MPI_Datatype type,
                     int peer, int tag, MPI_Comm comm, SendMode mode,
                     MPI_Request *request) {
  OpRef op = makeOp(send, buf, count, type, peer, tag, comm, mode);
  op->persistent = true;
  // A persistent operation outlives the caller's handle of the type only
  // through its own reference; staging needs the MPI handle, so keep one.
  if (!op->info->type)
    PMPI_Type_dup(type, &op->datatype);
  return issue(op, request);
}

bool startRequest(MPI_Request *request, int &rc) {
  OpRef op = findOp(*request);
  if (!op || !op->persistent)
    return false;
  rc = PMPI_Start(request);
  if (rc != MPI_SUCCESS)
    return true;
  rc = post(*op);
  std::lock_guard<std::mutex> lock(registryMutex);
  if (rc != MPI_SUCCESS) {
    op->error = rc;
    finishTransfer(*op);
    signalUser(*op);
    rc = MPI_SUCCESS;
    return true;
  }
  inFlight.push_back(op);
  pendingCount.fetch_add(1, std::memory_order_release);
  return true;
}

OpRef lookupRequest(MPI_Request request) {
  return anyPending() ? findOp(request) : nullptr;
}

int finishRequest(const OpRef &op, bool persistentKept, MPI_Status *status) {
  if (!op)
    return MPI_SUCCESS;
  if (!op->started) // an inactive persistent request: MPI's empty status
    return MPI_SUCCESS;
  op->started = false;
  if (status != MPI_STATUS_IGNORE) {
    if (!op->send) {
      status->MPI_SOURCE = op->source;
      status->MPI_TAG = op->rtag;
    }
    status->MPI_ERROR = op->error;
    PMPI_Status_set_elements_x(status, MPI_BYTE, op->send ? 0 : op->received);
    PMPI_Status_set_cancelled(status, op->cancelled);
  }
  if (!op->persistent || !persistentKept) {
    std::lock_guard<std::mutex> lock(registryMutex);
    auto it = byRequest.find(op->user);
    if (it != byRequest.end() && it->second == op) {
      byRequest.erase(it);
      pendingCount.fetch_sub(1, std::memory_order_release);
    }
  }
  return op->error;
}

bool freeRequest(MPI_Request request) {
  OpRef op = findOp(request);
  if (!op)
    return false;
  std::lock_guard<std::mutex> lock(registryMutex);
  bool running = std::find(inFlight.begin(), inFlight.end(), op) != inFlight.end();
  if (running && !op->persistent) {
    op->userFreed = true; // progress drops it when done
    return true;
  }
  if (byRequest.erase(request))
    pendingCount.fetch_sub(1, std::memory_order_release);
  if (op->persistent && op->datatype != MPI_DATATYPE_NULL && !op->info->type)
    PMPI_Type_free(&op->datatype);
  return true;
}

bool cancelRequest(MPI_Request request, int &rc) {
  OpRef op = findOp(request);
  if (!op)
    return false;
  rc = MPI_SUCCESS;
  std::lock_guard<std::mutex> lock(registryMutex);
  if (op->send || op->state != Operation::State::Posted)
    return true; // too late, or a send: completes normally, not cancelled
  PMPI_Cancel(&op->inner);
  // advance() sees the cancelled status and finishes the operation.
  return true;
}

bool isLayerRequest(MPI_Request request) {
  return anyPending() && findOp(request) != nullptr;
}

} // namespace ddtc::mpi
