//===- Transfers.cpp - Messages from and to device buffers ----------------===//
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

#include "Operation.h"
#include "Profile.h"

#include "TypeObject.h"
#include "ddtc/Core/Typemap.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

namespace ddtc::mpi {

Operation::~Operation() {
  releaseType(info);
  if (pinned)
    pinnedRelease(pinned, pinnedBytes);
  if (ring)
    pinnedRelease(ring, ringBytes);
  finishIpc(*this);
}

int packedBytes(const Operation &op) {
  return static_cast<int>(op.info->size * op.count);
}

FragmentSchedule hostSchedule(int64_t bytes) {
  // The note carries both sizes as int32. Fixed fragments unless
  // DDTC_MPI_FRAGMENT_MIN asks for growing ones: the fixed schedule is the
  // one measured on GPUs (docs/Performance.md).
  const Settings &s = settings();
  const int64_t first = s.fragmentMinSet ? s.fragmentMin : s.fragment;
  return FragmentSchedule(bytes, std::min<int64_t>(s.fragment, INT32_MAX),
                          std::min<int64_t>(first, INT32_MAX));
}

bool testDone(Operation &op, MPI_Request &r) {
  if (r == MPI_REQUEST_NULL)
    return true;
  CostScope cost(Cost::MpiTest);
  int flag = 0;
  int rc = PMPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    // The MPI library gave up on this message (a peer died, with
    // MPI_ERRORS_RETURN): so does the operation, instead of waiting forever.
    if (op.error == MPI_SUCCESS)
      op.error = rc;
    r = MPI_REQUEST_NULL;
    return true;
  }
  return flag;
}

bool headerSent(Operation &op) {
  return testDone(op, op.inner) && testDone(op, op.noteReq) &&
         testDone(op, op.specReq);
}

void Outbox::post(int32_t value, int peer, int tag, MPI_Comm comm) {
  CostScope cost(Cost::MpiPost);
  sends.emplace_back(value, MPI_REQUEST_NULL);
  auto &back = sends.back();
  PMPI_Isend(&back.first, 1, MPI_INT32_T, peer, tag, comm, &back.second);
}

bool Outbox::drain() {
  while (!sends.empty()) {
    int flag = 0;
    if (sends.front().second != MPI_REQUEST_NULL &&
        PMPI_Test(&sends.front().second, &flag, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS &&
        !flag)
      return false;
    sends.pop_front();
  }
  return true;
}

namespace {

std::mutex registryMutex; // guards `inFlight` and `byRequest`
std::vector<OpRef> inFlight;
std::map<MPI_Request, OpRef> byRequest;
std::atomic<int> pendingCount{0};
std::atomic<int> nextTag{0};
int tagLimit = 32767;

/// Enters `op` under the user's `request` (registryMutex held). The handle
/// may be a completed request's whose Wait has not dropped its entry yet
/// (it will not: the entry is no longer its own); the entry then changes
/// hands and keeps its count.
void enterRequest(MPI_Request request, const OpRef &op) {
  if (byRequest.insert_or_assign(request, op).second)
    pendingCount.fetch_add(1, std::memory_order_release);
}

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

} // namespace

int isendInMode(const void *buf, int count, MPI_Datatype type, int dest,
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

namespace {

/// A small message's span, copied to pinned memory in one piece and packed
/// there by the MPI library (the wire's bytes are MPI_Pack's anyway): on the
/// GPUs measured one copy and its wait cost less than a kernel and its
/// wait. False when the message or its span is too large for that.
bool hostPackSpan(const Operation &op, int64_t packed, int64_t &first,
                  int64_t &span) {
  const int64_t limit = settings().hostPack;
  // A persistent send's MPI handle of the type may be freed before a later
  // start (the ddtc type it keeps may not): kernels pack those.
  if (op.contiguous || op.persistent || packed > limit)
    return false;
  typeSpan(*op.info, op.count, first, span);
  return span > 0 && span <= kHostPackSpanFactor * limit;
}

std::atomic<long long> hostPackCount{0};

/// Packs with the MPI library from a pinned copy of the span [first, first +
/// span) of op.buf, made on op.stream.
bool packOnHost(Operation &op, int64_t packed, int64_t first, int64_t span,
                std::string &error) {
  hostPackCount.fetch_add(1, std::memory_order_relaxed);
  void *copy = pinnedAcquire(static_cast<size_t>(span));
  if (!copy) {
    error = "cannot get pinned host memory";
    return false;
  }
  bool ok = copyToHostAsync(copy, static_cast<const char *>(op.buf) + first,
                            static_cast<size_t>(span), op.stream) &&
            syncStream(op.stream, error);
  int position = 0;
  if (ok) {
    // The copy stands for the user's buffer: displacement 0 sits `first`
    // bytes before its start, as in StagedBuffer.
    ok = PMPI_Pack(static_cast<char *>(copy) - first, op.count, op.datatype,
                   op.pinned, static_cast<int>(packed), &position,
                   op.comm) == MPI_SUCCESS &&
         position == packed;
    if (!ok)
      error = "MPI_Pack of the host copy failed";
  }
  pinnedRelease(copy, static_cast<size_t>(span));
  return ok;
}

/// Packs the whole message into pinned memory. With `launchOnly` a pack by
/// a kernel or a copy is only launched, and op.event is recorded after it;
/// otherwise (and for a pack on the host) it is done when this returns and
/// op.event stays null.
int packWhole(Operation &op, bool launchOnly = false) {
  int64_t n = packedBytes(op);
  op.pinnedBytes = static_cast<size_t>(n);
  op.pinned = pinnedAcquire(op.pinnedBytes);
  op.stream = threadStream(op.buf);
  if (!op.pinned || !op.stream)
    return raise(op.comm, MPI_ERR_NO_MEM,
                 "cannot get pinned host memory or a CUDA stream");
  const char *origin = static_cast<const char *>(op.buf);
  std::string error;
  int64_t first = 0, span = 0;
  if (hostPackSpan(op, n, first, span)) {
    if (!packOnHost(op, n, first, span, error))
      return raise(op.comm, MPI_ERR_OTHER, error.c_str());
    return MPI_SUCCESS;
  }
  bool ok;
  if (op.contiguous)
    ok = copyToHostAsync(op.pinned, origin + op.info->trueLb, n, op.stream);
  else
    ok = ddtc_pack(op.info->type, op.buf, op.count, 0, n, op.pinned, op.stream,
                   settings().maxCtas) == DDTC_SUCCESS;
  if (ok && launchOnly && (op.event = recordEvent(op.stream)))
    return MPI_SUCCESS;
  if (!ok || !syncStream(op.stream, error))
    return raise(op.comm, MPI_ERR_OTHER,
                 ok ? error.c_str() : ddtc_last_error());
  return MPI_SUCCESS;
}

// ---- Eager sends that go to the MPI library once packed ---------------------
// An eager send packs into pinned memory, then hands the packed bytes to the
// MPI library. A blocking send waits for its pack; a nonblocking one, with
// the progress thread running, only launches it, and its message goes to
// the MPI library at the first progress after the pack is done, so a window
// of sends packs back to back on the GPU instead of one pack and one wait at
// a time. The MPI library must still see the process's messages in the
// order they were sent (MPI's non-overtaking rule): the sends waiting for
// their pack form one queue, posted strictly from its head, and every other
// send (device or host) first posts the whole queue (flushUnposted).

thread_local bool eagerOnly = false;

std::mutex unpostedMutex;
std::deque<Operation *> unposted; // guarded by unpostedMutex
std::atomic<int> unpostedCount{0};

/// Hands the queue's head to the MPI library once its pack is done (at
/// once, or after waiting for it with `wait`); false when it is not done.
/// Requires unpostedMutex.
bool postHead(bool wait) {
  Operation &op = *unposted.front();
  if (wait) {
    while (!eventDone(op.event))
      ;
  } else if (!eventDone(op.event)) {
    return false;
  }
  releaseEvent(op.event);
  op.event = nullptr;
  trace("packed", 0);
  op.postRc = isendInMode(op.pinned, packedBytes(op), MPI_PACKED, op.peer,
                          op.tag, op.comm, op.mode, &op.inner);
  op.onWire = true;
  unposted.pop_front();
  unpostedCount.fetch_sub(1, std::memory_order_release);
  return true;
}

/// Whether a nonblocking eager send may leave its pack to run: only with
/// the progress thread (which posts it if the application does not call
/// into MPI) and DDTC_MPI_EAGER_ASYNC not 0, never in buffered mode (complete
/// once packed) nor inside MPI_Sendrecv_replace (its receive reuses the buffer:
/// eagerOnly).
bool mayLeavePack(const Operation &op, bool nonblocking) {
  return nonblocking && op.mode != SendMode::Buffered && !eagerOnly &&
         settings().eagerAsync && progressThreadRunning() &&
         packedBytes(op) > 0;
}

} // namespace

bool anyUnposted() {
  return unpostedCount.load(std::memory_order_acquire) != 0;
}

void flushUnposted() {
  if (!anyUnposted())
    return;
  std::lock_guard<std::mutex> lock(unpostedMutex);
  while (!unposted.empty())
    postHead(/*wait=*/true);
}

namespace {

int nextId() {
  static std::atomic<int> id{0};
  completionTag(); // reads the tag limit once
  return id.fetch_add(1, std::memory_order_relaxed) % (tagLimit / 2);
}

/// A ring of pinned memory for `op.plan`: slots as long as its longest
/// fragment.
bool makeRing(Operation &op) {
  op.nfrag = static_cast<int>(op.plan.count());
  op.slotBytes = slotBytesFor(op.plan);
  size_t n = static_cast<size_t>(std::min(settings().depth, op.nfrag));
  op.ringBytes = n * static_cast<size_t>(op.slotBytes);
  op.ring = op.ringBytes ? pinnedAcquire(op.ringBytes) : nullptr;
  if (op.ringBytes && !op.ring)
    return false;
  op.slots.assign(n, Slot{});
  for (size_t i = 0; i < n; ++i)
    op.slots[i].buf = static_cast<char *>(op.ring) + i * op.slotBytes;
  op.nextFrag = op.nextSend = op.fragsDone = 0;
  return true;
}

/// Packs the next fragment into a free slot of the sender's ring.
bool packNext(Operation &op, Slot &slot) {
  int k = op.nextFrag++;
  int64_t lo = op.plan.begin(k), len = op.plan.length(k);
  const char *origin = static_cast<const char *>(op.buf);
  bool ok;
  if (!op.contiguous) {
    CostScope cost(Cost::Pack);
    ok = ddtc_pack(op.info->type, op.buf, op.count, lo, lo + len, slot.buf,
                   op.stream, settings().maxCtas) == DDTC_SUCCESS;
  } else if (op.ipc) // the slot is device memory
    ok = copyDeviceAsync(slot.buf, origin + op.info->trueLb + lo,
                         static_cast<size_t>(len), op.stream);
  else
    ok = copyToHostAsync(slot.buf, origin + op.info->trueLb + lo,
                         static_cast<size_t>(len), op.stream);
  slot.frag = k;
  trace("pack-launched", k, len);
  ok = ok && signalPacked(op, k); // IPC with flags: the stream says so
  slot.event = ok ? recordEvent(op.stream) : nullptr;
  slot.s = Slot::S::Packing;
  return ok && slot.event;
}

/// Packs into every free slot while fragments are left.
bool packFree(Operation &op) {
  for (Slot &s : op.slots)
    if (s.s == Slot::S::Free && op.nextFrag < op.nfrag && !packNext(op, s))
      return false;
  return true;
}

} // namespace

bool restartOnHost(Operation &op) {
  std::string error;
  if (op.stream)
    syncStream(op.stream, error); // packs into the device ring may run
  for (Slot &s : op.slots)
    releaseEvent(s.event);
  op.slots.clear();
  finishIpc(op);
  op.ipc = false;
  if (op.answer.hostFragment > 0)
    op.plan = FragmentSchedule(op.total, op.answer.hostFragment,
                               op.answer.hostFirstFragment);
  if (!makeRing(op) || !packFree(op))
    return false;
  return true;
}

namespace {

/// Sender: the zero-byte message, its note and the wait for the answer;
/// the first fragments are packed at once (the very first before the
/// posts), while the answer travels.
int startPipeSend(Operation &op) {
  op.total = packedBytes(op);
  trace("pipeline-send", -1, op.total);
  op.stream = threadStream(op.buf);
  op.note = Note{};
  op.note.kind = Note::Pipelined;
  op.ipc = op.stream && wantIpc(op);
  if (op.ipc && !startIpcSend(op)) {
    // No device ring or export: through host memory after all.
    finishIpc(op);
    op.ipc = false;
    op.note = Note{};
    op.note.kind = Note::Pipelined;
    op.error = MPI_SUCCESS;
  }
  // Through IPC the fragments are the model's (startIpcSend); else the
  // settings'.
  if (!op.ipc)
    op.plan = hostSchedule(op.total);
  if (!op.stream || (!op.ipc && !makeRing(op)))
    return raise(op.comm, MPI_ERR_NO_MEM,
                 "cannot get pinned host memory or a CUDA stream");
  op.note.bytes = op.total;
  op.note.id = nextId();
  op.note.fragment = static_cast<int32_t>(op.plan.largestFragment());
  op.note.firstFragment = static_cast<int32_t>(op.plan.firstFragment());
  op.answered = false;
  trace("pipeline-planned", -1, op.nfrag);
  // The first fragment's pack is on the message's critical path (the
  // receiver waits for it) and its launch costs the host a few
  // microseconds: launched before the posts below, it runs while they are
  // made. The other slots are filled after them, so that the note is not
  // held back by launches nobody waits for yet.
  if (!op.slots.empty() && op.slots.front().s == Slot::S::Free &&
      op.nextFrag < op.nfrag && !packNext(op, op.slots.front()))
    return raise(op.comm, MPI_ERR_OTHER, ddtc_last_error());
  note(3, "%s %lld bytes to %d tag %d (%s, id %d, %d fragments)",
       modeName(op.mode), static_cast<long long>(op.total), op.peer, op.tag,
       op.ipc ? "CUDA IPC" : "pipelined", op.note.id, op.nfrag);
  int rc = isendInMode(nullptr, 0, MPI_PACKED, op.peer, op.tag, op.comm,
                       op.mode, &op.inner);
  if (rc == MPI_SUCCESS)
    rc = PMPI_Isend(&op.note, sizeof op.note, MPI_BYTE, op.peer, op.tag,
                    op.pair->notes, &op.noteReq);
  // A pulled message's type, for a receiver that does not keep it yet
  // (taken with the note: Comms.cpp).
  if (rc == MPI_SUCCESS && op.note.specBytes > 0)
    rc = PMPI_Isend(op.specText->data(), op.note.specBytes, MPI_BYTE,
                    op.peer, fragmentTag(op.note.id), op.pair->data,
                    &op.specReq);
  if (rc == MPI_SUCCESS)
    rc = PMPI_Irecv(&op.answer, sizeof op.answer, MPI_BYTE, op.peer,
                    answerTag(op.note.id), op.pair->data, &op.answerReq);
  if (rc != MPI_SUCCESS) {
    // The first fragment's pack may still be writing the ring: it ends
    // before the operation, and its ring, go back with the error.
    std::string error;
    syncStream(op.stream, error);
    return rc;
  }
  if (!packFree(op))
    return raise(op.comm, MPI_ERR_OTHER, ddtc_last_error());
  op.state = Operation::State::SendPipe;
  return MPI_SUCCESS;
}

bool advanceSendPipe(Operation &op) {
  if (!op.answered && testDone(op, op.answerReq)) {
    op.answered = true;
    trace("answered");
    if (op.ipc && op.answer.go != Answer::HostFrags)
      notePeerReceiveGpu(op.peerWorld, op.answer.gpu);
    if (op.answer.typeKept)
      notePeerKeepsType(op.peerWorld, op.note.typeSerial);
    if (op.answer.typeUnknown)
      forgetPeerKeepsType(op.peerWorld, op.note.typeSerial);
    if (op.ipc && op.answer.go == Answer::HostFrags) {
      if (op.answer.ipcFailed)
        dropIpcPeer(op.peerWorld, "the receiver cannot map this rank's memory");
      if (!restartOnHost(op))
        op.error = MPI_ERR_NO_MEM;
    }
  }
  if (op.ipc)
    return advanceIpcSend(op);
  bool go = op.answered && op.answer.go == Answer::HostFrags &&
            op.error == MPI_SUCCESS;
  bool busy = false;
  collectPacked(op.slots);
  for (Slot &s : op.slots) {
    if (s.s == Slot::S::Sending && testDone(op, s.req)) {
      trace("fragment-sent", s.frag);
      ++op.fragsDone;
      s.s = Slot::S::Free;
      if (op.nextFrag < op.nfrag && !packNext(op, s))
        op.error = MPI_ERR_OTHER;
    }
    busy = busy || s.s == Slot::S::Packing || s.s == Slot::S::Sending;
  }
  // Fragments leave in order: the receiver's receives match them in order.
  // (All that are packed at once: one at a time on the wire was slower on
  // an H200, bench/results/2026-11-23-NVIDIA-H200-mpi-fragments.)
  for (bool sent = go; sent;) {
    sent = false;
    for (Slot &s : op.slots)
      if (s.s == Slot::S::Packed && s.frag == op.nextSend) {
        PMPI_Isend(s.buf, static_cast<int>(op.plan.length(s.frag)), MPI_BYTE,
                   op.peer, fragmentTag(op.note.id), op.pair->data, &s.req);
        s.s = Slot::S::Sending;
        trace("fragment-posted", s.frag);
        ++op.nextSend;
        sent = true;
        busy = true;
      }
  }
  bool headerDone = headerSent(op);
  if (!headerDone || !op.answered)
    return false;
  if (!go) // refused (the receive was too small), or failed: nothing to send
    return !busy;
  return op.fragsDone == op.nfrag;
}

void postFragmentRecv(Operation &op, Slot &s) {
  s.frag = op.nextFrag++;
  PMPI_Irecv(s.buf, static_cast<int>(op.plan.length(s.frag)), MPI_BYTE,
             op.source, fragmentTag(op.note.id), op.pair->data, &s.req);
  s.s = Slot::S::Receiving;
}

/// Receiver: answers the note and posts the first fragments' receives.
void startPipeRecv(Operation &op) {
  op.total = op.note.bytes;
  trace("note-received", -1, op.total);
  op.plan = FragmentSchedule(
      op.total, op.note.fragment > 0 ? op.note.fragment : settings().fragment,
      op.note.firstFragment);
  int64_t capacity = packedBytes(op);
  op.stream = threadStream(op.buf);
  op.state = Operation::State::RecvPipe;
  bool tried = op.note.kind == Note::Ipc && op.total <= capacity && op.stream;
  if (tried && startIpcRecv(op, capacity))
    return;
  op.answer = Answer{};
  // A pulled message whose type this rank does not keep: through host
  // memory, the peer kept for IPC.
  op.answer.ipcFailed = tried && !op.peerTypeUnknown;
  op.answer.typeUnknown = op.peerTypeUnknown;
  if (op.note.kind == Note::Ipc && op.note.ref.slots == 0) {
    // A buffer read in place comes as one fragment of up to 1 GiB: through
    // host memory it takes the host pipeline's fragments instead, which the
    // answer names (so both sides agree whatever their settings).
    op.plan = hostSchedule(op.total);
    op.answer.hostFragment = static_cast<int32_t>(op.plan.largestFragment());
    op.answer.hostFirstFragment =
        static_cast<int32_t>(op.plan.firstFragment());
  }
  op.answer.go = op.total <= capacity ? Answer::HostFrags : Answer::Refuse;
  if (op.answer.go && (!op.stream || !makeRing(op))) {
    op.answer.go = Answer::Refuse;
    op.error = MPI_ERR_NO_MEM;
  }
  // Device staging of one slot: the copies and unpacks of all fragments
  // run in order on the operation's stream (without it, or when the pool
  // has none, the unpacks read the ring itself).
  if (op.answer.go && settings().hostStage && !op.contiguous)
    deviceAcquire(op.buf, static_cast<size_t>(op.slotBytes), op.deviceRing);
  PMPI_Isend(&op.answer, sizeof op.answer, MPI_BYTE, op.source,
             answerTag(op.note.id), op.pair->data, &op.answerReq);
  if (!op.answer.go) {
    if (op.error == MPI_SUCCESS)
      op.error = MPI_ERR_TRUNCATE;
    op.nfrag = 0;
    op.slots.clear();
  } else {
    for (Slot &s : op.slots)
      if (op.nextFrag < op.nfrag)
        postFragmentRecv(op, s);
    op.received = op.total;
  }
  note(3, "receive %lld bytes from %d tag %d (pipelined%s, id %d)%s",
       static_cast<long long>(op.total), op.source, op.rtag,
       op.deviceRing.ptr ? ", staged on the device" : "", op.note.id,
       op.answer.go ? "" : ": refused, the receive buffer is too small");
}

bool advanceRecvPipe(Operation &op) {
  if (op.ipc)
    return advanceIpcRecv(op);
  char *origin = const_cast<char *>(static_cast<const char *>(op.buf));
  for (Slot &s : op.slots) {
    if (s.s == Slot::S::Receiving && testDone(op, s.req)) {
      trace("fragment-received", s.frag);
      int64_t lo = op.plan.begin(s.frag), len = op.plan.length(s.frag);
      // Staged: a copy engine moves the fragment to the staging, in the
      // stream's order after the previous unpack and before this one.
      const char *from = s.buf;
      bool ok = true;
      if (op.deviceRing.ptr) {
        ok = copyToDeviceAsync(op.deviceRing.ptr, s.buf,
                               static_cast<size_t>(len), op.stream);
        from = op.deviceRing.ptr;
      }
      ok = ok && (op.contiguous
                      ? copyToDeviceAsync(origin + op.info->trueLb + lo, s.buf,
                                          static_cast<size_t>(len), op.stream)
                      : ddtc_unpack(op.info->type, origin, op.count, lo,
                                    lo + len, from, op.stream,
                                    settings().maxCtas) == DDTC_SUCCESS);
      s.event = ok ? recordEvent(op.stream) : nullptr;
      if (!s.event)
        op.error = MPI_ERR_OTHER;
      s.s = Slot::S::Unpacking;
    }
    if (s.s == Slot::S::Unpacking && eventDone(s.event)) {
      trace("unpacked", s.frag);
      releaseEvent(s.event);
      s.event = nullptr;
      ++op.fragsDone;
      s.s = Slot::S::Free;
      if (op.nextFrag < op.nfrag)
        postFragmentRecv(op, s);
    }
  }
  return testDone(op, op.answerReq) && op.fragsDone == op.nfrag;
}

/// Whether a device send of `op` goes through the pipeline.
bool usePipeline(Operation &op) {
  if (!op.send || op.mode == SendMode::Buffered || op.peer == MPI_PROC_NULL ||
      eagerOnly)
    return false;
  Protocol p = protocol();
  int64_t n = packedBytes(op);
  if (n == 0 || p == Protocol::Eager || p == Protocol::Staged)
    return false;
  // Small messages: eager, unless the model has them faster through IPC
  // (decided before the communicator lookup: the eager path stays short).
  bool small = p == Protocol::Auto && n <= settings().eagerLimit;
  if (small && !smallFasterThroughIpc(n))
    return false;
  op.pair = commPair(op.comm);
  if (!op.pair)
    return false;
  return !small || wantIpc(op);
}

std::atomic<long long> operationsStarted{0};

/// Starts one transfer: the library's message is posted when this returns,
/// but for a nonblocking eager send whose pack may run on (mayLeavePack):
/// that one waits in the queue of unposted sends (state Packing). Every
/// other send hands the queue over before its own message (flushUnposted).
int post(Operation &op, bool nonblocking = false) {
  rt::KnownPointers known; // as in advance()
  operationsStarted.fetch_add(1, std::memory_order_relaxed);
  op.state = Operation::State::Posted;
  op.signalled = false;
  op.received = 0;
  op.error = MPI_SUCCESS;
  op.cancelled = false;
  op.started = true;
  // How the last message of a persistent operation came (through IPC, its
  // type unknown to this rank) says nothing of the next.
  op.ipc = false;
  op.peerTypeUnknown = false;
  if (!op.info->type || protocol() == Protocol::Staged) {
    // Staged through host memory with the MPI datatype itself.
    op.staged = std::make_unique<StagedBuffer>(op.buf, op.count, op.datatype,
                                               /*copyIn=*/true);
    if (!op.staged->ok())
      return raise(op.comm, MPI_ERR_OTHER, "cannot stage a device buffer");
    if (op.send) {
      flushUnposted();
      return isendInMode(op.staged->host(), op.count, op.datatype, op.peer,
                         op.tag, op.comm, op.mode, &op.inner);
    }
    if (op.message != MPI_MESSAGE_NULL)
      return PMPI_Imrecv(op.staged->host(), op.count, op.datatype, &op.message,
                         &op.inner);
    return PMPI_Irecv(op.staged->host(), op.count, op.datatype, op.peer, op.tag,
                      op.comm, &op.inner);
  }
  if (op.send) {
    if (usePipeline(op)) {
      flushUnposted();
      return startPipeSend(op);
    }
    trace("eager-send", -1, packedBytes(op));
    if (int rc = packWhole(op, mayLeavePack(op, nonblocking));
        rc != MPI_SUCCESS)
      return rc;
    if (op.event) { // the pack runs on: queued
      note(3, "%s %d bytes to %d tag %d (eager, posted once packed)",
           modeName(op.mode), packedBytes(op), op.peer, op.tag);
      op.onWire = false;
      op.state = Operation::State::Packing;
      std::lock_guard<std::mutex> lock(unpostedMutex);
      unposted.push_back(&op);
      unpostedCount.fetch_add(1, std::memory_order_release);
      return MPI_SUCCESS;
    }
    flushUnposted();
    trace("packed", 0);
    note(3, "%s %d bytes to %d tag %d (eager)", modeName(op.mode),
         packedBytes(op), op.peer, op.tag);
    if (packedBytes(op) == 0)
      if (const CommPair *pair = commPair(op.comm))
        sendEmptyNote(*pair, op.peer, op.tag);
    // Buffered mode: the packed copy is the layer's own buffer, so the send
    // is complete for the user at once (see signalUser); on the wire it is a
    // standard send (Open MPI 4.1's buffered path mishandles some typed
    // receives of packed data).
    return isendInMode(
        op.pinned, packedBytes(op), MPI_PACKED, op.peer, op.tag, op.comm,
        op.mode == SendMode::Buffered ? SendMode::Standard : op.mode,
        &op.inner);
  }
  trace("receive-posted", -1, packedBytes(op));
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
  if (op.ring) {
    pinnedRelease(op.ring, op.ringBytes);
    op.ring = nullptr;
    op.slots.clear();
  }
  finishIpc(op);
  op.staged.reset();
  op.state = Operation::State::Done;
}

/// Advances one transfer; returns true when it is done.
bool advance(Operation &op) {
  // The buffers were looked up when the operation was posted, and the
  // packed side is the layer's own: ddtc need not ask the driver again.
  rt::KnownPointers known;
  switch (op.state) {
  case Operation::State::Idle:
  case Operation::State::Done:
    return true;
  case Operation::State::Packing: {
    // The queue is posted from its head, whichever operation is advanced.
    std::unique_lock<std::mutex> lock(unpostedMutex);
    while (!op.onWire && !unposted.empty() && postHead(/*wait=*/false))
      ;
    if (!op.onWire)
      return false;
    lock.unlock();
    if (op.postRc != MPI_SUCCESS) {
      op.error = op.postRc;
      finishTransfer(op);
      return true;
    }
    op.state = Operation::State::Posted;
    [[fallthrough]];
  }
  case Operation::State::Posted: {
    int flag = 0;
    MPI_Status st;
    int rc = PMPI_Test(&op.inner, &flag, &st);
    if (!flag && rc == MPI_SUCCESS)
      return false;
    if (rc != MPI_SUCCESS)
      op.error = rc;
    trace(op.send ? "sent" : "received");
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
        // A zero-byte message may announce a pipeline: received into the
        // host copy by the MPI library's engine.
        if (n == 0 && op.source != MPI_PROC_NULL) {
          MPI_Status hs = st;
          int rc2 = completeHostReceive(op.staged->host(), op.count,
                                        op.datatype, op.comm, &hs);
          if (rc2 != MPI_SUCCESS)
            op.error = rc2;
          MPI_Count m = 0;
          PMPI_Get_elements_x(&hs, MPI_BYTE, &m);
          op.received = m;
        }
        if (op.error == MPI_SUCCESS && !op.staged->copyOut())
          op.error = MPI_ERR_OTHER;
        finishTransfer(op);
        return true;
      }
      PMPI_Get_elements_x(&st, MPI_BYTE, &n);
      op.received = n;
    }
    if (op.received == 0 && !op.staged && op.error == MPI_SUCCESS &&
        !op.cancelled && op.source != MPI_PROC_NULL &&
        (op.pair = commPair(op.comm))) {
      // A zero-byte message: its note says whether a pipeline follows.
      if (!takeNote(*op.pair, op.source, op.rtag, op.note)) {
        op.error = MPI_ERR_OTHER;
      } else if (op.note.kind == Note::Pipelined || op.note.kind == Note::Ipc) {
        startPipeRecv(op);
        return advance(op);
      }
    }
    if (op.received == 0 || op.staged) {
      finishTransfer(op);
      return true;
    }
    op.stream = threadStream(op.buf);
    char *origin = const_cast<char *>(static_cast<const char *>(op.buf));
    bool ok;
    if (op.contiguous)
      ok = copyToDeviceAsync(origin + op.info->trueLb, op.pinned, op.received,
                             op.stream);
    else
      ok =
          ddtc_unpack(op.info->type, origin, op.count, 0, op.received,
                      op.pinned, op.stream, settings().maxCtas) == DDTC_SUCCESS;
    op.event = ok ? recordEvent(op.stream) : nullptr;
    if (!ok || !op.event) {
      note(1, "unpack failed: %s", ddtc_last_error());
      op.error = MPI_ERR_OTHER;
      finishTransfer(op);
      return true;
    }
    op.state = Operation::State::Unpacking;
    trace("unpack-launched", 0, op.received);
    [[fallthrough]];
  }
  case Operation::State::Unpacking:
    if (!eventDone(op.event))
      return false;
    trace("unpacked", 0);
    releaseEvent(op.event);
    op.event = nullptr;
    finishTransfer(op);
    return true;
  case Operation::State::SendPipe:
    if (!advanceSendPipe(op))
      return false;
    finishTransfer(op);
    return true;
  case Operation::State::RecvPipe:
    if (!advanceRecvPipe(op))
      return false;
    finishTransfer(op);
    return true;
  }
  return true;
}

/// Tells the user's request that its operation is done (once per start).
/// `signalled` is set before the message: once the user's Wait has seen it,
/// the user may start a persistent operation again (which clears the flag)
/// while this thread is still here.
void signalUser(Operation &op) {
  const bool send = op.completionTag >= 0 && !op.signalled;
  op.signalled = true;
  if (send)
    PMPI_Send(nullptr, 0, MPI_BYTE, 0, op.completionTag, selfComm());
}

/// A buffered send is complete for the user once its bytes are packed.
void signalIfBuffered(Operation &op) {
  if (op.send && op.mode == SendMode::Buffered)
    signalUser(op);
}

OpRef makeOp(bool send, const void *buf, int count, MPI_Datatype type, int peer,
             int tag, MPI_Comm comm, SendMode mode) {
  auto op = std::make_shared<Operation>();
  op->send = send;
  op->buf = buf;
  op->count = count;
  op->datatype = type;
  op->info = acquirePlannedType(type);
  op->contiguous = contiguousFor(*op->info, count);
  op->peer = peer;
  op->tag = tag;
  op->comm = comm;
  op->mode = mode;
  return op;
}

/// The status of a finished transfer: what a receive got (a send reports
/// only its error and whether it was cancelled).
void writeStatus(const Operation &op, MPI_Status *status) {
  if (status == MPI_STATUS_IGNORE)
    return;
  if (!op.send) {
    status->MPI_SOURCE = op.source;
    status->MPI_TAG = op.rtag;
  }
  status->MPI_ERROR = op.error;
  PMPI_Status_set_elements_x(status, MPI_BYTE, op.send ? 0 : op.received);
  PMPI_Status_set_cancelled(status, op.cancelled);
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
  writeStatus(op, status);
  return op.error == MPI_SUCCESS ? MPI_SUCCESS
                                 : raise(op.comm, op.error, "receive failed");
}

/// Posts the transfer of an operation whose user request exists and puts it
/// in flight. A failure to post is reported by Wait/Test, as MPI does.
void startOp(const OpRef &op) {
  int rc = post(*op, /*nonblocking=*/true);
  std::unique_lock<std::mutex> lock(registryMutex);
  if (rc != MPI_SUCCESS) {
    op->error = rc;
    finishTransfer(*op);
    signalUser(*op);
    return;
  }
  signalIfBuffered(*op);
  inFlight.push_back(op);
  pendingCount.fetch_add(1, std::memory_order_release);
  lock.unlock();
  wakeProgressThread();
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
    enterRequest(*request, op);
  }
  if (op->persistent)
    return MPI_SUCCESS;
  startOp(op);
  return MPI_SUCCESS;
}

OpRef findOp(MPI_Request request) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = byRequest.find(request);
  return it == byRequest.end() ? nullptr : it->second;
}

} // namespace

long long deviceOperations() { return operationsStarted.load(); }
long long hostPacks() { return hostPackCount.load(); }

EagerSendsOnly::EagerSendsOnly() : saved(eagerOnly) { eagerOnly = true; }
EagerSendsOnly::~EagerSendsOnly() { eagerOnly = saved; }

bool anyInFlight() {
  std::lock_guard<std::mutex> lock(registryMutex);
  return !inFlight.empty();
}

bool anyPending() { return pendingCount.load(std::memory_order_acquire) != 0; }

void progress() {
  if (!anyPending())
    return;
  markProgress();
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
    inFlight.erase(inFlight.begin() + static_cast<long>(i));
    pendingCount.fetch_sub(1, std::memory_order_release);
  }
}

int deviceSend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, SendMode mode) {
  OpRef op = makeOp(true, buf, count, type, dest, tag, comm, mode);
  if (mode != SendMode::Buffered)
    return runBlocking(*op, MPI_STATUS_IGNORE);
  // Buffered: returns once packed; the message finishes in the background.
  int rc = post(*op);
  if (rc != MPI_SUCCESS) {
    finishTransfer(*op);
    return rc;
  }
  if (advance(*op))
    return MPI_SUCCESS;
  std::lock_guard<std::mutex> lock(registryMutex);
  inFlight.push_back(op);
  pendingCount.fetch_add(1, std::memory_order_release);
  return MPI_SUCCESS;
}

int deviceRecv(void *buf, int count, MPI_Datatype type, int source, int tag,
               MPI_Comm comm, MPI_Status *status) {
  OpRef op =
      makeOp(false, buf, count, type, source, tag, comm, SendMode::Standard);
  return runBlocking(*op, status);
}

int deviceMrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg,
                MPI_Comm comm, MPI_Status *status) {
  OpRef op = makeOp(false, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG, comm,
                    SendMode::Standard);
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
                 MPI_Comm comm, MPI_Request *request) {
  OpRef op = makeOp(false, buf, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG, comm,
                    SendMode::Standard);
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
  if (!op || !op->persistent || op->kind == Operation::Kind::HostRecv)
    return false;
  if (op->kind == Operation::Kind::HostZeroSend) {
    flushUnposted(); // the sends before this one go first
    // The note first: the receiver may wait for it before this returns.
    sendEmptyNote(*op->pair, op->peer, op->tag);
    rc = PMPI_Start(request);
    return true;
  }
  rc = PMPI_Start(request);
  if (rc == MPI_SUCCESS)
    startOp(op);
  return true;
}

/// Drops the user's request of `op` from the registry, unless its handle was
/// freed and given to a newer operation meanwhile.
static void forgetRequest(const OpRef &op) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = byRequest.find(op->user);
  if (it != byRequest.end() && it->second == op) {
    byRequest.erase(it);
    pendingCount.fetch_sub(1, std::memory_order_release);
  }
}

OpRef lookupRequest(MPI_Request request) {
  return anyPending() ? findOp(request) : nullptr;
}

int finishRequest(const OpRef &op, bool persistentKept, MPI_Status *status) {
  if (!op)
    return MPI_SUCCESS;
  if (op->kind != Operation::Kind::Device) {
    int err = MPI_SUCCESS;
    if (op->kind == Operation::Kind::HostRecv && status != MPI_STATUS_IGNORE)
      err = completeHostReceive(const_cast<void *>(op->buf), op->count,
                                op->datatype, op->comm, status);
    if (op->kind == Operation::Kind::HostStaged) {
      if (op->staged && !op->staged->copyOut())
        err = raise(op->comm, MPI_ERR_OTHER,
                    "cannot copy a staged buffer back to the device");
      op->staged.reset();
      op->stagedSend.reset();
    }
    if (!op->persistent || !persistentKept)
      forgetRequest(op);
    return err;
  }
  if (!op->started) // an inactive persistent request: MPI's empty status
    return MPI_SUCCESS;
  op->started = false;
  writeStatus(*op, status);
  if (!op->persistent || !persistentKept)
    forgetRequest(op);
  return op->error;
}

bool freeRequest(MPI_Request request) {
  OpRef op = findOp(request);
  if (!op)
    return false;
  if (op->kind != Operation::Kind::Device) {
    std::lock_guard<std::mutex> lock(registryMutex);
    if (byRequest.erase(request))
      pendingCount.fetch_sub(1, std::memory_order_release);
    // A freed nonblocking collective may still be running in the MPI
    // library on the staged copies: they are kept (and its receive buffer
    // is never copied back: nobody can tell when it is done).
    if (op->kind == Operation::Kind::HostStaged) {
      static std::vector<OpRef> abandoned;
      abandoned.push_back(op);
    }
    return true;
  }
  // The handle goes now, also while the transfer runs (it stays in flight
  // until done): the MPI library may give the handle's value to the next
  // request at once, and dropping the entry only when the transfer ends
  // would then drop that request's.
  std::lock_guard<std::mutex> lock(registryMutex);
  if (byRequest.erase(request))
    pendingCount.fetch_sub(1, std::memory_order_release);
  if (op->persistent && op->datatype != MPI_DATATYPE_NULL && !op->info->type)
    PMPI_Type_free(&op->datatype);
  return true;
}

bool cancelRequest(MPI_Request request, int &rc) {
  OpRef op = findOp(request);
  if (!op || op->kind != Operation::Kind::Device)
    return false;
  rc = MPI_SUCCESS;
  std::lock_guard<std::mutex> lock(registryMutex);
  if (op->send || op->state != Operation::State::Posted)
    return true; // too late, or a send: completes normally, not cancelled
  PMPI_Cancel(&op->inner);
  // advance() sees the cancelled status and finishes the operation.
  return true;
}

bool peekStatus(const Operation &op, MPI_Status *status) {
  if (op.kind != Operation::Kind::Device || !op.started)
    return false;
  writeStatus(op, status);
  return true;
}

//===--- Host buffers on communicators with a pair ------------------------===//

void beforeHostSend(int count, MPI_Datatype type, int dest, int tag,
                    MPI_Comm comm) {
  flushUnposted(); // device sends queued before this one go first
  if (dest == MPI_PROC_NULL || !active())
    return;
  int size = 0;
  if (count > 0 && (PMPI_Type_size(type, &size), size > 0))
    return;
  if (const CommPair *pair = commPair(comm))
    sendEmptyNote(*pair, dest, tag);
}

/// Receives a pipelined message into host memory: fragments into one host
/// buffer, unpacked by the MPI library with the receive type.
static int receivePipelinedHost(const CommPair &pair, const Note &note,
                                int source, void *buf, int count,
                                MPI_Datatype type, MPI_Comm comm,
                                MPI_Status *status) {
  MPI_Count size = 0;
  PMPI_Type_size_x(type, &size);
  Answer answer;
  answer.go = note.bytes <= size * count ? Answer::HostFrags : Answer::Refuse;
  PMPI_Send(&answer, sizeof answer, MPI_BYTE, source, answerTag(note.id),
            pair.data);
  if (!answer.go) {
    status->MPI_ERROR = MPI_ERR_TRUNCATE;
    return raise(comm, MPI_ERR_TRUNCATE,
                 "a pipelined message is larger than the receive buffer");
  }
  std::vector<char> packed(static_cast<size_t>(note.bytes));
  FragmentSchedule plan(note.bytes,
                        note.fragment > 0 ? note.fragment : settings().fragment,
                        note.firstFragment);
  for (int64_t k = 0; k < plan.count(); ++k) {
    MPI_Request r;
    PMPI_Irecv(packed.data() + plan.begin(k), static_cast<int>(plan.length(k)),
               MPI_BYTE, source, fragmentTag(note.id), pair.data, &r);
    int flag = 0;
    while (PMPI_Test(&r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag)
      progress();
  }
  // Unpacked by ddtc's reference semantics (equal to MPI_Unpack's, and a
  // partial last instance is written too); the MPI library's MPI_Unpack
  // when ddtc cannot represent the type.
  int rc = MPI_SUCCESS;
  TypeInfo *info = acquireType(type);
  if (info->type) {
    ddtc::referenceUnpackRange(*info->type->type, count, packed.data(), 0,
                               note.bytes, buf);
  } else {
    int pos = 0;
    int whole = size ? static_cast<int>(note.bytes / size) : 0;
    rc = PMPI_Unpack(packed.data(), static_cast<int>(note.bytes), &pos, buf,
                     whole, type, comm);
  }
  releaseType(info);
  PMPI_Status_set_elements_x(status, MPI_BYTE, note.bytes);
  return rc;
}

int completeHostReceive(void *buf, int count, MPI_Datatype type, MPI_Comm comm,
                        MPI_Status *status) {
  // (MPI_ERROR is not set by single completions: callers pass only
  // statuses of receives that succeeded.)
  if (!active() || status->MPI_SOURCE == MPI_PROC_NULL)
    return MPI_SUCCESS;
  MPI_Count n = 0;
  PMPI_Get_elements_x(status, MPI_BYTE, &n);
  if (n != 0)
    return MPI_SUCCESS;
  const CommPair *pair = commPair(comm);
  if (!pair)
    return MPI_SUCCESS;
  Note note;
  if (!takeNote(*pair, status->MPI_SOURCE, status->MPI_TAG, note))
    return raise(comm, MPI_ERR_OTHER, "a zero-byte message without its note");
  if (note.kind != Note::Pipelined && note.kind != Note::Ipc)
    return MPI_SUCCESS;
  return receivePipelinedHost(*pair, note, status->MPI_SOURCE, buf, count, type,
                              comm, status);
}

void watchStagedRequest(MPI_Request request, std::unique_ptr<StagedBuffer> send,
                        std::unique_ptr<StagedBuffer> recv, MPI_Comm comm) {
  if (request == MPI_REQUEST_NULL || (!send && !recv))
    return;
  auto op = std::make_shared<Operation>();
  op->kind = Operation::Kind::HostStaged;
  op->comm = comm;
  op->staged = std::move(recv);
  op->stagedSend = std::move(send);
  op->user = request;
  std::lock_guard<std::mutex> lock(registryMutex);
  enterRequest(request, op);
}

void watchHostRequest(MPI_Request request, bool send, void *buf, int count,
                      MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                      bool persistent) {
  if (!active() || request == MPI_REQUEST_NULL || peer == MPI_PROC_NULL)
    return;
  const CommPair *pair = commPair(comm);
  if (!pair)
    return;
  auto op = std::make_shared<Operation>();
  if (send) {
    int size = 0;
    if (!persistent || (count > 0 && (PMPI_Type_size(type, &size), size > 0)))
      return; // only persistent zero-byte sends owe a note per start
    op->kind = Operation::Kind::HostZeroSend;
  } else {
    op->kind = Operation::Kind::HostRecv;
  }
  op->send = send;
  op->buf = buf;
  op->count = count;
  op->datatype = type;
  op->peer = peer;
  op->tag = tag;
  op->comm = comm;
  op->pair = pair;
  op->persistent = persistent;
  op->user = request;
  std::lock_guard<std::mutex> lock(registryMutex);
  enterRequest(request, op);
}

} // namespace ddtc::mpi
