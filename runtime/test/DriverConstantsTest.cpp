//===- DriverConstantsTest.cpp - CUDADriver.h agrees with cuda.h ----------===//
//
// The runtime declares the few CUDA driver constants it uses itself (it must
// build and load without CUDA); where the toolkit's cuda.h is at hand, this
// checks them against it at compile time.
//===----------------------------------------------------------------------===//

#include "TestHarness.h"

#include "CUDADriver.h"

#include <cstddef>

#if defined(DDTC_HAVE_CUDA_H) && __has_include(<cuda.h>)
#include <cuda.h>
#define DDTC_CHECKED_AGAINST_CUDA_H 1
namespace c = ddtc::cu;
static_assert(c::CUDA_SUCCESS == CUDA_SUCCESS);
static_assert(c::CUDA_ERROR_INVALID_VALUE == CUDA_ERROR_INVALID_VALUE);
static_assert(c::CUDA_ERROR_OUT_OF_MEMORY == CUDA_ERROR_OUT_OF_MEMORY);
static_assert(c::CUDA_ERROR_NOT_INITIALIZED == CUDA_ERROR_NOT_INITIALIZED);
static_assert(c::CUDA_ERROR_DEINITIALIZED == CUDA_ERROR_DEINITIALIZED);
static_assert(c::CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE);
static_assert(c::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ==
              CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(c::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY ==
              CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
static_assert(c::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING ==
              CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
static_assert(c::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID ==
              CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
static_assert(c::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID ==
              CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
static_assert(c::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID ==
              CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
static_assert(c::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ==
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(c::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ==
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(c::CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS ==
              CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS);
static_assert(c::CU_STREAM_WAIT_VALUE_GEQ == CU_STREAM_WAIT_VALUE_GEQ);
static_assert(c::CU_STREAM_WRITE_VALUE_DEFAULT == CU_STREAM_WRITE_VALUE_DEFAULT);
static_assert(c::CU_POINTER_ATTRIBUTE_CONTEXT == CU_POINTER_ATTRIBUTE_CONTEXT);
static_assert(c::CU_POINTER_ATTRIBUTE_MEMORY_TYPE ==
              CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
static_assert(c::CU_POINTER_ATTRIBUTE_DEVICE_POINTER ==
              CU_POINTER_ATTRIBUTE_DEVICE_POINTER);
static_assert(c::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL ==
              CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
static_assert(c::CU_POINTER_ATTRIBUTE_BUFFER_ID ==
              CU_POINTER_ATTRIBUTE_BUFFER_ID);
static_assert(c::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR ==
              CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
static_assert(sizeof(c::CUipcMemHandle) == sizeof(CUipcMemHandle));
static_assert(sizeof(c::CUDA_MEMCPY2D) == sizeof(CUDA_MEMCPY2D));
static_assert(offsetof(c::CUDA_MEMCPY2D, srcDevice) ==
              offsetof(CUDA_MEMCPY2D, srcDevice));
static_assert(offsetof(c::CUDA_MEMCPY2D, dstMemoryType) ==
              offsetof(CUDA_MEMCPY2D, dstMemoryType));
static_assert(offsetof(c::CUDA_MEMCPY2D, dstPitch) ==
              offsetof(CUDA_MEMCPY2D, dstPitch));
static_assert(offsetof(c::CUDA_MEMCPY2D, Height) ==
              offsetof(CUDA_MEMCPY2D, Height));
static_assert(sizeof(c::CUDA_MEMCPY3D) == sizeof(CUDA_MEMCPY3D));
static_assert(offsetof(c::CUDA_MEMCPY3D, srcMemoryType) ==
              offsetof(CUDA_MEMCPY3D, srcMemoryType));
static_assert(offsetof(c::CUDA_MEMCPY3D, srcDevice) ==
              offsetof(CUDA_MEMCPY3D, srcDevice));
static_assert(offsetof(c::CUDA_MEMCPY3D, srcHeight) ==
              offsetof(CUDA_MEMCPY3D, srcHeight));
static_assert(offsetof(c::CUDA_MEMCPY3D, dstMemoryType) ==
              offsetof(CUDA_MEMCPY3D, dstMemoryType));
static_assert(offsetof(c::CUDA_MEMCPY3D, dstDevice) ==
              offsetof(CUDA_MEMCPY3D, dstDevice));
static_assert(offsetof(c::CUDA_MEMCPY3D, dstHeight) ==
              offsetof(CUDA_MEMCPY3D, dstHeight));
static_assert(offsetof(c::CUDA_MEMCPY3D, WidthInBytes) ==
              offsetof(CUDA_MEMCPY3D, WidthInBytes));
static_assert(offsetof(c::CUDA_MEMCPY3D, Depth) ==
              offsetof(CUDA_MEMCPY3D, Depth));
static_assert(c::CU_POINTER_ATTRIBUTE_RANGE_SIZE ==
              CU_POINTER_ATTRIBUTE_RANGE_SIZE);
static_assert(c::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS ==
              CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
static_assert(c::CU_MEMORYTYPE_HOST == CU_MEMORYTYPE_HOST);
static_assert(c::CU_MEMORYTYPE_DEVICE == CU_MEMORYTYPE_DEVICE);
static_assert(c::CU_MEMORYTYPE_ARRAY == CU_MEMORYTYPE_ARRAY);
static_assert(c::CU_MEMORYTYPE_UNIFIED == CU_MEMORYTYPE_UNIFIED);
static_assert(c::CU_STREAM_NON_BLOCKING == CU_STREAM_NON_BLOCKING);
// cuda.h defines these two as macros, which would rename ours.
constexpr unsigned kPortable = CU_MEMHOSTALLOC_PORTABLE;
constexpr unsigned kDeviceMap = CU_MEMHOSTALLOC_DEVICEMAP;
#undef CU_MEMHOSTALLOC_PORTABLE
#undef CU_MEMHOSTALLOC_DEVICEMAP
constexpr size_t kIpcHandleSize = CU_IPC_HANDLE_SIZE;
#undef CU_IPC_HANDLE_SIZE
static_assert(c::CU_IPC_HANDLE_SIZE == kIpcHandleSize);
static_assert(c::CU_MEMHOSTALLOC_PORTABLE == kPortable);
static_assert(c::CU_MEMHOSTALLOC_DEVICEMAP == kDeviceMap);
static_assert(c::CU_EVENT_DEFAULT == CU_EVENT_DEFAULT);
static_assert(sizeof(c::CUdeviceptr) == sizeof(CUdeviceptr));
static_assert(sizeof(c::CUdevice) == sizeof(CUdevice));
static_assert(sizeof(CUmemorytype) == sizeof(unsigned));
#endif

DDTC_TEST("driver-constants", driverConstants) {
#ifdef DDTC_CHECKED_AGAINST_CUDA_H
  std::printf("the driver constants agree with cuda.h (CUDA %d)\n",
              CUDA_VERSION);
  return ddtc::test::kPass;
#else
  SKIP("cuda.h was not found at build time; the constants are unchecked");
#endif
}
