//===- BuiltinKernels.cpp - Looking up the generic kernels ----------------===//

#include "BuiltinKernels.h"

namespace ddtc::rt {

const BuiltinKernel *findBuiltinCubin(const std::string &shape, int arch) {
  for (size_t i = 0; i < kNumBuiltinKernels; ++i) {
    const BuiltinKernel &k = kBuiltinKernels[i];
    if (!k.ptx && k.arch == arch && shape == k.shape)
      return &k;
  }
  return nullptr;
}

const BuiltinKernel *findBuiltinGeneric(const std::string &shape, int arch) {
  const BuiltinKernel *best = nullptr;
  for (size_t i = 0; i < kNumBuiltinKernels; ++i) {
    const BuiltinKernel &k = kBuiltinKernels[i];
    if (shape != k.shape)
      continue;
    if (!k.ptx && k.arch == arch)
      return &k;
    if (k.ptx && k.arch <= arch && (!best || k.arch > best->arch))
      best = &k;
  }
  return best;
}

} // namespace ddtc::rt
