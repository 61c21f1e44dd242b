//===- EmulatedKernels.h - The generic kernels, run on the CPU --*- C++ -*-===//
//
// The fuzzer runs libddtc's generic (work-unit) kernels, compiled into it
// through CPUEmulation.h, on small mutated types and compares what they pack
// and unpack with the reference.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_FUZZ_EMULATEDKERNELS_H
#define DDTC_TOOLS_DDTC_FUZZ_EMULATEDKERNELS_H

#include "ddtc/Core/Datatype.h"

#include <random>
#include <string>

namespace ddtc::fuzz {

/// Packs and unpacks `count` instances of `type` (a whole range, a random
/// one, a capped grid) with its generic kernel; returns what differs from
/// the reference, or an empty string. Types whose buffers exceed 1 MiB are
/// skipped (empty string).
std::string checkGenericKernels(const Datatype &type, int64_t count,
                                std::mt19937_64 &rng);

} // namespace ddtc::fuzz

#endif // DDTC_TOOLS_DDTC_FUZZ_EMULATEDKERNELS_H
