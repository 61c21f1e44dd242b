//===- Layer.h - libddtc-mpi's internal interfaces --------------*- C++ -*-===//
//
// The MPI layer: settings, buffer classification, the pinned pool, the type
// cache kept with each MPI datatype, the operations that move device buffers
// and the requests that stand for them. The MPI_* wrappers (one file per
// family) only classify and dispatch; every message they send is one message
// of the MPI library on the user's communicator, peer and tag, holding
// exactly the bytes MPI_Pack produces, sent as MPI_PACKED (docs/MPI.md).
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_LAYER_H
#define DDTC_MPI_LAYER_H

#include <mpi.h>

#include "FragmentSchedule.h"
#include "PipelineModel.h"
#include "ddtc/ddtc.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ddtc::mpi {

class StagedBuffer;

//===--- Settings (DDTC_MPI_*) --------------------------------------------===//

/// Pipeline: through pinned host memory only; Ipc: through CUDA IPC where
/// the peer is on this host (else as Pipeline).
enum class Protocol { Auto, Eager, Pipeline, Staged, Ipc };

/// How many bytes a host-packed eager send may copy per packed byte.
constexpr int64_t kHostPackSpanFactor = 16;

/// How a fragment crosses through CUDA IPC (DDTC_MPI_IPC_READ).
enum class IpcRead {
  /// The receiver's unpack reads the sender's memory (the default: one
  /// launch less per fragment, faster on an H200 pair).
  Direct,
  /// The receiver copies each fragment to local staging first.
  Stage,
  /// The sender's pack kernels write each fragment into a slot of the
  /// receiver's ring over the link; the receiver unpacks from its memory.
  Push,
  /// As Push, but the sender packs each fragment into its own ring and a
  /// copy engine writes it into the receiver's slot (one stream: no wait
  /// between the pack and the copy); the receiver unpacks from its memory.
  PushCopy,
  /// The sender packs nothing: its buffer is exported in place with its
  /// type's spec (shipped once per peer), and the receiver's kernels pack
  /// from the peer's memory into local staging (or straight into a
  /// contiguous receive buffer) and unpack from there.
  Pull,
  /// Pull where the peer's last receive was on the GPU of the send buffer
  /// and the type's spec is short or the peer keeps it, else Direct. Not
  /// the default: on one H200 it was faster one message at a time from 1 to
  /// 16 MiB but slower at 64 MiB and in the halo exchange, where a rank's
  /// receives launch every kernel (bench/results/2026-11-29-NVIDIA-H200-ipc-auto).
  Auto
};

struct Settings {
  bool disabled = false;      ///< DDTC_MPI_DISABLE: pass everything through
  int verbose = 0;            ///< DDTC_MPI_VERBOSE
  int64_t eagerLimit = 65536; ///< DDTC_MPI_EAGER_LIMIT (packed bytes)
  /// DDTC_MPI_HOST_PACK: an eager send of at most this many packed bytes,
  /// whose type spans at most kHostPackSpanFactor times as many, copies the
  /// span to pinned memory and packs it there with the MPI library's own
  /// engine instead of launching a kernel (0: never).
  int64_t hostPack = 1024;
  int64_t fragment = 1 << 20; ///< DDTC_MPI_FRAGMENT (largest fragment)
  /// DDTC_MPI_FRAGMENT_MIN: the first (and last) fragment, from which they
  /// double up to the largest (FragmentSchedule.h). Used only when given:
  /// otherwise the host pipeline's fragments are fixed and the IPC
  /// pipeline's model chooses.
  int64_t fragmentMin = 128 << 10;
  int depth = 4;                      ///< DDTC_MPI_DEPTH (fragments in flight)
  int maxCtas = 0;                    ///< DDTC_MPI_CTAS (0: no cap)
  /// DDTC_MPI_READ_STREAMS: the streams an IPC receiver spreads its reads
  /// of the peer's memory over, fragment after fragment (1: its one stream).
  /// On one stream each kernel reading over NVLink waits for the last loads
  /// of the one before it: on two H200s fragments of 1 MiB cost 3 us more
  /// each than one read of the whole; on 4 streams in turn, 0.7 us. But
  /// kernels that all run at once finish at once and give the sender's ring
  /// back at once, which then stands empty while it packs again: two
  /// streams, each kernel's tail beside the next one's head, were fastest
  /// (bench/results/2026-11-29-NVIDIA-H200-x2-read-streams).
  int readStreams = 2;
  Protocol protocol = Protocol::Auto; ///< DDTC_MPI_PROTOCOL
  bool handshake = true; ///< DDTC_MPI_HANDSHAKE=0: some ranks lack the library
  bool ipc = true;       ///< DDTC_MPI_IPC=0: never CUDA IPC
  /// DDTC_MPI_IPC_READ: how a fragment crosses through IPC.
  IpcRead ipcRead = IpcRead::Direct;
  /// DDTC_MPI_IPC_FUSE=0: a pulled message whose two types ddtc_copy
  /// serves is still packed into staging and unpacked from it, two kernels
  /// a fragment, instead of one copy from the sender's buffer to the
  /// receiver's.
  bool ipcFuse = true;
  /// DDTC_MPI_IPC_SYNC=host (default): each side of an IPC ring waits for
  /// its work on a fragment to finish before it announces it; "device":
  /// the GPUs' streams order the fragments (a wait for a flag word the
  /// other side's stream writes) and the host announces a fragment as soon
  /// as its work is queued. Not the default: on two H200s it was no faster
  /// for one message and slower for many at once (a stream that waits holds
  /// up the other transfers' work queued behind it).
  bool ipcStreamSync = false;
  /// DDTC_MPI_HOST_READ: the receiver of the pipeline through host memory
  /// unpacks each fragment straight from pinned host memory ("direct", the
  /// unpack reading over PCIe) or copies it to device staging with a copy
  /// engine first ("stage").
  bool hostStage = false;
  int ipcCache = 64; ///< DDTC_MPI_IPC_CACHE: peer allocations kept mapped
  /// DDTC_MPI_PEER_TYPES: peers' types a receiver keeps for pulled messages
  int peerTypes = 256;
  bool fragmentSet = false;    ///< DDTC_MPI_FRAGMENT given: no model choice
  bool fragmentMinSet = false; ///< DDTC_MPI_FRAGMENT_MIN given
  /// DDTC_MPI_PROGRESS=0: no progress thread, and the MPI library is
  /// initialized at the level the application asks for.
  bool progressThread = true;
  /// DDTC_MPI_EAGER_ASYNC=0: a nonblocking eager send waits for its pack
  /// before it returns (otherwise, with the progress thread, its message
  /// goes to the MPI library once packed: Transfers.cpp).
  bool eagerAsync = true;
};

/// Whether the model predicts a message of `bytes` (up to the eager limit)
/// faster through IPC than eager.
bool smallFasterThroughIpc(int64_t bytes);
const ModelFigures &modelFigures();
/// The calibration file this process reads (in the ddtc cache folder, named
/// after the GPU, the driver and the host).
std::string modelPath();
/// For benchmarks and calibration: the largest fragment of later IPC
/// messages (0: the model's choice again); the first is
/// DDTC_MPI_FRAGMENT_MIN when given, else the same (fixed fragments).
void chooseFragment(int64_t bytes);

/// The IPC pipeline's fragments for a message of `bytes` packed bytes of a
/// type whose kernels move `traffic` per packed byte (TypeInfo): the
/// largest and the first from DDTC_MPI_FRAGMENT and DDTC_MPI_FRAGMENT_MIN
/// where given, else those the model predicts fastest.
FragmentSchedule ipcSchedule(int64_t bytes, const KernelTraffic &traffic = {});
/// The fragments of a message the receiver reads in place from the sender's
/// contiguous buffer: one (up to 1 GiB each), since nothing is packed for
/// later fragments to overlap; the model's as above where
/// DDTC_MPI_FRAGMENT, ddtc_mpi_set_fragment or staged reads ask for them.
FragmentSchedule inPlaceSchedule(int64_t bytes);
/// The fragments of a pulled message (DDTC_MPI_IPC_READ=pull): each packed
/// by the receiver from the peer's memory, then unpacked locally.
FragmentSchedule pullSchedule(int64_t bytes);
/// The host pipeline's: DDTC_MPI_FRAGMENT and DDTC_MPI_FRAGMENT_MIN.
FragmentSchedule hostSchedule(int64_t bytes);
/// The model's one-way time of a message through IPC in those fragments.
double predictIpcUs(const FragmentSchedule &schedule,
                    const KernelTraffic &traffic = {});
/// The same for a message read in place (no pack, no kernels).
double predictInPlaceUs(const FragmentSchedule &schedule);
/// The model's time of a message pulled in `schedule` (pullUs).
double predictPullUs(const FragmentSchedule &schedule,
                     const KernelTraffic &traffic);

const Settings &settings();
/// The protocol in force: settings().protocol, unless a program chose
/// another since with ddtc_mpi_set_protocol (benchmarks comparing paths).
Protocol protocol();
/// Parses a protocol name; false for an unknown one.
bool parseProtocol(const char *name, Protocol &p);
/// One line on stderr, "ddtc-mpi[rank]: ...", when DDTC_MPI_VERBOSE >= level.
void note(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/// The same line once per distinct text (for per-type or per-peer notices).
void noteOnce(const std::string &text);
const char *protocolName(Protocol p);

//===--- The CUDA side ----------------------------------------------------===//

/// Whether a CUDA driver could be loaded (else nothing is device memory).
bool haveDriver();
/// The calling thread's current CUDA context (null without one), and making
/// such a handle current on another thread.
void *currentContextHandle();
void makeContextCurrentHandle(void *context);
/// Where a buffer lives. Managed and host memory go through the MPI library.
bool isDeviceBuffer(const void *address);
/// The stream of the calling thread (created on first use in the context of
/// `address`'s device); null when no driver.
void *threadStream(const void *address);
/// Waits for the stream; returns false and reports on failure.
bool syncStream(void *stream, std::string &error);
/// Waits until the work queued on `stream` so far, and what the legacy
/// stream had queued before it, is done.
bool fence(void *stream);
/// An event recorded on `stream` now; query with eventDone.
void *recordEvent(void *stream);
bool eventDone(void *event);
/// Gives an event back to the pool it came from (events are reused: one
/// created and destroyed per fragment cost the host more than its record).
void releaseEvent(void *event);
void trimEvents(); ///< destroys the pooled events (at finalize)
/// Asynchronous copies on `stream` between device and pinned memory.
bool copyToHostAsync(void *host, const void *device, size_t bytes,
                     void *stream);
bool copyToDeviceAsync(void *device, const void *host, size_t bytes,
                       void *stream);
/// Synchronous copies between device memory and any host memory.
bool copyToHost(void *host, const void *device, size_t bytes);
bool copyToDevice(void *device, const void *host, size_t bytes);

/// A second stream of the calling thread, for copies that overlap the
/// kernels of the first (the IPC receiver's staging copies).
void *threadCopyStream(const void *address);
/// The calling thread's i-th stream for reads of a peer's memory
/// (1 <= i < kReadStreams; the 0th is threadStream's), made on first use.
constexpr int kReadStreams = 8;
void *threadReadStream(const void *address, int i);
/// Makes `stream` wait for `event` (recorded on another stream).
bool streamWait(void *stream, void *event);
/// Asynchronous copy between device buffers (peer memory included).
bool copyDeviceAsync(void *dst, const void *src, size_t bytes, void *stream);

/// Page-locked, device-mapped host memory from a pool (sizes rounded up to
/// powers of two and kept for reuse: registering memory is slow).
void *pinnedAcquire(size_t bytes);
void pinnedRelease(void *p, size_t bytes);
void pinnedTrim(); ///< frees the pool (at finalize)

//===--- CUDA IPC ---------------------------------------------------------===//

/// Device memory of this process as another process of the host can map
/// it: the exported allocation and where the bytes meant lie in it.
struct IpcRef {
  unsigned char handle[64] = {}; ///< CUipcMemHandle of the allocation
  uint64_t base = 0;             ///< the allocation's address in its owner
  uint64_t bufferId = 0; ///< its buffer id (a reallocation gets a new one)
  uint64_t size = 0;     ///< the allocation's size
  uint64_t offset = 0;   ///< of the bytes meant, from base
  int32_t owner = -1;    ///< the owner's rank in MPI_COMM_WORLD
  int32_t slots = 0;     ///< a ring's slots (0: the whole message in place)
  int64_t slotBytes = 0; ///< bytes per slot of a ring
};

/// A block of device memory from the layer's pool, exported once.
struct DeviceBlock {
  char *ptr = nullptr;
  size_t bytes = 0; ///< rounded size
  IpcRef ref;       ///< its export (owner, slots filled by the user)
};
/// False when device memory or its export cannot be had.
bool deviceAcquire(const void *near, size_t bytes, DeviceBlock &block);
void deviceRelease(DeviceBlock &block);
/// Fills `ref` for device memory at `p` (a buffer of the user's, read or
/// written in place by the peer); false when it cannot be exported (memory
/// from a stream-ordered pool, for instance).
bool exportDevice(const void *p, IpcRef &ref);
/// A peer's allocation mapped here, held while an operation uses it; the
/// mapping stays cached (bounded, least recently used closed first).
struct PeerMapping {
  char *base = nullptr;
  uint64_t key = 0;
};
/// Maps `ref`; false (with the driver's reason) when it cannot.
bool openPeer(const IpcRef &ref, PeerMapping &m, std::string &why);
void closePeer(PeerMapping &m);
/// Closes every cached mapping (at finalize).
void trimPeers();
/// Whether the driver offers CUDA IPC.
bool haveIpc();
/// The GPU holding device memory at `p`, by its PCI address (the same in
/// every process of the host); 0 when unknown.
uint64_t gpuOf(const void *p);

/// Two 64-bit flag words of device memory for one IPC transfer: the
/// sender's stream writes the first (fragments packed), the receiver's the
/// second (fragments read), and each stream waits for the other's. They
/// come from a block exported once and zeroed when made; a value is an
/// epoch (this process's transfer, increasing) in the upper half and a
/// count in the lower, so a word left from an earlier transfer is always
/// below what a later one waits for.
struct FlagPair {
  uint64_t *words = nullptr; ///< [0]: fragments packed, [1]: fragments read
  IpcRef ref;                ///< the export of words[0]
  bool lost = false; ///< after a failure: never handed out again
};
/// Whether the GPU of `near` can wait on memory from a stream.
bool streamWaitsUsable(const void *near);
/// False when the GPU of `near` cannot wait on memory from a stream, or no
/// block can be had (then the host orders the fragments).
bool flagsAcquire(const void *near, FlagPair &f);
/// Gives the pair back once the work queued on `stream` so far is done
/// (a write still queued must not land in the pair's next transfer).
void flagsRelease(FlagPair &f, void *stream);
void flagsTrim(); ///< frees the blocks (at finalize)
/// The next transfer's epoch (shifted into the upper half).
uint64_t nextEpoch();
/// Queues on `stream` a wait until the word reaches `value` (signed
/// difference, as the driver compares), or a write of `value` to it.
bool streamWaitWord(void *stream, const uint64_t *word, uint64_t value);
bool streamWriteWord(void *stream, uint64_t *word, uint64_t value);
/// Writes `value` now, past any stream that waits (after a failure, to free
/// the streams waiting for a peer that will not write it), from the context
/// of `near`'s device.
bool forceWord(const void *near, uint64_t *word, uint64_t value);

//===--- Peers ------------------------------------------------------------===//

/// Learns which ranks of MPI_COMM_WORLD share this host (at MPI_Init).
void initPeers();
/// This process's rank in MPI_COMM_WORLD.
int worldRank();
/// Whether the device messages to `world` may use CUDA IPC.
bool ipcPeer(int world);
/// Whether `world`, sending to this rank through IPC, may be asked to write
/// its fragments into this rank's ring (DDTC_MPI_IPC_READ=push): not once it
/// could not map it.
bool pushPeer(int world);
void dropPushPeer(int world);
/// The GPU of the last device buffer `world` received an IPC message of
/// this rank's into (Answer::gpu; 0: none yet).
void notePeerReceiveGpu(int world, uint64_t gpu);
uint64_t peerReceiveGpu(int world);
/// After an IPC failure with `world`: later messages use host memory
/// (said once with DDTC_MPI_VERBOSE).
void dropIpcPeer(int world, const std::string &why);

//===--- Types ------------------------------------------------------------===//

/// What the layer keeps with an MPI datatype: its figures, and the ddtc type
/// that packs it (null when ddtc cannot: the type is then staged through
/// host memory and the MPI library's datatype engine).
struct TypeInfo {
  std::atomic<int> refs{1};
  ddtc_type type = nullptr;
  int64_t size = 0, lb = 0, extent = 0, trueLb = 0, trueExtent = 0;
  /// The packed stream of `count` instances is the memory at
  /// origin + trueLb (plain copies, no kernel).
  bool contiguous = false;
  /// One instance's packed stream is the memory at origin + trueLb (known
  /// once planned: its layout is one run).
  bool contiguousOnce = false;
  std::string why; ///< why ddtc does not pack it, when type is null
  /// The ddtc type was committed (kernels planned) for device use.
  std::atomic<bool> planned{false};
  /// Bytes of memory a pack of the type reads, and an unpack writes, per
  /// packed byte, estimated from its layout when it is planned
  /// (estimateReadAmplification in 64-byte pieces,
  /// estimateWriteAmplification): the model's kernel rates for the type.
  KernelTraffic traffic;
  /// Whether a receiver's ddtc_copy moves the type to a buffer of its own
  /// type map in whole words of 4 bytes or more (copiesInWords below):
  /// -1 not asked yet, else 0 or 1.
  mutable std::atomic<signed char> copiesInWords{-1};
  /// Names the type to peers (PeerTypes.cpp): unique in the process, never
  /// reused, so that a peer's copy of a freed type is never taken for a
  /// later one.
  uint64_t serial = 0;
  /// The type's spec binding, printed at its first pulled message (empty
  /// when it does not parse back to the same tree: PeerTypes.cpp).
  std::string spec;
  bool specTried = false;
};

/// Whether `count` instances of the type are packed by plain copies of the
/// memory from origin + trueLb.
inline bool contiguousFor(const TypeInfo &t, int64_t count) {
  return t.contiguous || (count == 1 && t.contiguousOnce);
}

/// Whether a receiver's ddtc_copy moves planned `info`'s type to a buffer
/// of its own type map in whole words of 4 bytes or more (rt::copiesInWords):
/// a pull of it is one kernel a fragment on the receiver (a narrower copy
/// assembles its bytes in registers a few at a time: on two H200s 41-byte
/// records copied so took 1.4x the ring's time at 64 MiB; loaded as whole
/// vectors around each record, 0.99-1.02x). Asked at the first pull
/// decision that needs it, not when the type is planned: for a strided
/// type of several nests it plans the type's work units. False for a type
/// not planned yet.
bool copiesInWords(const TypeInfo &info);

/// The info of `datatype` (decoded on first use and kept as an attribute),
/// with a reference the caller drops with release(). Never fails: a type
/// ddtc cannot represent gets an info without a ddtc type.
TypeInfo *acquireType(MPI_Datatype datatype);
void releaseType(TypeInfo *info);
/// The same, with the type planned for device buffers (on first use).
TypeInfo *acquirePlannedType(MPI_Datatype datatype);
/// Called by MPI_Type_commit: decodes and plans now.
void commitType(MPI_Datatype datatype);
void initTypes();

/// Bytes [first, first + span) that `count` instances touch, relative to the
/// origin; span 0 when count is 0 or the type is empty.
void typeSpan(const TypeInfo &t, int64_t count, int64_t &first, int64_t &span);

//===--- Types shipped to peers (PeerTypes.cpp) ---------------------------===//

/// The spec binding (`t = ...`) of a type with a ddtc type, printed and
/// read back at the first call and kept in the info; empty when it does
/// not read back to the same tree (the type is then not pulled).
const std::string &typeSpec(TypeInfo &info);
/// Sender: whether `world` answered that it keeps the type `serial`.
bool peerKeepsType(int world, uint64_t serial);
void notePeerKeepsType(int world, uint64_t serial);
/// Sender: whether type `serial` was offered to `world` before (and notes
/// that it now has been): auto ships a long spec from the type's second
/// message to a peer on, so a type sent once is not parsed there.
bool offeredBefore(int world, uint64_t serial);
/// Receiver: keeps the spec of type `serial` of `world`, as it came after
/// a note (Comms.cpp, takeNote).
void keepPeerSpec(int world, uint64_t serial, std::string spec);
/// Type `serial` of `world`, planned (from its spec, at the first call);
/// null, with `why`, when no spec of it came (or it was dropped: at most
/// DDTC_MPI_PEER_TYPES are kept, the least recently used dropped first) or
/// it does not parse or plan. The caller's reference keeps it alive.
std::shared_ptr<ddtc_type_s> peerType(int world, uint64_t serial,
                                      std::string &why);
/// Sender: `world` answered that it does not keep type `serial` (any more):
/// its next message carries the spec again.
void forgetPeerKeepsType(int world, uint64_t serial);
void clearPeerTypes();

//===--- Operations on device buffers -------------------------------------===//

enum class SendMode { Standard, Buffered, Synchronous, Ready };

/// PMPI_Isend, _Ibsend, _Issend or _Irsend, as `mode` says.
int isendInMode(const void *buf, int count, MPI_Datatype type, int dest,
                int tag, MPI_Comm comm, SendMode mode, MPI_Request *r);

/// Blocking transfers; return an MPI error code (the comm's handler called).
int deviceSend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, SendMode mode);
int deviceRecv(void *buf, int count, MPI_Datatype type, int source, int tag,
               MPI_Comm comm, MPI_Status *status);
int deviceMrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg,
                MPI_Comm comm, MPI_Status *status);

/// Nonblocking transfers: *request is a real MPI request of the user's.
int deviceIsend(const void *buf, int count, MPI_Datatype type, int dest,
                int tag, MPI_Comm comm, SendMode mode, MPI_Request *request);
int deviceIrecv(void *buf, int count, MPI_Datatype type, int source, int tag,
                MPI_Comm comm, MPI_Request *request);
int deviceImrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg,
                 MPI_Comm comm, MPI_Request *request);
/// While alive, device sends of this thread use the eager protocol (their
/// bytes are all packed when MPI_Isend returns: MPI_Sendrecv_replace).
struct EagerSendsOnly {
  EagerSendsOnly();
  ~EagerSendsOnly();
  EagerSendsOnly(const EagerSendsOnly &) = delete;
  EagerSendsOnly &operator=(const EagerSendsOnly &) = delete;

private:
  bool saved;
};

/// Persistent: the request is started by MPI_Start.
int devicePersistent(bool send, void *buf, int count, MPI_Datatype type,
                     int peer, int tag, MPI_Comm comm, SendMode mode,
                     MPI_Request *request);

//===--- Host buffers on communicators with a pair ------------------------===//
// A zero-byte message there may announce a pipelined one: host receives
// check for it, and zero-byte host sends send their note.

/// Whether nonblocking eager sends wait for their pack to go to the MPI
/// library (Transfers.cpp), and posting them all, in order, waiting for
/// their packs: every other send does it first (MPI's non-overtaking rule).
bool anyUnposted();
void flushUnposted();

/// Before a host send (or start of one) of `count` x `type` to `dest`: the
/// queued eager sends go first, then the note of a zero-byte message, so
/// that a receiver waiting for it never waits for this rank's call to return.
void beforeHostSend(int count, MPI_Datatype type, int dest, int tag,
                    MPI_Comm comm);
/// After a host receive completed with `status` (never ignored): receives
/// the pipelined message a zero-byte one announced. Returns an MPI error.
int completeHostReceive(void *buf, int count, MPI_Datatype type, MPI_Comm comm,
                        MPI_Status *status);
/// Watches a host request (receives, and persistent zero-byte sends) so that
/// Wait/Test and Start do the above.
void watchHostRequest(MPI_Request request, bool send, void *buf, int count,
                      MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                      bool persistent);

/// Keeps the staged copies of a nonblocking collective with its request:
/// when Wait/Test completes it, `recv` (if any) is copied back to the
/// device and both are freed.
void watchStagedRequest(MPI_Request request, std::unique_ptr<StagedBuffer> send,
                        std::unique_ptr<StagedBuffer> recv, MPI_Comm comm);

//===--- Requests ---------------------------------------------------------===//

/// Operations on device buffers started so far (a count for tests).
long long deviceOperations();
/// Eager sends packed on the host so far (a count for tests).
long long hostPacks();
/// Messages this rank received through CUDA IPC, and times a peer was
/// dropped to host memory after an IPC failure (counts for tests).
long long ipcReceives();
long long ipcFallbacks();
long long ipcPulls();
/// Pulled messages moved by ddtc_copy, one kernel a fragment.
long long ipcFusedPulls();
/// What a pull of `bytes` of the type moves per packed byte: its traffic,
/// with the sectors its blocks touch counted where they can be
/// (countedStridedRead in 32-byte sectors).
KernelTraffic pullTraffic(const TypeInfo &info, int64_t bytes);
/// DDTC_MPI_IPC_READ=auto, between two GPUs: whether a message of `bytes`
/// of the type is pulled (ddtc_copy moves it in words and the model
/// predicts the pull faster than the ring).
bool pullFasterAcrossGpus(const TypeInfo &info, int64_t bytes);
/// For predictions: whether a non-contiguous send of `bytes` of the type
/// would be pulled between two GPUs, by DDTC_MPI_IPC_READ and the model.
bool pullPredicted(const TypeInfo &info, int64_t bytes);
/// Pulled messages answered "type unknown" (forgetPeerKeepsType).
long long ipcSpecsResent();
/// True when some operation of the layer is in flight or some request of the
/// user's stands for one (cheap: one atomic load).
bool anyPending();
/// True while an operation of the layer is moving data.
bool anyInFlight();
/// Advances every operation in flight; never blocks.
void progress();

/// The progress thread (ProgressThread.cpp): started at initialization when
/// DDTC_MPI_PROGRESS allows it and the MPI library provides
/// MPI_THREAD_MULTIPLE, stopped at MPI_Finalize; woken by each operation
/// that starts; it progresses when no thread has (markProgress) for a while.
void startProgressThread();
void stopProgressThread();
void wakeProgressThread();
void markProgress();
bool progressThreadRunning();
/// For a request of the layer: starts it (persistent ones) and returns true;
/// false for other requests.
bool startRequest(MPI_Request *request, int &rc);
/// The operation a request of the user's stands for (null for other
/// requests). Taken before the request is completed: once PMPI has freed a
/// handle, another thread may get the same value for a new request.
struct Operation;
using OpRef = std::shared_ptr<Operation>;
OpRef lookupRequest(MPI_Request request);
/// After PMPI completed the request of `op` (null: not the layer's): writes
/// the operation's status over `status` (which may be MPI_STATUS_IGNORE) and
/// returns its error code (MPI_SUCCESS for requests not of the layer).
int finishRequest(const OpRef &op, bool persistentKept, MPI_Status *status);
/// MPI_Request_free / MPI_Cancel of a layer request.
bool freeRequest(MPI_Request request);
bool cancelRequest(MPI_Request request, int &rc);
/// For MPI_Request_get_status of a completed layer request `op` (which
/// stays active): writes the status its Wait or Test will give, when the
/// layer knows it already (a device transfer); false otherwise.
bool peekStatus(const Operation &op, MPI_Status *status);

//===--- Staging for collectives and fallbacks ----------------------------===//

/// A host copy of the bytes `count` instances of `type` at `buf` touch.
class StagedBuffer {
public:
  /// Copies the device bytes in when `copyIn`; `host()` then stands for buf.
  StagedBuffer(const void *buf, int64_t count, MPI_Datatype type, bool copyIn);
  /// Same, for a span given in bytes relative to buf (v/w collectives).
  StagedBuffer(const void *buf, int64_t first, int64_t span, bool copyIn);
  ~StagedBuffer();
  StagedBuffer(const StagedBuffer &) = delete;
  StagedBuffer &operator=(const StagedBuffer &) = delete;
  void *host() const { return origin; }
  bool ok() const { return good; }
  /// Copies the host bytes back to the device buffer.
  bool copyOut();

private:
  void init(const void *buf, int64_t first, int64_t span, bool copyIn);
  void *device = nullptr;
  char *storage = nullptr;
  void *origin = nullptr;
  int64_t first = 0, span = 0;
  bool good = true;
};

//===--- The pipelined protocol's communicators and notes -----------------===//

/// The layer's private duplicates of a user communicator.
struct CommPair {
  MPI_Comm notes = MPI_COMM_NULL; ///< notes, with the user's tags
  MPI_Comm data = MPI_COMM_NULL;  ///< answers and fragments, tagged by id
  /// The MPI_COMM_WORLD rank of each peer rank (of the remote group for an
  /// intercommunicator); empty for MPI_COMM_WORLD itself.
  std::vector<int> world;
  int worldOf(int rank) const {
    return world.empty()                                        ? rank
           : rank >= 0 && rank < static_cast<int>(world.size()) ? world[rank]
                                                                : -1;
  }
};

/// What follows a zero-byte message on a communicator with a pair.
struct Note {
  static constexpr uint32_t kMagic = 0x64647463; // "ddtc"
  /// Pipelined: fragments through host memory. Ipc: through CUDA IPC, from
  /// `ref` (the sender's ring, or its buffer in place).
  enum Kind : uint32_t { Empty = 0, Pipelined = 1, Ipc = 2 };
  uint32_t magic = kMagic;
  uint32_t kind = Empty;
  int64_t bytes = 0;         ///< packed bytes of the message
  int32_t id = 0;            ///< the tag of its answer and fragments
  int32_t fragment = 0;      ///< the largest fragment (the sender's choice)
  int32_t firstFragment = 0; ///< the first one (0: all of `fragment`)
  IpcRef ref;                ///< for Ipc
  /// For Ipc from a ring: the sender's flag words (FlagPair) and this
  /// transfer's epoch; epoch 0: the host orders the fragments.
  IpcRef flags;
  uint64_t epoch = 0;
  /// For Ipc in place of a type that is not one run (DDTC_MPI_IPC_READ=pull):
  /// the sender's type (TypeInfo::serial), its count and true lower bound
  /// (`ref` names the bytes from there), and the length of its spec
  /// expression, sent next with the fragments tag (0: the receiver has it).
  uint64_t typeSerial = 0;
  int64_t count = 0;
  int64_t trueLb = 0;
  int32_t specBytes = 0;
};

/// The receiver's answer to a pipelined note.
struct Answer {
  enum Go : int32_t {
    Refuse = 0,    ///< the receive is too small: nothing is sent
    HostFrags = 1, ///< fragments through host memory as MPI messages
    IpcRead = 2,   ///< the receiver reads the sender's ring or buffer
    IpcWrite = 3,  ///< the sender writes into `ref` (the receive buffer)
    IpcPush = 4    ///< the sender writes fragments into `ref`'s ring slots
  };
  int32_t go = Refuse;
  /// With HostFrags to an IPC note: the receiver could not map the
  /// sender's memory (a device receiver; a host one never tries).
  int32_t ipcFailed = 0;
  /// With IpcRead of a ring: the receiver's streams wait on and write the
  /// note's flag words (otherwise the host orders the fragments).
  int32_t streamSync = 0;
  /// With IpcRead of a pulled message: the receiver keeps the note's type
  /// (the sender sends its spec no more). With HostFrags: the receiver does
  /// not know the note's type (it dropped it), the next note must carry it.
  int32_t typeKept = 0;
  int32_t typeUnknown = 0;
  /// With HostFrags to a note of a buffer read in place (one fragment of
  /// the whole message): the host pipeline's fragments the receiver chose
  /// instead (hostSchedule); 0: the note's.
  int32_t hostFragment = 0;
  int32_t hostFirstFragment = 0;
  IpcRef ref;
  /// The GPU of the receive buffer (gpuOf; 0: host memory or unknown), so
  /// that the sender knows where this peer's receives are
  /// (DDTC_MPI_IPC_READ=auto).
  uint64_t gpu = 0;
};

void initComms();
void finalizeComms();
/// The pair of `comm`, or null (pipelining not possible on it).
const CommPair *commPair(MPI_Comm comm);
/// After a zero-byte message of the user's to `dest` on a comm with a pair.
void sendEmptyNote(const CommPair &pair, int dest, int tag);
/// The note of the zero-byte message just matched from (source, tag);
/// false when what arrived is not a note.
bool takeNote(const CommPair &pair, int source, int tag, Note &note);
/// The note of the next zero-byte message from (source, tag), kept for the
/// receive (probes).
bool peekNote(const CommPair &pair, int source, int tag, Note &note);

/// MPI_ERR_* after calling the communicator's error handler, as MPI does.
int raise(MPI_Comm comm, int code, const char *what);

/// The layer's private duplicate of MPI_COMM_SELF (completion messages).
MPI_Comm selfComm();

/// True after MPI_Init when device buffers are handled.
bool active();

/// Whether a (buf, count, type) argument is in device memory and so is the
/// layer's to move. MPI_BOTTOM buffers are classified at their first byte.
bool onDevice(const void *buf, int64_t count, MPI_Datatype type);

} // namespace ddtc::mpi

#endif // DDTC_MPI_LAYER_H
