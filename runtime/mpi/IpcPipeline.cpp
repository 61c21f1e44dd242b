//===- IpcPipeline.cpp - Device to device between processes of one host ---===//
//
// A pipelined message to a rank of the same host moves through CUDA IPC
// instead of host memory; the wire rule is kept (the user's message is a
// zero-byte message, its note follows on the notes communicator, everything
// else on the fragments communicator under the note's id). Receiver driven:
//
//  - The sender packs fragment after fragment into the slots of a ring in
//    its own device memory (exported once, from the layer's device pool) and
//    tells the receiver, in order, which slot holds the next fragment
//    ("ready"). The receiver copies the fragment from the peer's slot to a
//    local staging slot (a copy engine, on a second stream) and returns the
//    slot at once, then unpacks from staging; with DDTC_MPI_IPC_READ=direct
//    it unpacks straight from the peer's slot and returns it afterwards.
//    Packing fragment k+1, moving k and unpacking k-1 overlap.
//  - A contiguous send buffer is read by the receiver in place: the note
//    names the sender's buffer and the sender packs nothing; the receiver
//    says when it is done.
//  - A contiguous receive buffer (and a sender that packs) is written by
//    the sender in place: the answer names it; the sender copies what it
//    had packed into its ring already, packs the rest straight into it, and
//    says when it is done.
//  - With DDTC_MPI_IPC_READ=push the receiver answers with a ring of its
//    own: the sender packs each fragment straight into a free slot of it
//    (its kernel's stores cross the link, where a read of the peer's memory
//    waits for every load), says which slot holds the next fragment, and
//    the receiver unpacks from its own memory and returns the slot.
//
// Ordering the ring's fragments (DDTC_MPI_IPC_SYNC): by default each side
// waits for an event before it says anything; with "device" the streams do
// it (IpcFlags.cpp). The sender offers flag words in its note; a
// receiver that can map them and wait on them says so in its answer. Then
// the sender announces a fragment once its pack is queued (after it, its
// stream writes the count of fragments packed), the receiver's stream waits
// for that count before it reads the slot and writes the count read after
// it, the receiver returns the slot once that is queued, and the sender's
// stream waits for the count read before it packs into the slot again; the
// sender is done when its stream has seen the last fragment read.
//
// The note names the memory to read (`Note::ref`); a receiver that cannot
// map it answers "host fragments", and the sender packs again into pinned
// host memory: the peer is then dropped to host memory for the rest of the
// run (said once with DDTC_MPI_VERBOSE). A receive that is too small is
// refused before anything moves, as in the host pipeline.
//
// Messages after the answer (int32 each): ready (slot index: of the
// sender's ring, or with push of the receiver's) and the sender's "written"
// (-1) go with the fragments tag; returned slots and the receiver's "read"
// (-1) go with the answer tag. -2 in either says the
// other side failed; -3 from the sender says it cannot map the receive
// buffer after all, and the receiver reads the sender's ring instead.
//===----------------------------------------------------------------------===//

#include "Operation.h"

#include "Profile.h"
#include "TypeObject.h"

#include <algorithm>

namespace ddtc::mpi {
namespace {

constexpr int32_t kFinished = -1, kFailed = -2, kUseRing = -3;
std::atomic<long long> receives{0}, pulls{0}, fusedPulls{0};

bool inPlace(const Operation &op) { return op.note.ref.slots == 0; }

/// Whether the receiver packs the message from the sender's buffer with the
/// sender's type (DDTC_MPI_IPC_READ=pull).
bool pulled(const Operation &op) {
  return inPlace(op) && op.note.typeSerial != 0;
}

/// Whether the streams order this transfer's ring (IpcFlags.cpp): the
/// sender offered flag words and the receiver's answer took them (on the
/// receiver, its own answer says so once it has mapped them).
bool streamOrdered(const Operation &op) {
  return op.flagWords && op.answer.streamSync;
}

/// A flag word's value for `count` fragments of this transfer.
uint64_t flagValue(const Operation &op, uint32_t count) {
  return op.note.epoch | count;
}

char *userBytes(const Operation &op) {
  return const_cast<char *>(static_cast<const char *>(op.buf)) +
         op.info->trueLb;
}

/// Packs bytes [lo, hi) of the message into device memory at `out`.
bool packRange(Operation &op, int64_t lo, int64_t hi, char *out) {
  if (hi <= lo)
    return true;
  CostScope cost(Cost::Pack);
  if (op.contiguous)
    return copyDeviceAsync(out, userBytes(op) + lo,
                           static_cast<size_t>(hi - lo), op.stream);
  return ddtc_pack(op.info->type, op.buf, op.count, lo, hi, out, op.stream,
                   settings().maxCtas) == DDTC_SUCCESS;
}

/// Unpacks bytes [lo, hi) of the message from device memory at `in`, on
/// `stream` (the operation's by default).
bool unpackRange(Operation &op, int64_t lo, int64_t hi, const char *in,
                 void *stream = nullptr) {
  CostScope cost(Cost::Unpack);
  if (!stream)
    stream = op.stream;
  if (op.contiguous)
    return copyDeviceAsync(userBytes(op) + lo, in, static_cast<size_t>(hi - lo),
                           stream);
  return ddtc_unpack(op.info->type, const_cast<void *>(op.buf), op.count, lo,
                     hi, in, stream, settings().maxCtas) == DDTC_SUCCESS;
}

/// Receiver: the stream whose kernel reads fragment k straight from the
/// peer's memory. Kernels reading over the link one after another on one
/// stream each wait for the last loads of the one before; on several
/// streams in turn a fragment's tail overlaps the next one's head
/// (bench/results/2026-11-29-NVIDIA-H200-x2-peer-rates). Fragments are
/// disjoint byte ranges of the packed stream, so their unpacks write
/// disjoint bytes. Each extra stream first waits for what the operation's
/// stream had queued before the transfer's first read. One stream where the
/// flag words order the reads (the counts they write must grow in order) or
/// where copies do the reading.
void *readStream(Operation &op, int k) {
  const bool kernels = !op.contiguous || pulled(op);
  const int n = streamOrdered(op) || !kernels ? 1 : settings().readStreams;
  // Marked before the first read is queued (fragments are read in order),
  // so that the other streams wait for what came before the transfer, not
  // for its first fragment.
  if (n > 1 && !op.readStart && !(op.readStart = recordEvent(op.stream)))
    return nullptr;
  const int i = n > 1 ? k % n : 0;
  if (i == 0)
    return op.stream;
  void *s = threadReadStream(op.buf, i);
  if (!s)
    return nullptr;
  if (!(op.readersJoined & (1u << i))) {
    if (!streamWait(s, op.readStart))
      return nullptr;
    op.readersJoined |= 1u << i;
  }
  return s;
}

/// Receiver of a pulled message: packs bytes [lo, hi) of the sender's
/// message from its buffer, as mapped here, into local memory at `out`.
bool packFromPeer(Operation &op, int64_t lo, int64_t hi, char *out,
                  void *stream) {
  CostScope cost(Cost::Pack);
  const char *origin = op.peerBytes - op.note.trueLb;
  return ddtc_pack(op.peerPackType.get(), origin, op.note.count, lo, hi, out,
                   stream, settings().maxCtas) == DDTC_SUCCESS;
}

/// Types whose pack reads far more than it keeps go through the ring: the
/// cube's x face (8 bytes of every 64 read) packed by the receiver from the
/// peer's mapping took 6x as long as packed by its owner on one H200
/// (bench/results/2026-11-29-NVIDIA-H200-ipc-pull).
constexpr double kPullMostAmplification = 4.0;

/// Receiver of a fused pull: moves bytes [lo, hi) of the message from the
/// sender's buffer, as mapped here, straight into the receive buffer.
bool copyFromPeer(Operation &op, int64_t lo, int64_t hi, void *stream) {
  CostScope cost(Cost::Unpack);
  const char *origin = op.peerBytes - op.note.trueLb;
  return ddtc_copy(op.peerPackType.get(), origin, op.note.count, op.info->type,
                   const_cast<void *>(op.buf), op.count, lo, hi, stream,
                   settings().maxCtas) == DDTC_SUCCESS;
}

/// Whether DDTC_MPI_IPC_READ asks this send to be pulled: always with
/// pull; with auto where the peer's last receive from this rank was on the
/// send buffer's GPU (within one GPU pulling is faster one message at a
/// time), or on another GPU where the receiver's copy moves the type in
/// words and the model predicts the pull faster than the ring (the
/// receive type taken to be the send type).
bool wantsPull(const Operation &op) {
  if (settings().ipcRead != IpcRead::Auto)
    return settings().ipcRead == IpcRead::Pull;
  const uint64_t gpu = peerReceiveGpu(op.peerWorld);
  return gpu != 0 && (gpu == gpuOf(userBytes(op)) ||
                      pullFasterAcrossGpus(*op.info, op.total));
}

/// Sender, DDTC_MPI_IPC_READ=pull (or auto, wantsPull): exports the send
/// buffer in place and names its type in the note, with its spec for a
/// receiver not known to keep it; false (the note untouched) when the type
/// or the buffer does not allow it: then the ring serves.
bool offerPull(Operation &op) {
  // With auto, a spec longer than this is shipped from the type's second
  // message to the peer on: the receiver parses and plans it (milliseconds
  // for a spec of a megabyte), which a type sent once would not repay.
  constexpr size_t kAutoMostSpecBytes = 4096;
  if (op.contiguous || !op.info->type || op.count <= 0 ||
      op.info->traffic.read > kPullMostAmplification || !wantsPull(op))
    return false;
  IpcRef ref;
  if (!exportDevice(userBytes(op), ref))
    return false;
  // Every byte the type touches must lie in the exported allocation: the
  // receiver maps that alone.
  int64_t first = 0, span = 0;
  typeSpan(*op.info, op.count, first, span);
  const int64_t lo = static_cast<int64_t>(ref.offset) - op.info->trueLb + first;
  if (lo < 0 || lo + span > static_cast<int64_t>(ref.size))
    return false;
  if (!peerKeepsType(op.peerWorld, op.info->serial)) {
    const std::string &spec = typeSpec(*op.info);
    if (spec.empty() || spec.size() > static_cast<size_t>(INT32_MAX) ||
        (settings().ipcRead == IpcRead::Auto &&
         spec.size() > kAutoMostSpecBytes &&
         !offeredBefore(op.peerWorld, op.info->serial)))
      return false;
    op.specText = std::make_unique<std::string>(spec);
    op.note.specBytes = static_cast<int32_t>(spec.size());
  }
  op.note.ref = ref;
  op.note.typeSerial = op.info->serial;
  op.note.count = op.count;
  op.note.trueLb = op.info->trueLb;
  return true;
}

/// Receives the next int32 signal with `tag`; true when one arrived.
bool nextSignal(Operation &op, int from, int tag) {
  if (op.signalReq == MPI_REQUEST_NULL)
    PMPI_Irecv(&op.signal, 1, MPI_INT32_T, from, tag, op.pair->data,
               &op.signalReq);
  if (!testDone(op, op.signalReq) || op.error != MPI_SUCCESS)
    return false;
  ++op.signals;
  if (op.signal == kFailed)
    op.error = MPI_ERR_OTHER;
  if (op.signal == kUseRing && op.send)
    op.error = MPI_ERR_OTHER; // only a sender says this
  return op.error == MPI_SUCCESS;
}

/// After an error: waits for this side's device work, so that nothing
/// runs on buffers about to be given back, and ends the operation.
bool abandon(Operation &op) {
  std::string ignored;
  if (op.stream)
    syncStream(op.stream, ignored);
  if (op.copyStream)
    syncStream(op.copyStream, ignored);
  for (int i = 1; i < kReadStreams; ++i)
    if (op.readersJoined & (1u << i))
      syncStream(threadReadStream(op.buf, i), ignored);
  note(1, "a CUDA IPC transfer with rank %d failed (error %d)", op.peerWorld,
       op.error);
  // Streams waiting for flag words the peer will not write now are freed
  // (what they then run moves garbage, into buffers of a failed transfer);
  // the pair is not used again.
  if (op.flagWords) {
    forceWord(op.buf, &op.flagWords[op.send ? 1 : 0],
              flagValue(op, UINT32_MAX));
    op.flags.lost = true;
  }
  // Tell the peer, which may be waiting for this side (it is no use when
  // the peer is gone, and harmless).
  if (!op.finalSent && op.pair) {
    if (op.send)
      op.outbox.post(kFailed, op.peer, fragmentTag(op.note.id), op.pair->data);
    else
      op.outbox.post(kFailed, op.source, answerTag(op.note.id), op.pair->data);
    op.finalSent = true;
  }
  return true;
}

bool sendWritten(Operation &op) {
  // Packs into the receive buffer (and the copies of fragments packed
  // before the answer came) are on op.stream: once its event is done the
  // bytes are in the peer's memory.
  if (!op.event) {
    op.event = recordEvent(op.stream);
    if (!op.event)
      op.error = MPI_ERR_OTHER;
    return false;
  }
  if (!eventDone(op.event))
    return false;
  releaseEvent(op.event);
  op.event = nullptr;
  op.outbox.post(kFinished, op.peer, fragmentTag(op.note.id), op.pair->data);
  op.finalSent = true;
  return true;
}

/// Sender, answer IpcWrite: everything goes straight into the receiver's
/// buffer. When it cannot be mapped, the receiver is told to read the ring
/// instead (the answer becomes IpcRead).
bool startWrite(Operation &op) {
  std::string why;
  if (!openPeer(op.answer.ref, op.peerMemory, why)) {
    note(2,
         "cannot map the receive buffer of rank %d (%s): it reads this "
         "rank's ring instead",
         op.peerWorld, why.c_str());
    op.outbox.post(kUseRing, op.peer, fragmentTag(op.note.id), op.pair->data);
    op.answer.go = Answer::IpcRead;
    return true;
  }
  char *dst = op.peerMemory.base + op.answer.ref.offset;
  op.peerBytes = dst;
  // Fragments packed (or being packed) before the answer: copied after
  // their pack on the same stream.
  for (Slot &s : op.slots)
    if (s.frag >= 0 && (s.s == Slot::S::Packing || s.s == Slot::S::Packed)) {
      int64_t lo = op.plan.begin(s.frag);
      if (!copyDeviceAsync(dst + lo, s.buf,
                           static_cast<size_t>(op.plan.length(s.frag)),
                           op.stream))
        op.error = MPI_ERR_OTHER;
    }
  int64_t rest = op.nextFrag < op.nfrag ? op.plan.begin(op.nextFrag) : op.total;
  if (!packRange(op, rest, op.total, dst + rest))
    op.error = MPI_ERR_OTHER;
  op.nextFrag = op.nfrag;
  return op.error == MPI_SUCCESS;
}

/// Sender, answer IpcPush: maps the receiver's ring. When it cannot, the
/// receiver is told to read this rank's ring instead (the answer becomes
/// IpcRead).
bool startPush(Operation &op) {
  std::string why;
  const IpcRef &ref = op.answer.ref;
  if (ref.slots <= 0 || ref.slotBytes < op.slotBytes ||
      !openPeer(ref, op.peerMemory, why)) {
    note(2,
         "cannot write into the ring of rank %d (%s): it reads this rank's "
         "ring instead",
         op.peerWorld, why.empty() ? "slots too small" : why.c_str());
    op.outbox.post(kUseRing, op.peer, fragmentTag(op.note.id), op.pair->data);
    op.answer.go = Answer::IpcRead;
    return true;
  }
  op.peerBytes = op.peerMemory.base + ref.offset;
  op.peerFree.clear();
  for (int i = 0; i < ref.slots; ++i)
    op.peerFree.push_back(i);
  op.pushed.clear();
  op.nextSend = 0;
  return true;
}

/// Sender, answer IpcPush: fragments go in order into the receiver's free
/// slots (copied from this rank's ring where packed before the answer,
/// else packed straight there), each announced once its kernel is done;
/// finished when the receiver has returned every slot it unpacked from.
bool advancePush(Operation &op) {
  const int64_t peerSlotBytes = op.answer.ref.slotBytes;
  while (op.signals < op.nfrag &&
         nextSignal(op, op.peer, answerTag(op.note.id))) {
    if (op.signal < 0 || op.signal >= op.answer.ref.slots) {
      op.error = MPI_ERR_OTHER;
      break;
    }
    op.peerFree.push_back(op.signal);
    ++op.fragsDone;
  }
  while (op.error == MPI_SUCCESS && op.nextSend < op.nfrag &&
         !op.peerFree.empty()) {
    int k = op.nextSend, slot = op.peerFree.front();
    int64_t lo = op.plan.begin(k), hi = op.plan.end(k);
    char *dst = op.peerBytes + slot * peerSlotBytes;
    auto own = std::find_if(op.slots.begin(), op.slots.end(),
                            [k](const Slot &s) { return s.frag == k; });
    // Packed into this rank's ring before the answer came: copied after
    // its pack, on the same stream. With push-copy every later fragment
    // is packed into this rank's ring too (slot k mod n: on one stream the
    // copy out of that slot of fragment k - n ran before) and copied.
    const size_t bytes = static_cast<size_t>(hi - lo);
    bool ok;
    if (own != op.slots.end()) {
      ok = copyDeviceAsync(dst, own->buf, bytes, op.stream);
    } else if (settings().ipcRead == IpcRead::PushCopy && !op.slots.empty()) {
      char *mine = op.slots[static_cast<size_t>(k) % op.slots.size()].buf;
      ok = packRange(op, lo, hi, mine) &&
           copyDeviceAsync(dst, mine, bytes, op.stream);
    } else {
      ok = packRange(op, lo, hi, dst);
    }
    void *event = ok ? recordEvent(op.stream) : nullptr;
    if (!event) {
      op.error = MPI_ERR_OTHER;
      break;
    }
    op.peerFree.pop_front();
    op.pushed.emplace_back(event, slot);
    ++op.nextSend;
  }
  while (op.error == MPI_SUCCESS && !op.pushed.empty() &&
         eventDone(op.pushed.front().first)) {
    releaseEvent(op.pushed.front().first);
    op.outbox.post(op.pushed.front().second, op.peer, fragmentTag(op.note.id),
                   op.pair->data);
    op.pushed.pop_front();
  }
  if (op.error != MPI_SUCCESS)
    return abandon(op);
  return op.fragsDone == op.nfrag && op.outbox.drain() && headerSent(op);
}

} // namespace

long long ipcReceives() { return receives.load(); }
long long ipcPulls() { return pulls.load(); }

KernelTraffic pullTraffic(const TypeInfo &info, int64_t bytes) {
  KernelTraffic t = info.traffic;
  // A peer's memory crosses the link in 32-byte sectors: where the sectors
  // the blocks touch can be counted, the pull reads those, not the
  // estimate for blocks at any alignment (which charges a 256-byte block
  // 1.25 bytes a byte).
  if (info.type && info.type->specialized && info.size > 0)
    if (double counted = countedStridedRead(info.type->specialized->layout,
                                            bytes / info.size, 32))
      t.read = counted;
  return t;
}

bool pullFasterAcrossGpus(const TypeInfo &info, int64_t bytes) {
  return copiesInWords(info) &&
         predictPullUs(pullSchedule(bytes), pullTraffic(info, bytes)) <
             predictIpcUs(ipcSchedule(bytes, info.traffic), info.traffic);
}

bool pullPredicted(const TypeInfo &info, int64_t bytes) {
  if (!info.type || info.traffic.read > kPullMostAmplification)
    return false;
  return settings().ipcRead == IpcRead::Pull ||
         (settings().ipcRead == IpcRead::Auto &&
          pullFasterAcrossGpus(info, bytes));
}
long long ipcFusedPulls() { return fusedPulls.load(); }

bool signalPacked(Operation &op, int k) {
  return !op.ipc || !op.send || !op.flagWords ||
         streamWriteWord(op.stream, &op.flagWords[0], flagValue(op, k + 1));
}

bool wantIpc(Operation &op) {
  if (protocol() == Protocol::Pipeline || !settings().ipc || !op.pair)
    return false;
  op.peerWorld = op.pair->worldOf(op.peer);
  return ipcPeer(op.peerWorld);
}

bool startIpcSend(Operation &op) {
  bool readInPlace = op.contiguous && exportDevice(userBytes(op), op.note.ref);
  const bool pull = !readInPlace && offerPull(op);
  op.plan = readInPlace ? inPlaceSchedule(op.total)
            : pull      ? pullSchedule(op.total)
                        : ipcSchedule(op.total, op.info->traffic);
  op.nfrag = static_cast<int>(op.plan.count());
  op.slotBytes = slotBytesFor(op.plan);
  op.nextFrag = op.nextSend = op.fragsDone = op.signals = 0;
  op.finalSent = false;
  op.note.kind = Note::Ipc;
  op.slots.clear();
  if (readInPlace || pull) {
    // Read in place: the receiver must see the buffer as of this call.
    op.note.ref.slots = 0;
    op.nextFrag = op.nfrag;
    return fence(op.stream);
  }
  size_t n = static_cast<size_t>(std::min(settings().depth, op.nfrag));
  if (!deviceAcquire(op.buf, n * static_cast<size_t>(op.slotBytes),
                     op.deviceRing))
    return false;
  op.note.ref = op.deviceRing.ref;
  op.note.ref.slots = static_cast<int32_t>(n);
  op.note.ref.slotBytes = op.slotBytes;
  if (settings().ipcStreamSync && flagsAcquire(op.buf, op.flags)) {
    op.note.flags = op.flags.ref;
    op.note.epoch = nextEpoch();
    op.flagWords = op.flags.words;
  }
  op.slots.assign(n, Slot{});
  for (size_t i = 0; i < n; ++i)
    op.slots[i].buf = op.deviceRing.ptr + i * op.slotBytes;
  return true;
}

bool advanceIpcSend(Operation &op) {
  collectPacked(op.slots);
  bool busy = std::any_of(op.slots.begin(), op.slots.end(), [](const Slot &s) {
    return s.s == Slot::S::Packing;
  });
  if (op.error != MPI_SUCCESS)
    return abandon(op);
  if (!op.answered)
    return false;
  bool headerDone = headerSent(op);
  const bool ordered = streamOrdered(op);
  switch (op.answer.go) {
  case Answer::IpcPush:
    if (!op.peerMemory.base && !startPush(op))
      return abandon(op);
    if (op.answer.go != Answer::IpcPush)
      return advanceIpcSend(op);
    return advancePush(op);
  case Answer::IpcWrite:
    if (!op.peerMemory.base && !startWrite(op))
      return abandon(op);
    if (op.answer.go != Answer::IpcWrite)
      return advanceIpcSend(op);
    if (!op.finalSent && !sendWritten(op))
      return op.error != MPI_SUCCESS && abandon(op);
    return op.outbox.drain() && headerDone;
  case Answer::IpcRead:
    if (inPlace(op)) {
      // The receiver reads the buffer itself and says when it is done.
      while (op.signals == 0 && nextSignal(op, op.peer, answerTag(op.note.id)))
        ;
      if (op.error != MPI_SUCCESS)
        return abandon(op);
      return op.signals > 0 && headerDone;
    }
    // Ready slots are announced in order (with the flags, as soon as their
    // pack is queued); returned ones take the next fragment.
    for (bool sent = true; sent;) {
      sent = false;
      for (size_t i = 0; i < op.slots.size(); ++i) {
        Slot &s = op.slots[i];
        bool ready = s.s == Slot::S::Packed ||
                     (ordered && s.s == Slot::S::Packing);
        if (ready && s.frag == op.nextSend) {
          op.outbox.post(static_cast<int32_t>(i), op.peer,
                         fragmentTag(op.note.id), op.pair->data);
          trace("ipc-announced", s.frag);
          releaseEvent(s.event);
          s.event = nullptr;
          s.s = Slot::S::Lent;
          ++op.nextSend;
          sent = true;
        }
      }
    }
    while (op.signals < op.nfrag &&
           nextSignal(op, op.peer, answerTag(op.note.id))) {
      int i = op.signal;
      if (i < 0 || i >= static_cast<int>(op.slots.size()) ||
          op.slots[i].s != Slot::S::Lent) {
        op.error = MPI_ERR_OTHER;
        break;
      }
      ++op.fragsDone;
      int read = op.slots[i].frag; // the fragment the receiver had
      trace("ipc-returned", read);
      op.slots[i].s = Slot::S::Free;
      op.slots[i].frag = -1;
      if (op.nextFrag < op.nfrag) {
        int k = op.nextFrag++;
        Slot &s = op.slots[i];
        s.frag = k;
        if (ordered) {
          // The receiver has queued its read of the slot: the stream waits
          // for it, then packs the next fragment there.
          s.s = Slot::S::Packed;
          if (!streamWaitWord(op.stream, &op.flagWords[1],
                              flagValue(op, read + 1)) ||
              !packRange(op, op.plan.begin(k), op.plan.end(k), s.buf) ||
              !signalPacked(op, k))
            op.error = MPI_ERR_OTHER;
          continue;
        }
        s.s = Slot::S::Packing;
        trace("pack-launched", k, op.plan.length(k));
        s.event = packRange(op, op.plan.begin(k), op.plan.end(k), s.buf)
                      ? recordEvent(op.stream)
                      : nullptr;
        if (!s.event)
          op.error = MPI_ERR_OTHER;
      }
    }
    if (op.error != MPI_SUCCESS)
      return abandon(op);
    if (op.fragsDone < op.nfrag || !op.outbox.drain() || !headerDone)
      return false;
    if (!ordered)
      return true;
    // Every slot came back, but the last reads may still run: done once the
    // stream has seen the count of fragments read reach the last.
    if (!op.event) {
      if (!streamWaitWord(op.stream, &op.flagWords[1],
                          flagValue(op, op.nfrag)) ||
          !(op.event = recordEvent(op.stream))) {
        op.error = MPI_ERR_OTHER;
        return abandon(op);
      }
    }
    return eventDone(op.event);
  default: // refused: nothing moves
    return !busy && headerDone;
  }
}

namespace {
/// Receiver: reads the sender's ring or buffer, through staging unless
/// DDTC_MPI_IPC_READ=direct (or the receive buffer is contiguous).
void setupRead(Operation &op) {
  op.answer.go = Answer::IpcRead;
  op.signals = 0;
  size_t n = inPlace(op)
                 ? static_cast<size_t>(std::min(settings().depth, op.nfrag))
                 : static_cast<size_t>(op.note.ref.slots);
  op.slots.assign(n, Slot{});
  // A pulled message is packed into staging, unless the receive buffer is
  // contiguous (then straight into it) or ddtc_copy moves it (fused).
  if ((settings().ipcRead == IpcRead::Stage || (pulled(op) && !op.fused)) &&
      !op.contiguous && (op.copyStream = threadCopyStream(op.buf)) &&
      deviceAcquire(op.buf, n * static_cast<size_t>(op.slotBytes),
                    op.deviceRing))
    for (size_t i = 0; i < n; ++i)
      op.slots[i].buf = op.deviceRing.ptr + i * op.slotBytes;
}

/// Receiver, DDTC_MPI_IPC_READ=push: a ring of this rank's for the sender to
/// write fragments into; false when none can be had (then it reads).
bool setupPush(Operation &op) {
  size_t n = static_cast<size_t>(std::min(settings().depth, op.nfrag));
  if (n == 0 || !deviceAcquire(op.buf, n * static_cast<size_t>(op.slotBytes),
                               op.deviceRing))
    return false;
  op.answer.go = Answer::IpcPush;
  op.answer.ref = op.deviceRing.ref;
  op.answer.ref.slots = static_cast<int32_t>(n);
  op.answer.ref.slotBytes = op.slotBytes;
  op.signals = 0;
  op.slots.assign(n, Slot{});
  for (size_t i = 0; i < n; ++i)
    op.slots[i].buf = op.deviceRing.ptr + i * op.slotBytes;
  return true;
}

/// Receiver, push: each announced slot of this rank's ring holds the next
/// fragment; it is unpacked from here and returned once its unpack is done.
bool advancePushRecv(Operation &op) {
  while (op.signals < op.nfrag &&
         nextSignal(op, op.source, fragmentTag(op.note.id))) {
    if (op.signal == kUseRing && op.signals == 1) {
      // The sender cannot map this ring: it lends its own instead, now and
      // for its later messages.
      dropPushPeer(op.peerWorld);
      deviceRelease(op.deviceRing);
      setupRead(op);
      return advanceIpcRecv(op);
    }
    op.ready.push_back(op.signal);
  }
  if (op.error != MPI_SUCCESS)
    return abandon(op);
  for (size_t i = 0; i < op.slots.size(); ++i) {
    Slot &s = op.slots[i];
    if (s.s == Slot::S::Unpacking && eventDone(s.unpacked)) {
      releaseEvent(s.unpacked);
      s.unpacked = nullptr;
      op.outbox.post(static_cast<int32_t>(i), op.source, answerTag(op.note.id),
                     op.pair->data);
      ++op.fragsDone;
      s.frag = -1;
      s.s = Slot::S::Free;
    }
  }
  while (!op.ready.empty() && op.nextFrag < op.nfrag) {
    int i = op.ready.front();
    if (i < 0 || i >= static_cast<int>(op.slots.size()) ||
        op.slots[i].s != Slot::S::Free) {
      op.error = MPI_ERR_OTHER;
      return abandon(op);
    }
    op.ready.pop_front();
    Slot &s = op.slots[i];
    int k = op.nextFrag++;
    int64_t lo = op.plan.begin(k), len = op.plan.length(k);
    s.frag = k;
    s.s = Slot::S::Unpacking;
    s.unpacked =
        unpackRange(op, lo, lo + len, s.buf) ? recordEvent(op.stream) : nullptr;
    if (!s.unpacked) {
      op.error = MPI_ERR_OTHER;
      return abandon(op);
    }
  }
  if (op.fragsDone < op.nfrag)
    return false;
  return op.outbox.drain() && testDone(op, op.answerReq);
}
} // namespace

bool startIpcRecv(Operation &op, int64_t capacity) {
  (void)capacity;
  std::string why;
  op.peerWorld = op.note.ref.owner;
  if (!openPeer(op.note.ref, op.peerMemory, why)) {
    dropIpcPeer(op.peerWorld, why);
    return false;
  }
  if (pulled(op) &&
      !(op.peerPackType = peerType(op.peerWorld, op.note.typeSerial, why))) {
    // Through host memory this time; the sender sends the spec again.
    note(2, "cannot pack the type of rank %d here (%s): this message goes "
         "through host memory", op.peerWorld, why.c_str());
    op.peerTypeUnknown = true;
    return false;
  }
  // Both types one strided nest in pack order: one kernel a fragment, from
  // the sender's buffer to the receive buffer.
  op.fused =
      pulled(op) && !op.contiguous && settings().ipcFuse && op.info->type &&
      ddtc_copy_supported(op.peerPackType.get(), op.info->type) == DDTC_SUCCESS;
  op.ipc = true;
  receives.fetch_add(1, std::memory_order_relaxed);
  op.peerBytes = op.peerMemory.base + op.note.ref.offset;
  op.nfrag = static_cast<int>(op.plan.count());
  op.slotBytes = slotBytesFor(op.plan);
  op.nextFrag = op.fragsDone = op.signals = 0;
  op.finalSent = false;
  op.ready.clear();
  op.answer = Answer{};
  // The GPU of the first byte the type touches: the origin itself may lie
  // outside the allocation (a type whose lower bound is past it, or
  // MPI_BOTTOM).
  op.answer.gpu = gpuOf(userBytes(op));
  if (!inPlace(op) && op.contiguous &&
      exportDevice(userBytes(op), op.answer.ref) && fence(op.stream)) {
    // The sender writes into the receive buffer (after the application's
    // earlier work on it: the fence).
    op.answer.go = Answer::IpcWrite;
    op.slots.clear();
  } else if (!inPlace(op) &&
             (settings().ipcRead == IpcRead::Push ||
              settings().ipcRead == IpcRead::PushCopy) &&
             pushPeer(op.peerWorld) && setupPush(op)) {
    // The sender writes into this rank's ring.
  } else {
    setupRead(op);
    if (pulled(op)) {
      pulls.fetch_add(1, std::memory_order_relaxed);
      op.answer.typeKept = 1;
      fusedPulls.fetch_add(op.fused ? 1 : 0, std::memory_order_relaxed);
      if (!op.contiguous && !op.fused && !op.deviceRing.ptr)
        op.error = MPI_ERR_NO_MEM; // no staging to pack into
    }
    // The sender offered flag words: the streams order the fragments when
    // this GPU can wait on them and they can be mapped here.
    std::string ignored;
    if (!inPlace(op) && op.note.epoch && settings().ipcStreamSync &&
        streamWaitsUsable(op.buf) &&
        openPeer(op.note.flags, op.peerFlagMemory, ignored)) {
      op.flagWords = reinterpret_cast<uint64_t *>(op.peerFlagMemory.base +
                                                  op.note.flags.offset);
      op.answer.streamSync = 1;
    }
  }
  PMPI_Isend(&op.answer, sizeof op.answer, MPI_BYTE, op.source,
             answerTag(op.note.id), op.pair->data, &op.answerReq);
  op.received = op.total;
  note(3, "receive %lld bytes from %d tag %d (CUDA IPC, %s%s%s, id %d)",
       static_cast<long long>(op.total), op.source, op.rtag,
       op.answer.go == Answer::IpcWrite  ? "written by the sender"
       : op.answer.go == Answer::IpcPush ? "pushed into this rank's ring"
       : op.fused    ? "copied by one kernel from the peer's buffer"
       : pulled(op)  ? "packed here from the peer's buffer"
       : inPlace(op) ? "read in place"
                     : "read from the sender's ring",
       op.deviceRing.ptr ? ", staged" : "",
       streamOrdered(op) ? ", ordered by the streams" : "", op.note.id);
  return true;
}

bool advanceIpcRecv(Operation &op) {
  if (op.error != MPI_SUCCESS)
    return abandon(op);
  if (op.answer.go == Answer::IpcPush)
    return advancePushRecv(op);
  if (op.answer.go == Answer::IpcWrite) {
    // The sender writes; it says when its bytes are in place, or that it
    // cannot map them and they are in its ring.
    while (op.signals == 0 &&
           nextSignal(op, op.source, fragmentTag(op.note.id)))
      ;
    if (op.error != MPI_SUCCESS)
      return abandon(op);
    if (op.signals > 0 && op.signal == kUseRing) {
      setupRead(op);
      return advanceIpcRecv(op);
    }
    return op.signals > 0 && testDone(op, op.answerReq);
  }
  bool ring = !inPlace(op);
  const bool ordered = ring && streamOrdered(op);
  while (ring && op.signals < op.nfrag &&
         nextSignal(op, op.source, fragmentTag(op.note.id))) {
    op.ready.push_back(op.signal);
    trace("ipc-ready", op.signals - 1);
  }
  if (op.error != MPI_SUCCESS)
    return abandon(op);
  for (Slot &s : op.slots) {
    if (s.s == Slot::S::Copying && eventDone(s.event)) {
      // In staging now: the sender may reuse its slot.
      trace("ipc-copied", s.frag);
      releaseEvent(s.event);
      s.event = nullptr;
      if (s.peerSlot >= 0) // not returned already (the flags)
        op.outbox.post(s.peerSlot, op.source, answerTag(op.note.id),
                       op.pair->data);
      s.peerSlot = -1;
      s.s = Slot::S::Unpacking;
    }
    if (s.s == Slot::S::Unpacking && eventDone(s.unpacked)) {
      trace("ipc-unpacked", s.frag);
      releaseEvent(s.unpacked);
      s.unpacked = nullptr;
      if (s.peerSlot >= 0) // read straight from the sender's slot
        op.outbox.post(s.peerSlot, op.source, answerTag(op.note.id),
                       op.pair->data);
      s.peerSlot = -1;
      ++op.fragsDone;
      s.s = Slot::S::Free;
    }
    if (s.s != Slot::S::Free || op.nextFrag >= op.nfrag ||
        (ring && op.ready.empty()))
      continue;
    int k = op.nextFrag++;
    int64_t lo = op.plan.begin(k), len = op.plan.length(k);
    const char *src;
    if (ring) {
      int slot = op.ready.front();
      op.ready.pop_front();
      if (slot < 0 || slot >= op.note.ref.slots) {
        op.error = MPI_ERR_OTHER;
        return abandon(op);
      }
      s.peerSlot = slot;
      src = op.peerBytes + slot * op.note.ref.slotBytes;
    } else {
      src = op.peerBytes + lo;
    }
    s.frag = k;
    // With the flags, the stream that reads the slot first waits for the
    // sender's stream to have packed fragment k, and says when it has read
    // it; the slot goes back at once.
    const uint64_t count = flagValue(op, k + 1);
    void *reader = s.buf ? op.copyStream : op.stream;
    bool ok = !ordered || streamWaitWord(reader, &op.flagWords[0], count);
    if (s.buf) {
      // Staged: the copy engine brings the fragment over on the copy
      // stream; the unpack waits for it on the main stream.
      ok = ok &&
           (pulled(op) ? packFromPeer(op, lo, lo + len, s.buf, op.copyStream)
                       : copyDeviceAsync(s.buf, src, static_cast<size_t>(len),
                                         op.copyStream)) &&
           (!ordered ||
            streamWriteWord(op.copyStream, &op.flagWords[1], count)) &&
           (s.event = recordEvent(op.copyStream)) &&
           streamWait(op.stream, s.event) &&
           unpackRange(op, lo, lo + len, s.buf);
      s.s = Slot::S::Copying;
    } else {
      reader = readStream(op, k);
      ok = ok && reader &&
           (op.fused ? copyFromPeer(op, lo, lo + len, reader)
            : pulled(op)
                ? packFromPeer(op, lo, lo + len, userBytes(op) + lo, reader)
                : unpackRange(op, lo, lo + len, src, reader)) &&
           (!ordered || streamWriteWord(reader, &op.flagWords[1], count));
      s.s = Slot::S::Unpacking;
    }
    s.unpacked = ok ? recordEvent(s.buf ? op.stream : reader) : nullptr;
    if (!s.unpacked) {
      op.error = MPI_ERR_OTHER;
      return abandon(op);
    }
    trace(s.buf ? "ipc-copy-queued" : "ipc-unpack-queued", k, len);
    if (ordered) {
      op.outbox.post(s.peerSlot, op.source, answerTag(op.note.id),
                     op.pair->data);
      s.peerSlot = -1;
    }
  }
  if (op.fragsDone < op.nfrag)
    return false;
  if (!ring && !op.finalSent) {
    op.outbox.post(kFinished, op.source, answerTag(op.note.id), op.pair->data);
    op.finalSent = true;
  }
  return op.outbox.drain() && testDone(op, op.answerReq);
}

void finishIpc(Operation &op) {
  if (!op.ipc && !op.deviceRing.ptr && !op.peerMemory.base && !op.flags.words)
    return;
  for (Slot &s : op.slots) {
    releaseEvent(s.event);
    releaseEvent(s.unpacked);
    s.event = s.unpacked = nullptr;
  }
  if (op.ipc)
    op.slots.clear();
  releaseEvent(op.event);
  op.event = nullptr;
  releaseEvent(op.readStart);
  op.readStart = nullptr;
  op.readersJoined = 0;
  for (auto &[event, slot] : op.pushed)
    releaseEvent(event);
  op.pushed.clear();
  op.peerFree.clear();
  if (op.signalReq != MPI_REQUEST_NULL) {
    PMPI_Cancel(&op.signalReq);
    PMPI_Request_free(&op.signalReq);
  }
  int specSent = 0;
  if (op.specReq != MPI_REQUEST_NULL)
    PMPI_Test(&op.specReq, &specSent, MPI_STATUS_IGNORE);
  if (op.specReq != MPI_REQUEST_NULL) {
    // Still pending after a failure: the MPI library may read the text yet.
    PMPI_Request_free(&op.specReq);
    (void)op.specText.release();
  }
  op.peerPackType.reset();
  op.fused = false;
  for (auto &[value, req] : op.outbox.sends)
    if (req != MPI_REQUEST_NULL)
      PMPI_Request_free(&req);
  op.outbox.sends.clear();
  deviceRelease(op.deviceRing);
  closePeer(op.peerMemory);
  op.peerBytes = nullptr;
  flagsRelease(op.flags, op.stream);
  closePeer(op.peerFlagMemory);
  op.flagWords = nullptr;
}

} // namespace ddtc::mpi
