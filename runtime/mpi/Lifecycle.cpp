//===- Lifecycle.cpp - Init, Finalize, types, Pack/Unpack, staging --------===//
//
// The layer is active between MPI_Init and MPI_Finalize unless
// DDTC_MPI_DISABLE is set. Host and managed buffers cost one pointer query
// and go straight to the MPI library.
//===----------------------------------------------------------------------===//

#include "Layer.h"
#include "Profile.h"

#include <cstdlib>
#include <cstring>

using namespace ddtc::mpi;

namespace {
std::atomic<bool> layerActive{false};
MPI_Comm privateSelf = MPI_COMM_NULL;

void startLayer() {
  if (settings().disabled) {
    note(1, "disabled by DDTC_MPI_DISABLE: every call goes to the MPI library");
    return;
  }
  initTypes();
  initComms();
  initPeers();
  PMPI_Comm_dup(MPI_COMM_SELF, &privateSelf);
  PMPI_Comm_set_name(privateSelf, const_cast<char *>("ddtc-mpi completions"));
  layerActive.store(true, std::memory_order_release);
  note(1,
       "active: protocol %s, eager limit %lld, fragments %lld (first %lld "
       "through host memory), depth %d",
       protocolName(settings().protocol),
       static_cast<long long>(settings().eagerLimit),
       static_cast<long long>(settings().fragment),
       static_cast<long long>(settings().fragmentMinSet ? settings().fragmentMin
                                                        : settings().fragment),
       settings().depth);
}

/// Initializes the MPI library and starts the layer. The progress thread
/// calls the library while the application's threads may be inside it, so
/// the layer asks for MPI_THREAD_MULTIPLE; the application is told the level
/// the library provides, which is never below what it asked for unless the
/// library cannot give that either. Where MULTIPLE is not provided there is
/// no progress thread (docs/MPI.md says what that costs).
int initLayer(int *argc, char ***argv, int required, int *provided) {
  bool helper = !settings().disabled && settings().progressThread;
  int level = helper ? MPI_THREAD_MULTIPLE : required;
  int rc = PMPI_Init_thread(argc, argv, level, provided);
  if (rc != MPI_SUCCESS)
    return rc;
  startLayer();
  if (!active() || !helper)
    return rc;
  if (*provided == MPI_THREAD_MULTIPLE)
    startProgressThread();
  else
    note(1,
         "no progress thread: the MPI library provides thread level %d, not "
         "MPI_THREAD_MULTIPLE",
         *provided);
  return rc;
}
} // namespace

namespace ddtc::mpi {

bool active() { return layerActive.load(std::memory_order_acquire); }

MPI_Comm selfComm() { return privateSelf; }

bool onDevice(const void *buf, int64_t count, MPI_Datatype type) {
  if (count <= 0 || !active() || type == MPI_DATATYPE_NULL)
    return false;
  // The first byte the type touches: `buf` itself may lie outside the
  // allocation (a positive lower bound), or be MPI_BOTTOM.
  MPI_Count trueLb = 0, trueExtent = 0;
  PMPI_Type_get_true_extent_x(type, &trueLb, &trueExtent);
  if (trueExtent == 0)
    return false;
  return isDeviceBuffer(static_cast<const char *>(buf) + trueLb);
}

int raise(MPI_Comm comm, int code, const char *what) {
  note(1, "error %d: %s", code, what);
  if (comm == MPI_COMM_NULL)
    comm = MPI_COMM_WORLD;
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

StagedBuffer::StagedBuffer(const void *buf, int64_t count, MPI_Datatype type,
                           bool copyIn) {
  TypeInfo *info = acquireType(type);
  int64_t f = 0, s = 0;
  typeSpan(*info, count, f, s);
  releaseType(info);
  init(buf, f, s, copyIn);
}

StagedBuffer::StagedBuffer(const void *buf, int64_t f, int64_t s, bool copyIn) {
  init(buf, f, s, copyIn);
}

static std::atomic<long long> stagedBuffers{0};

void StagedBuffer::init(const void *buf, int64_t f, int64_t s, bool copyIn) {
  stagedBuffers.fetch_add(1, std::memory_order_relaxed);
  first = f;
  span = s;
  device = const_cast<void *>(buf);
  storage = static_cast<char *>(std::malloc(static_cast<size_t>(s) + 1));
  if (!storage) {
    good = false;
    return;
  }
  origin = storage - first;
  if (copyIn && s > 0)
    good = copyToHost(storage, static_cast<char *>(device) + first,
                      static_cast<size_t>(s));
}

bool StagedBuffer::copyOut() {
  return span == 0 || copyToDevice(static_cast<char *>(device) + first, storage,
                                   static_cast<size_t>(span));
}

StagedBuffer::~StagedBuffer() { std::free(storage); }

} // namespace ddtc::mpi

extern "C" {

/// For tests: device-buffer operations started since MPI_Init.
__attribute__((visibility("default"))) long long
ddtc_mpi_device_operations(void) {
  return deviceOperations();
}

/// For tests: messages received through CUDA IPC, and peers dropped to host
/// memory after an IPC failure, since MPI_Init.
__attribute__((visibility("default"))) long long ddtc_mpi_ipc_receives(void) {
  return ipcReceives();
}
__attribute__((visibility("default"))) long long ddtc_mpi_ipc_fallbacks(void) {
  return ipcFallbacks();
}
/// For tests: IPC messages whose receiver packed from the sender's buffer
/// (DDTC_MPI_IPC_READ=pull) since MPI_Init.
__attribute__((visibility("default"))) long long ddtc_mpi_ipc_pulls(void) {
  return ipcPulls();
}
/// For tests: pulled messages whose receiver moved each fragment from the
/// sender's buffer to its own in one kernel (ddtc_copy) since MPI_Init.
__attribute__((visibility("default"))) long long ddtc_mpi_ipc_fused(void) {
  return ipcFusedPulls();
}
/// For tests: pulled messages sent through host memory because the
/// receiver had dropped their type, since MPI_Init.
__attribute__((visibility("default"))) long long
ddtc_mpi_ipc_specs_resent(void) {
  return ipcSpecsResent();
}

/// For benchmarks: the model's one-way microseconds of a device message of
/// `bytes` packed bytes of `type` to world rank `peer` through CUDA IPC (in
/// the fragments it would choose; the type's kernel rates follow its layout:
/// TypeInfo::traffic), or -1 when that peer is not reached
/// through IPC. MPI_DATATYPE_NULL stands for a type whose pack reads only
/// its own bytes.
__attribute__((visibility("default"))) double
ddtc_mpi_predict_type_us(long long bytes, int peer, MPI_Datatype type) {
  if (!active() || !ipcPeer(peer) || bytes <= settings().eagerLimit)
    return -1;
  KernelTraffic traffic, pulledTraffic;
  bool contiguous = false, pulled = false;
  if (type != MPI_DATATYPE_NULL) {
    TypeInfo *info = acquirePlannedType(type);
    traffic = info->traffic;
    contiguous = info->size > 0 && contiguousFor(*info, bytes / info->size);
    pulled = !contiguous && pullPredicted(*info, bytes);
    pulledTraffic = pullTraffic(*info, bytes);
    releaseType(info);
  }
  // A contiguous sender's buffer is read in place (IpcPipeline.cpp); a
  // pulled message is read by the receiver from the sender's buffer.
  if (contiguous)
    return predictInPlaceUs(inPlaceSchedule(bytes));
  if (pulled)
    return predictPullUs(pullSchedule(bytes), pulledTraffic);
  return predictIpcUs(ipcSchedule(bytes, traffic), traffic);
}

/// The same for a type that reads only its own bytes.
__attribute__((visibility("default"))) double
ddtc_mpi_predict_us(long long bytes, int peer) {
  return ddtc_mpi_predict_type_us(bytes, peer, MPI_DATATYPE_NULL);
}

/// For tests: device buffers staged through host memory (collectives,
/// staged types) since MPI_Init.
__attribute__((visibility("default"))) long long ddtc_mpi_staged_buffers(void) {
  return stagedBuffers.load();
}

/// For tests: eager sends packed on the host from a pinned copy of their
/// span (DDTC_MPI_HOST_PACK) since MPI_Init.
__attribute__((visibility("default"))) long long ddtc_mpi_host_packs(void) {
  return hostPacks();
}

/// For programs and tests: 1 when the layer handles device buffers.
__attribute__((visibility("default"))) int ddtc_mpi_active(void) {
  return active() ? 1 : 0;
}

__attribute__((visibility("default"))) int MPI_Init(int *argc, char ***argv) {
  int provided = MPI_THREAD_SINGLE;
  return initLayer(argc, argv, MPI_THREAD_SINGLE, &provided);
}

__attribute__((visibility("default"))) int
MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  return initLayer(argc, argv, required, provided);
}

__attribute__((visibility("default"))) int MPI_Finalize(void) {
  if (active()) {
    while (anyInFlight())
      progress();
    stopProgressThread();
    printProfile();
    layerActive.store(false, std::memory_order_release);
    finalizeComms();
    PMPI_Comm_free(&privateSelf);
    trimPeers();
    flagsTrim();
    pinnedTrim();
    trimEvents();
    clearPeerTypes();
    // Kernels still compiling in the background are waited for and the
    // compiler threads stopped before the MPI library goes away.
    ddtc_finalize();
  }
  return PMPI_Finalize();
}

__attribute__((visibility("default"))) int
MPI_Type_commit(MPI_Datatype *datatype) {
  int rc = PMPI_Type_commit(datatype);
  if (rc == MPI_SUCCESS && active())
    commitType(*datatype); // never fails the commit
  return rc;
}

__attribute__((visibility("default"))) int
MPI_Type_free(MPI_Datatype *datatype) {
  // The attribute's delete callback drops the layer's reference; operations
  // in flight keep theirs.
  return PMPI_Type_free(datatype);
}

} // extern "C"
