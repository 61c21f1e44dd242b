//===- Explain.h - How the kernels of a type were planned -------*- C++ -*-===//
//
// The text of ddtc --emit=explain: the plan in words and the memory traffic
// the kernels cause, for readers deciding whether a layout suits the GPU.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_EXPLAIN_H
#define DDTC_TARGET_CUDA_EXPLAIN_H

#include "ddtc/Core/KernelPlan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ddtc {

/// How `plan`, the kernel plan of `type` (named `name`), moves it: the
/// canonical layout, what each planning pass did, the kernel family, width
/// and threads, the launch and the memory traffic for `count` instances
/// (reads counted in 32-byte sectors). `count` instances must fit in 64-bit
/// byte offsets.
std::string explainKernels(const std::string &name, const Datatype &type,
                           const KernelPlan &plan, int64_t count);

/// The number of distinct aligned 32-byte sectors that `runs` touch.
int64_t countSectors(std::vector<Run> runs);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_EXPLAIN_H
