//===- DeviceDriver.h - The CUDA driver as the layer uses it ----*- C++ -*-===//
//
// For the files of the layer that call the driver themselves
// (DeviceMemory.cpp, IpcMemory.cpp).
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_DEVICEDRIVER_H
#define DDTC_MPI_DEVICEDRIVER_H

#include "Layer.h"

#include "CUDADriver.h"

namespace ddtc::mpi {

/// The runtime's driver, or null (no CUDA: every buffer is host memory).
const cu::DriverAPI *driver();
/// Makes the primary context of the device holding `address` (else device
/// 0) current on this thread, unless one is; false without a driver.
bool makeContextCurrent(const void *address);
/// The pools' rounding of sizes: the next power of two, at least a page.
size_t roundSize(size_t bytes);

} // namespace ddtc::mpi

#endif // DDTC_MPI_DEVICEDRIVER_H
