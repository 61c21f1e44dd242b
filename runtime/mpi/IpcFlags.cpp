//===- IpcFlags.cpp - Flag words the IPC pipeline's streams share ---------===//
//
// With the flags, the two ranks of an IPC transfer order its fragments on
// the GPUs: the sender's stream writes "k fragments packed" after the k-th
// pack, the receiver's stream waits for it before it reads the slot and
// writes "k fragments read" after, and the sender's stream waits for that
// before it packs into the slot again. The hosts still say which slot holds
// what, but as soon as the work is queued, not when it has run: no fragment
// waits for a host to see an event and answer.
//
// A stream that waits for a word holds up the work queued behind it (on its
// stream, and on a hardware queue it may share with other streams), so a
// wait is queued only once the write it waits for has been queued on the
// other side: every chain of waits then goes back in time and ends.
//
// Each device context gets one block of kPairs pairs, zeroed when made and
// exported once. Epochs grow for the life of the process, so a word written
// by an earlier transfer is below anything a later one waits for; a pair is
// handed out again only once the stream work queued before its release has
// run, so that a late write cannot land in its next transfer.
//===----------------------------------------------------------------------===//

#include "DeviceDriver.h"

#include <atomic>
#include <deque>
#include <mutex>
#include <vector>

namespace ddtc::mpi {
namespace {

constexpr size_t kPairs = 1024;
constexpr size_t kPairBytes = 64; // a pair to a 64-byte line of its own

struct Released {
  uint64_t *words;
  void *event; ///< the releasing stream's work so far (null: none)
};

struct FlagBlock {
  cu::CUcontext ctx = nullptr;
  char *base = nullptr;
  IpcRef ref; ///< the block's export (offset 0)
  std::vector<uint64_t *> free;
  std::deque<Released> cooling;
};

std::mutex flagMutex;
std::vector<FlagBlock> blocks; // one per context
std::atomic<uint64_t> epochs{0};

/// Whether the current context's device offers 64-bit stream memory
/// operations (asked once per context).
bool streamMemOps(const cu::DriverAPI &api, cu::CUcontext ctx) {
  static std::mutex m;
  static std::vector<std::pair<cu::CUcontext, bool>> known;
  std::lock_guard<std::mutex> lock(m);
  for (auto &[c, ok] : known)
    if (c == ctx)
      return ok;
  cu::CUdevice dev = 0;
  int v = 0;
  bool ok = api.cuStreamWaitValue64 && api.cuStreamWriteValue64 &&
            api.cuCtxGetDevice && api.cuCtxGetDevice(&dev) == cu::CUDA_SUCCESS &&
            api.cuDeviceGetAttribute(
                &v, cu::CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
                dev) == cu::CUDA_SUCCESS &&
            v == 1;
  known.emplace_back(ctx, ok);
  note(2, "stream waits on flag words: %s", ok ? "yes" : "no");
  return ok;
}

/// The block of `ctx`, made (zeroed, exported) on first use; null when it
/// cannot be (flagMutex held).
FlagBlock *blockOf(const cu::DriverAPI &api, cu::CUcontext ctx) {
  for (FlagBlock &b : blocks)
    if (b.ctx == ctx)
      return &b;
  cu::CUdeviceptr p = 0;
  const size_t bytes = kPairs * kPairBytes;
  if (api.cuMemAlloc(&p, bytes) != cu::CUDA_SUCCESS)
    return nullptr;
  FlagBlock b;
  b.ctx = ctx;
  b.base = reinterpret_cast<char *>(p);
  if (api.cuMemsetD8(p, 0, bytes) != cu::CUDA_SUCCESS ||
      !exportDevice(b.base, b.ref)) {
    api.cuMemFree(p);
    return nullptr;
  }
  for (size_t i = kPairs; i-- > 0;)
    b.free.push_back(reinterpret_cast<uint64_t *>(b.base + i * kPairBytes));
  blocks.push_back(std::move(b));
  return &blocks.back();
}

/// The context of `near`'s device, made current, when its streams can wait
/// on memory; else null.
cu::CUcontext waitingContext(const cu::DriverAPI &api, const void *near) {
  cu::CUcontext ctx = nullptr;
  return makeContextCurrent(near) &&
                 api.cuCtxGetCurrent(&ctx) == cu::CUDA_SUCCESS && ctx &&
                 streamMemOps(api, ctx)
             ? ctx
             : nullptr;
}

} // namespace

bool streamWaitsUsable(const void *near) {
  const cu::DriverAPI *api = driver();
  return api && waitingContext(*api, near);
}

bool flagsAcquire(const void *near, FlagPair &f) {
  const cu::DriverAPI *api = driver();
  cu::CUcontext ctx = api && haveIpc() ? waitingContext(*api, near) : nullptr;
  if (!ctx)
    return false;
  std::lock_guard<std::mutex> lock(flagMutex);
  FlagBlock *b = blockOf(*api, ctx);
  if (!b)
    return false;
  while (!b->cooling.empty() &&
         (!b->cooling.front().event || eventDone(b->cooling.front().event))) {
    releaseEvent(b->cooling.front().event);
    b->free.push_back(b->cooling.front().words);
    b->cooling.pop_front();
  }
  if (b->free.empty())
    return false; // that many transfers in flight: the host orders this one
  f.words = b->free.back();
  b->free.pop_back();
  f.ref = b->ref;
  f.ref.offset = static_cast<uint64_t>(reinterpret_cast<char *>(f.words) -
                                       b->base);
  f.lost = false;
  return true;
}

void flagsRelease(FlagPair &f, void *stream) {
  if (!f.words)
    return;
  if (!f.lost) {
    void *event = stream ? recordEvent(stream) : nullptr;
    std::lock_guard<std::mutex> lock(flagMutex);
    for (FlagBlock &b : blocks)
      if (reinterpret_cast<char *>(f.words) >= b.base &&
          reinterpret_cast<char *>(f.words) < b.base + kPairs * kPairBytes)
        b.cooling.push_back({f.words, event});
  }
  f = FlagPair{};
}

void flagsTrim() {
  const cu::DriverAPI *api = driver();
  std::lock_guard<std::mutex> lock(flagMutex);
  for (FlagBlock &b : blocks) {
    for (Released &r : b.cooling)
      releaseEvent(r.event);
    if (api)
      api->cuMemFree(reinterpret_cast<cu::CUdeviceptr>(b.base));
  }
  blocks.clear();
}

uint64_t nextEpoch() { return (epochs.fetch_add(1) + 1) << 32; }

bool streamWaitWord(void *stream, const uint64_t *word, uint64_t value) {
  const cu::DriverAPI *api = driver();
  return api && api->cuStreamWaitValue64 &&
         api->cuStreamWaitValue64(static_cast<cu::CUstream>(stream),
                                  reinterpret_cast<cu::CUdeviceptr>(word),
                                  value, cu::CU_STREAM_WAIT_VALUE_GEQ) ==
             cu::CUDA_SUCCESS;
}

bool streamWriteWord(void *stream, uint64_t *word, uint64_t value) {
  const cu::DriverAPI *api = driver();
  return api && api->cuStreamWriteValue64 &&
         api->cuStreamWriteValue64(static_cast<cu::CUstream>(stream),
                                   reinterpret_cast<cu::CUdeviceptr>(word),
                                   value, cu::CU_STREAM_WRITE_VALUE_DEFAULT) ==
             cu::CUDA_SUCCESS;
}

bool forceWord(const void *near, uint64_t *word, uint64_t value) {
  // On a stream of its own that waits for nothing (a synchronous copy would
  // wait for the legacy stream, and that for the blocked ones).
  const cu::DriverAPI *api = driver();
  if (!api || !makeContextCurrent(near))
    return false;
  static thread_local cu::CUstream side = nullptr;
  if (!side && api->cuStreamCreate(&side, cu::CU_STREAM_NON_BLOCKING) !=
                   cu::CUDA_SUCCESS)
    return false;
  return streamWriteWord(side, word, value) &&
         api->cuStreamSynchronize(side) == cu::CUDA_SUCCESS;
}

} // namespace ddtc::mpi
