//===- HostStaging.cpp - Packs into host memory through the device --------===//

#include "HostStaging.h"

#include "Config.h"

#include <algorithm>

namespace ddtc::rt {

using namespace cu;

namespace {

/// Slots start at multiples of 256 bytes, and a chunk is placed at its
/// stream offset modulo 16 inside its slot, so the kernel's 16-byte chunks
/// stay aligned as in one pack.
constexpr int64_t kSlotAlign = 256;

Status driverError(const DriverAPI &api, const char *call, CUresult rc) {
  return Status::error(DDTC_ERROR_CUDA,
                       "ddtc_pack (into host memory through the device): " +
                           describeError(api, call, rc));
}

/// Releases what makeStaging made (for a failed attempt).
void dropStaging(const DriverAPI &api, DeviceContext::HostStaging &hs) {
  if (hs.ring)
    api.cuMemFree(hs.ring);
  if (hs.copyStream)
    api.cuStreamDestroy(hs.copyStream);
  for (int s = 0; s < hs.kSlots; ++s) {
    if (hs.packed[s])
      api.cuEventDestroy(hs.packed[s]);
    if (hs.copied[s])
      api.cuEventDestroy(hs.copied[s]);
    hs.packed[s] = hs.copied[s] = nullptr;
  }
  hs.ring = 0;
  hs.copyStream = nullptr;
}

/// Makes the ring, the copy stream and the events once; false (and nothing
/// kept) when any of them cannot be had.
bool makeStaging(const DriverAPI &api, DeviceContext::HostStaging &hs) {
  if (hs.tried)
    return hs.ready;
  hs.tried = true;
  hs.slotBytes = (config().hostStagingChunk + 16 + kSlotAlign - 1) /
                 kSlotAlign * kSlotAlign;
  bool ok =
      api.cuMemAlloc(&hs.ring, static_cast<size_t>(hs.slotBytes * hs.kSlots)) ==
          CUDA_SUCCESS &&
      api.cuStreamCreate(&hs.copyStream, CU_STREAM_NON_BLOCKING) ==
          CUDA_SUCCESS;
  for (int s = 0; ok && s < hs.kSlots; ++s)
    ok = api.cuEventCreate(&hs.packed[s], CU_EVENT_DISABLE_TIMING) ==
             CUDA_SUCCESS &&
         api.cuEventCreate(&hs.copied[s], CU_EVENT_DISABLE_TIMING) ==
             CUDA_SUCCESS;
  if (!ok) {
    dropStaging(api, hs);
    logVerbose("packs into host memory write it from the kernel: no device "
               "memory or stream for staging");
    return false;
  }
  hs.ready = true;
  logVerbose("packs into host memory of " +
             std::to_string(config().hostStagingMin) +
             " bytes or more go through the device, " +
             std::to_string(config().hostStagingChunk) + " bytes a step");
  return true;
}

} // namespace

bool stagesHostPack(int64_t bytes, unsigned memoryType) {
  int64_t min = config().hostStagingMin;
  return memoryType == CU_MEMORYTYPE_HOST && min > 0 && bytes >= min;
}

Status packThroughDevice(const DriverAPI &api, DeviceContext &dc, int64_t lo,
                         int64_t hi, void *hostPacked, CUstream stream,
                         const PackInto &packInto, bool &staged) {
  DeviceContext::HostStaging &hs = dc.staging;
  // One pack at a time per context uses the ring; the GPU orders the slots'
  // reuse (the next pack into a slot waits for the copy out of it).
  std::lock_guard<std::mutex> lock(hs.m);
  staged = makeStaging(api, hs);
  if (!staged)
    return Status::success();
  const int64_t chunk = config().hostStagingChunk;
  auto *host = static_cast<unsigned char *>(hostPacked);
  CUresult rc = CUDA_SUCCESS;
  const char *call = nullptr;
  // Runs one driver call, naming it for the error; false once one failed.
  auto ok = [&](const char *name, CUresult r) {
    call = name;
    rc = r;
    return r == CUDA_SUCCESS;
  };
  int slot = 0;
  for (int64_t from = lo; from < hi;
       from += chunk, slot = (slot + 1) % hs.kSlots) {
    int64_t to = std::min(hi, from + chunk);
    CUdeviceptr at = hs.ring + static_cast<CUdeviceptr>(slot * hs.slotBytes) +
                     static_cast<CUdeviceptr>(from % 16);
    if (hs.copiedRecorded[slot] &&
        !ok("cuStreamWaitEvent",
            api.cuStreamWaitEvent(stream, hs.copied[slot], 0)))
      return driverError(api, call, rc);
    if (Status s = packInto(from, to, at); !s.ok())
      return s;
    if (!ok("cuEventRecord", api.cuEventRecord(hs.packed[slot], stream)) ||
        !ok("cuStreamWaitEvent",
            api.cuStreamWaitEvent(hs.copyStream, hs.packed[slot], 0)) ||
        !ok("cuMemcpyDtoHAsync",
            api.cuMemcpyDtoHAsync(host + (from - lo), at,
                                  static_cast<size_t>(to - from),
                                  hs.copyStream)) ||
        !ok("cuEventRecord", api.cuEventRecord(hs.copied[slot], hs.copyStream)))
      return driverError(api, call, rc);
    hs.copiedRecorded[slot] = true;
  }
  // The last copy's event: the caller's stream goes on once it is done (and
  // so every copy before it, in the copy stream's order).
  const int last = (slot + hs.kSlots - 1) % hs.kSlots;
  if (!ok("cuStreamWaitEvent",
          api.cuStreamWaitEvent(stream, hs.copied[last], 0)))
    return driverError(api, call, rc);
  return Status::success();
}

} // namespace ddtc::rt
