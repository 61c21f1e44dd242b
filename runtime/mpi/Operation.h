//===- Operation.h - One transfer of the layer, its pipeline ----*- C++ -*-===//
//
// The state of one operation on device buffers (and of the host requests the
// layer watches), shared by the files that move its bytes: Transfers.cpp
// (eager, staged, and the pipeline through pinned host memory) and
// IpcPipeline.cpp (the pipeline through CUDA IPC between processes of one
// host).
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_OPERATION_H
#define DDTC_MPI_OPERATION_H

#include "FragmentSchedule.h"
#include "Layer.h"
#include "Profile.h"

#include <deque>
#include <vector>

namespace ddtc::mpi {

/// One slot of a pipeline's ring: a fragment's place in pinned host memory
/// (host pipeline), in the sender's device ring or the receiver's device
/// staging (IPC pipeline).
struct Slot {
  char *buf = nullptr;
  int frag = -1;
  enum class S {
    Free,
    Packing,   ///< sender: its pack runs (event)
    Packed,    ///< sender: packed, waits for its turn to go
    Sending,   ///< host pipeline: its MPI send runs
    Lent,      ///< IPC sender: the receiver was told; waits for its return
    Receiving, ///< host pipeline: its MPI receive runs
    Copying,   ///< IPC receiver: the copy from the peer runs (event)
    Unpacking  ///< receiver: its unpack runs (event)
  };
  S s = S::Free;
  void *event = nullptr;    ///< the pack, receive copy or staging copy
  void *unpacked = nullptr; ///< IPC receiver: its unpack
  int peerSlot = -1;        ///< IPC receiver: the sender's slot it reads
  MPI_Request req = MPI_REQUEST_NULL;
};

/// Sender: slots whose pack has finished become Packed. The packs run in
/// order on one stream, so only the oldest one's event is queried until it
/// is done (a query per slot and poll cost the host for nothing).
inline void collectPacked(std::vector<Slot> &slots) {
  for (;;) {
    Slot *oldest = nullptr;
    for (Slot &s : slots)
      if (s.s == Slot::S::Packing && (!oldest || s.frag < oldest->frag))
        oldest = &s;
    if (!oldest || !eventDone(oldest->event))
      return;
    releaseEvent(oldest->event);
    oldest->event = nullptr;
    oldest->s = Slot::S::Packed;
    trace("packed", oldest->frag);
  }
}

/// Small messages in flight (fragment numbers): each keeps its value alive
/// until its send completes.
struct Outbox {
  std::deque<std::pair<int32_t, MPI_Request>> sends;
  void post(int32_t value, int peer, int tag, MPI_Comm comm);
  /// Drops completed sends; true when none is left.
  bool drain();
};

struct Operation {
  /// Device: a transfer of the layer. HostRecv: a host receive on a
  /// communicator with a pair, watched for pipelined messages.
  /// HostZeroSend: a persistent zero-byte host send, which owes a note per
  /// start. HostStaged: a nonblocking collective of the MPI library on
  /// staged copies of device buffers (`staged`, `stagedSend`).
  enum class Kind {
    Device,
    HostRecv,
    HostZeroSend,
    HostStaged
  } kind = Kind::Device;
  bool send = true;
  SendMode mode = SendMode::Standard;
  TypeInfo *info = nullptr;
  /// count x the type is one run of memory (contiguousFor): plain copies.
  bool contiguous = false;
  MPI_Datatype datatype = MPI_DATATYPE_NULL; ///< valid only while posting
  const void *buf = nullptr;
  int count = 0, peer = 0, tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Message message = MPI_MESSAGE_NULL; ///< for Mrecv/Imrecv
  bool persistent = false;

  // One transfer.
  /// Packing: an eager send whose pack runs, queued to go to the MPI
  /// library once packed (Transfers.cpp, "Eager sends that go to the MPI
  /// library once packed").
  enum class State {
    Idle,
    Packing,
    Posted,
    Unpacking,
    SendPipe,
    RecvPipe,
    Done
  };
  State state = State::Idle;
  void *pinned = nullptr;
  size_t pinnedBytes = 0;
  void *stream = nullptr;
  void *event = nullptr;
  MPI_Request inner = MPI_REQUEST_NULL;
  /// Packing: whether the message has gone to the MPI library (`inner`,
  /// with the result of that call in postRc). Both written under the queue's
  /// lock.
  bool onWire = false;
  int postRc = MPI_SUCCESS;
  std::unique_ptr<StagedBuffer> staged;
  std::unique_ptr<StagedBuffer> stagedSend; ///< HostStaged: the send copy
  int64_t received = 0;
  int source = MPI_ANY_SOURCE, rtag = MPI_ANY_TAG;
  int error = MPI_SUCCESS;
  bool cancelled = false;
  bool started = false;   ///< a start not yet reported by Wait/Test
  bool signalled = false; ///< the user's request was completed already

  // The pipelined protocol.
  const CommPair *pair = nullptr;
  Note note;
  Answer answer; ///< the receiver's answer
  MPI_Request noteReq = MPI_REQUEST_NULL, answerReq = MPI_REQUEST_NULL;
  bool answered = false;
  int64_t total = 0;
  FragmentSchedule plan; ///< the fragments' byte ranges (from the note)
  int64_t slotBytes = 0; ///< bytes of a ring's slot: the longest fragment
  int nfrag = 0, nextFrag = 0, nextSend = 0, fragsDone = 0;
  std::vector<Slot> slots;
  void *ring = nullptr;
  size_t ringBytes = 0;

  // The pipeline over CUDA IPC (IpcPipeline.cpp).
  bool ipc = false;
  int peerWorld = -1;        ///< the peer's rank in MPI_COMM_WORLD
  DeviceBlock deviceRing;    ///< sender: its ring; receiver: its staging
  PeerMapping peerMemory;    ///< the peer's memory, mapped here
  char *peerBytes = nullptr; ///< the peer's bytes as mapped here
  void *copyStream = nullptr;
  /// Receiver reading the peer's memory on several streams: the event on
  /// `stream` they wait for before their first read of this transfer, and
  /// which of them have (bit i: threadReadStream's i-th).
  void *readStart = nullptr;
  unsigned readersJoined = 0;
  int32_t signal = 0; ///< the last "ready k" / "returned k" / done received
  MPI_Request signalReq = MPI_REQUEST_NULL;
  int signals = 0;       ///< signals received so far
  std::deque<int> ready; ///< receiver: fragments announced, in order
  /// Answer::IpcPush, sender: the receiver's slots free to write, and the
  /// fragments written or being written (their event, the slot), in order.
  std::deque<int> peerFree;
  std::deque<std::pair<void *, int>> pushed;
  Outbox outbox;
  bool finalSent = false;
  /// The fragments ordered by the streams (IpcFlags.cpp): the sender's own
  /// flag words (offered in the note), the receiver's mapping of them; in
  /// use once both sides agreed (the answer's streamSync).
  FlagPair flags;
  PeerMapping peerFlagMemory;
  uint64_t *flagWords = nullptr; ///< the pair, as this side addresses it
  /// A pulled message (DDTC_MPI_IPC_READ=pull): the sender's send of its
  /// type's spec; the receiver's copy of the sender's type (kept by
  /// PeerTypes.cpp), which packs from the peer's memory.
  MPI_Request specReq = MPI_REQUEST_NULL;
  std::unique_ptr<std::string> specText; ///< what specReq sends
  std::shared_ptr<ddtc_type_s> peerPackType;
  bool peerTypeUnknown = false; ///< receiver: the note's type is not kept
  /// Receiver of a pulled message: each fragment moves from the sender's
  /// buffer to the receive buffer in one ddtc_copy, no staging between.
  bool fused = false;

  // The user's request.
  int completionTag = -1;
  MPI_Request user = MPI_REQUEST_NULL;

  ~Operation();
};

/// Packed bytes of the operation's count x type.
int packedBytes(const Operation &op);
/// A ring's slot for `plan`: its longest fragment, rounded up so that every
/// slot starts on a multiple of FragmentSchedule::kAlign (a pack into or an
/// unpack from a misaligned slot is misaligned throughout).
inline int64_t slotBytesFor(const FragmentSchedule &plan) {
  return FragmentSchedule::roundUp(plan.longest());
}
/// On the fragments communicator both ranks of a pair may run pipelines
/// towards each other with equal ids: the receiver's messages (the answer,
/// returned slots) and the sender's (fragments, ready slots) get tags of
/// their own (odd and even), so that neither can match a receive of the
/// other.
inline int answerTag(int id) { return 2 * id + 1; }
inline int fragmentTag(int id) { return 2 * id; }
/// PMPI_Test that records an error of the MPI library in op.error (a peer
/// that died, with MPI_ERRORS_RETURN): true when done or failed.
bool testDone(Operation &op, MPI_Request &r);
/// Sender: whether the user's zero-byte message, its note and, for a pulled
/// message, its type's spec have gone (or failed: op.error).
bool headerSent(Operation &op);

/// Sender: after the receiver answered "host fragments" to an IPC note,
/// packs again into a ring of pinned host memory (Transfers.cpp).
bool restartOnHost(Operation &op);

/// The IPC pipeline (IpcPipeline.cpp).
/// Sender: whether `op` goes through IPC (peer on this host, IPC usable).
bool wantIpc(Operation &op);
/// Sender: sets up the note's reference (ring or buffer in place) and packs
/// the first fragments; false (op.error set) on failure.
bool startIpcSend(Operation &op);
/// Sender: advances after the answer; true when done.
bool advanceIpcSend(Operation &op);
/// Receiver of an IPC note: answers it; returns false when it answered
/// "host fragments" (the peer's memory cannot be opened), so that the host
/// pipeline takes over.
bool startIpcRecv(Operation &op, int64_t capacity);
/// Receiver: true when done.
bool advanceIpcRecv(Operation &op);
/// IPC sender that offered flag words: queues on its stream the write that
/// says fragment k is packed (true when there is nothing to write).
bool signalPacked(Operation &op, int k);
/// Gives back the IPC resources of an operation.
void finishIpc(Operation &op);

} // namespace ddtc::mpi

#endif // DDTC_MPI_OPERATION_H
