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
          CUDA_SUCCESS &&
      api.cuEventCreate(&hs.done, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS;
  for (int s = 0; ok && s < hs.kSlots; ++s)
    ok = api.cuEventCreate(&hs.packed[s], CU_EVENT_DISABLE_TIMING) ==
             CUDA_SUCCESS &&
         api.cuEventCreate(&hs.copied[s], CU_EVENT_DISABLE_TIMING) ==
             CUDA_SUCCESS;
  if (!ok) {
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
  int slot = 0;
  for (int64_t from = lo; from < hi;
       from += chunk, slot = (slot + 1) % hs.kSlots) {
    int64_t to = std::min(hi, from + chunk);
    CUdeviceptr at = hs.ring + static_cast<CUdeviceptr>(slot * hs.slotBytes) +
                     static_cast<CUdeviceptr>(from % 16);
    CUresult rc;
    if (hs.copiedRecorded[slot] &&
        (rc = api.cuStreamWaitEvent(stream, hs.copied[slot], 0)) !=
            CUDA_SUCCESS)
      return driverError(api, "cuStreamWaitEvent", rc);
    if (Status s = packInto(from, to, at); !s.ok())
      return s;
    if ((rc = api.cuEventRecord(hs.packed[slot], stream)) != CUDA_SUCCESS)
      return driverError(api, "cuEventRecord", rc);
    if ((rc = api.cuStreamWaitEvent(hs.copyStream, hs.packed[slot], 0)) !=
        CUDA_SUCCESS)
      return driverError(api, "cuStreamWaitEvent", rc);
    if ((rc = api.cuMemcpyDtoHAsync(host + (from - lo), at,
                                    static_cast<size_t>(to - from),
                                    hs.copyStream)) != CUDA_SUCCESS)
      return driverError(api, "cuMemcpyDtoHAsync", rc);
    if ((rc = api.cuEventRecord(hs.copied[slot], hs.copyStream)) !=
        CUDA_SUCCESS)
      return driverError(api, "cuEventRecord", rc);
    hs.copiedRecorded[slot] = true;
  }
  CUresult rc = api.cuEventRecord(hs.done, hs.copyStream);
  if (rc == CUDA_SUCCESS)
    rc = api.cuStreamWaitEvent(stream, hs.done, 0);
  return rc == CUDA_SUCCESS ? Status::success()
                            : driverError(api, "cuEventRecord", rc);
}

} // namespace ddtc::rt
