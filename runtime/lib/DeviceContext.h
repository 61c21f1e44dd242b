//===- DeviceContext.h - What ddtc keeps per CUDA context -------*- C++ -*-===//
//
// Modules are loaded once per CUDA context and kept until the process ends;
// each context also has a private stream for uploading work-unit tables.
// Contexts are recognised by handle and (where the driver has it) by
// cuCtxGetId, so a new context at a freed one's address is not mistaken for
// it.
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_DEVICECONTEXT_H
#define DDTC_RUNTIME_DEVICECONTEXT_H

#include "CUDADriver.h"
#include "Status.h"

#include "ddtc/Core/KernelPlan.h"

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ddtc::rt {

struct LoadedModule {
  /// The unpack kernel's module is `module` unless it was compiled apart.
  cu::CUmodule module = nullptr, unpackModule = nullptr;
  cu::CUfunction pack = nullptr, unpack = nullptr;
  /// The kernel between two layouts, in the modules that have one.
  cu::CUfunction copy = nullptr;
};

struct DeviceContext {
  cu::CUcontext ctx = nullptr;
  unsigned long long id = 0;
  cu::CUdevice device = 0;
  int arch = 0; ///< sm_XX
  int multiprocessors = 0;

  std::mutex m;
  /// Keyed by entry id (KernelEntry::id) or built-in kernel id; the map's
  /// nodes never move, so pointers to the values stay valid.
  std::unordered_map<uint64_t, LoadedModule> modules;
  /// The built-in units chunk kernels of widths 1, 2, 4, 8, 16, once loaded
  /// (packs into mapped host memory take them).
  const LoadedModule *chunkUnits[5] = {};
  /// The built-in nest kernels by width (index log2 of it) that ddtc_copy
  /// launched on this context, found without a look-up of the table.
  const LoadedModule *nestCopy[5] = {};
  /// The same for the built-in units kernels, whose copy kernel ddtc_copy
  /// runs between two buffers of one type map.
  const LoadedModule *unitsCopy[5] = {};
  cu::CUstream uploadStream = nullptr;

  /// Device memory and a copy stream for packs into host memory that go
  /// through the device (HostStaging.h), made at the first such pack.
  struct HostStaging {
    static constexpr int kSlots = 2;
    std::mutex m;
    bool tried = false, ready = false;
    cu::CUstream copyStream = nullptr;
    cu::CUdeviceptr ring = 0;
    int64_t slotBytes = 0; ///< the chunk, plus room to align it
    cu::CUevent packed[kSlots] = {}, copied[kSlots] = {};
    bool copiedRecorded[kSlots] = {};
  } staging;
};

/// The driver, or NO_DEVICE with the reason.
Status requireDriver(const cu::DriverAPI *&api);

/// The state of the calling thread's current context. Without one, the
/// primary context of the device holding `hint` (else device 0) is retained
/// and made current, as the CUDA runtime would.
Status currentContext(const cu::DriverAPI &api, const void *hint,
                      DeviceContext *&out);

/// The architecture of the current context's device, else of device 0;
/// 0 when there is no usable driver.
int deviceArch();

/// Loads `image` (a cubin, or NUL-terminated PTX) into `dc` once under
/// `id`, and finds its two kernels; or, with `unpackImage`, the pack kernel
/// in `image` and the unpack kernel in `unpackImage` (kernels compiled
/// apart). A module that holds a kernel named `copyName` keeps it too.
Status loadModule(const cu::DriverAPI &api, DeviceContext &dc, uint64_t id,
                  const void *image, const void *unpackImage,
                  const std::string &packName, const std::string &unpackName,
                  const LoadedModule *&out, const std::string &copyName = "");

/// Copies the work-unit table of a plan (its units, which lie in memory as
/// the table's words, then its unpackUnits) to new device memory of `dc`
/// (the call returns once the copy is complete).
Status uploadTable(const cu::DriverAPI &api, DeviceContext &dc,
                   const KernelPlan &plan, cu::CUdeviceptr &out);

/// Frees device memory of `dc` from any thread (pushes its context).
void freeDeviceMemory(const cu::DriverAPI &api, DeviceContext &dc,
                      cu::CUdeviceptr p);

/// Checks that `p` is memory the GPU can access; `what` names the buffer.
/// Sets `memoryType`, when given, to its CU_MEMORYTYPE_*.
Status checkDevicePointer(const cu::DriverAPI &api, const void *p,
                          const char *what, unsigned *memoryType = nullptr);

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_DEVICECONTEXT_H
