//===- EmulatedGenericKernels.h - Generic kernels on the CPU ----*- C++ -*-===//
//
// Launches libddtc's generic kernels (the work-unit kernels and the nest
// kernels, one of each per access width) on the CPU, for the programs that
// compile their source in through CPUEmulation.h: the kernel of the width
// is picked, its parameter struct filled from the LaunchConfig's words, and
// the launch emulated. Include it after CPUEmulation.h and the kernels'
// source (GenericKernelSources.inc, which ddtc-builtin-kernels
// --emit-sources writes): it names the kernels that source defines.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TESTING_EMULATEDGENERICKERNELS_H
#define DDTC_TESTING_EMULATEDGENERICKERNELS_H

#include "ddtc/Target/CUDA/CUDAEmitter.h"

#include <cstdint>
#include <cstring>

#ifndef DDTC_CPU_EMULATION
#error "include ddtc/Target/CUDA/CPUEmulation.h and the kernels' source first"
#endif

namespace ddtc {

/// Runs `kernel` (a pack or an unpack) with the launch `cfg` on the CPU;
/// false when `cfg`'s parameters are not the kernel's.
template <typename Origin, typename Packed, typename Params>
bool emulateGenericKernel(void (*kernel)(Origin, Packed, Params,
                                         const long long *),
                          const LaunchConfig &cfg, unsigned char *origin,
                          unsigned char *packed, const long long *units) {
  Params params;
  if (cfg.params.size() * sizeof(cfg.params[0]) != sizeof params)
    return false;
  std::memcpy(&params, cfg.params.data(), sizeof params);
  ddtcEmulateLaunch(
      kernel, static_cast<unsigned>(cfg.grid), static_cast<unsigned>(cfg.block),
      static_cast<Origin>(origin), static_cast<Packed>(packed), params, units);
  return true;
}

// The pack (or unpack) kernel of `width` among ddtc_<kind>_w<width><v>_*;
// no kernel (false) for another width.
#define DDTC_EMU_GENERIC_CASE(kind, W, v)                                      \
  case W:                                                                      \
    return pack ? emulateGenericKernel(ddtc_##kind##_w##W##v##_pack, cfg,      \
                                       origin, packed, units)                  \
                : emulateGenericKernel(ddtc_##kind##_w##W##v##_unpack, cfg,    \
                                       origin, packed, units);
#define DDTC_EMU_GENERIC_WIDTHS(kind, v)                                       \
  switch (width) {                                                             \
    DDTC_EMU_GENERIC_CASE(kind, 1, v)                                          \
    DDTC_EMU_GENERIC_CASE(kind, 2, v)                                          \
    DDTC_EMU_GENERIC_CASE(kind, 4, v)                                          \
    DDTC_EMU_GENERIC_CASE(kind, 8, v)                                          \
    DDTC_EMU_GENERIC_CASE(kind, 16, v)                                         \
  }                                                                            \
  return false;

/// Runs the work-unit pack (or unpack) kernel of `width` over the unit table
/// `units`, the chunk kernel (shape units.w<width>.chunks) when `chunks`;
/// false when there is no such kernel or `cfg` is not for it.
inline bool launchUnitsKernel(bool pack, int64_t width, bool chunks,
                              const LaunchConfig &cfg, unsigned char *origin,
                              unsigned char *packed, const long long *units) {
  if (chunks) {
    DDTC_EMU_GENERIC_WIDTHS(units, _chunks)
  }
  DDTC_EMU_GENERIC_WIDTHS(units, )
}

/// The same for the nest kernel of `width` (it takes no unit table).
inline bool launchNestKernel(bool pack, int64_t width, const LaunchConfig &cfg,
                             unsigned char *origin, unsigned char *packed) {
  const long long *units = nullptr;
  DDTC_EMU_GENERIC_WIDTHS(nest, )
}

// The copy kernel ddtc_<kind>_w<width>_copy; no kernel (false) for another
// width.
#define DDTC_EMU_COPY_CASE(kind, W)                                            \
  case W:                                                                      \
    return emulateGenericKernel(ddtc_##kind##_w##W##_copy, cfg, src, dst,      \
                                units);
#define DDTC_EMU_COPY_WIDTHS(kind)                                             \
  switch (width) {                                                             \
    DDTC_EMU_COPY_CASE(kind, 1)                                                \
    DDTC_EMU_COPY_CASE(kind, 2)                                                \
    DDTC_EMU_COPY_CASE(kind, 4)                                                \
    DDTC_EMU_COPY_CASE(kind, 8)                                                \
    DDTC_EMU_COPY_CASE(kind, 16)                                               \
  }                                                                            \
  return false;

/// The copy kernel of the nest kernels of `width` (computeNestCopyLaunch's
/// `cfg`), from the instances at `src` to those at `dst`.
inline bool launchNestCopyKernel(int64_t width, const LaunchConfig &cfg,
                                 unsigned char *src, unsigned char *dst) {
  const long long *units = nullptr;
  DDTC_EMU_COPY_WIDTHS(nest)
}

/// The copy kernel of the work-unit kernels of `width` (computeLaunch's
/// `cfg` for a pack of the plan whose unit table is `units`), between the
/// instances at `src` and those of the same type map at `dst`.
inline bool launchUnitsCopyKernel(int64_t width, const LaunchConfig &cfg,
                                  unsigned char *src, unsigned char *dst,
                                  const long long *units) {
  DDTC_EMU_COPY_WIDTHS(units)
}

#undef DDTC_EMU_COPY_WIDTHS
#undef DDTC_EMU_COPY_CASE
#undef DDTC_EMU_GENERIC_WIDTHS
#undef DDTC_EMU_GENERIC_CASE

} // namespace ddtc

#endif // DDTC_TESTING_EMULATEDGENERICKERNELS_H
