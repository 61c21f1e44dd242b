//===- BuiltinKernels.h - Generic kernels compiled with the library --*- C++ -*-===//
//
// The generic kernels (work-unit and nest) of every access width, compiled by NVRTC when the
// library is built (runtime/tools/ddtc-builtin-kernels writes
// BuiltinKernels.gen.cpp):
// PTX for a low virtual architecture, which the driver compiles for any
// newer GPU, and cubins for the architectures named at configure time;
// and, as cubins for those architectures, the specialized kernels of the
// strided shapes that vectors and subarrays of the basic types plan to, so
// that their first commit does not wait for NVRTC (KernelCache::prepare).
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_BUILTINKERNELS_H
#define DDTC_RUNTIME_BUILTINKERNELS_H

#include <cstddef>
#include <string>

namespace ddtc::rt {

struct BuiltinKernel {
  const char *shape; ///< kernelShapeKey (units.w8, strided...) or nestShapeKey
  int width;
  bool ptx; ///< PTX (NUL-terminated) or a cubin
  int arch; ///< compute_XX of the PTX, sm_XX of the cubin
  const unsigned char *data;
  size_t size; ///< bytes of data (PTX: with its NUL)
};

extern const BuiltinKernel kBuiltinKernels[];
extern const size_t kNumBuiltinKernels;
/// How the table was built: the NVRTC version, or why it is empty.
extern const char *const kBuiltinKernelsNote;

/// The cubin of `shape` for exactly sm_`arch`, or null.
const BuiltinKernel *findBuiltinCubin(const std::string &shape, int arch);

/// What runs the generic kernel of `shape` on a GPU of sm_`arch`: the cubin
/// for that architecture, else PTX of an architecture not above it; null
/// when there is none.
const BuiltinKernel *findBuiltinGeneric(const std::string &shape, int arch);

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_BUILTINKERNELS_H
