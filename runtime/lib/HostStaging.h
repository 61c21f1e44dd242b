//===- HostStaging.h - Packs into host memory through the device -*- C++
//-*-===//
//
// A kernel that writes packed bytes into mapped host memory is bound by the
// SMs' writes over the host link, which reach a little less than a copy
// engine does, and less still for a few megabytes. A large pack into host
// memory therefore packs a chunk at a time into device memory of the
// context (a ring of two slots) on the caller's stream, while a copy engine
// moves the previous chunk to the host on a stream of the runtime's own;
// the caller's stream then waits for the last copy, so the pack keeps the
// semantics of one kernel on that stream.
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_HOSTSTAGING_H
#define DDTC_RUNTIME_HOSTSTAGING_H

#include "DeviceContext.h"

#include <cstdint>
#include <functional>

namespace ddtc::rt {

/// Packs bytes [lo, hi) of the stream into device memory at `dst`, the
/// address of byte lo (one or more launches on the caller's stream).
using PackInto =
    std::function<Status(int64_t lo, int64_t hi, cu::CUdeviceptr dst)>;

/// Whether a pack of `bytes` into memory of `memoryType` (CU_MEMORYTYPE_*)
/// goes through device staging (DDTC_HOST_STAGING_MIN).
bool stagesHostPack(int64_t bytes, unsigned memoryType);

/// Packs [lo, hi) into host memory `hostPacked` (the address of byte lo)
/// through the staging ring of `dc`, the current context. Sets `staged` to
/// false, doing nothing, when the ring cannot be had (no device memory):
/// the caller then writes the host memory directly.
Status packThroughDevice(const cu::DriverAPI &api, DeviceContext &dc,
                         int64_t lo, int64_t hi, void *hostPacked,
                         cu::CUstream stream, const PackInto &packInto,
                         bool &staged);

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_HOSTSTAGING_H
