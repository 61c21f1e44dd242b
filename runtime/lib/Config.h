//===- Config.h - The runtime's settings, from the environment --*- C++ -*-===//
//
// The runtime's settings, read once on first use. docs/Runtime.md says what
// each variable does. Every DDTC_* variable read by libddtc, by the layers on
// it and by its tests, and where:
//   here (Config.cpp)       DDTC_CACHE_DIR, DDTC_DISABLE_CACHE, DDTC_JIT,
//                           DDTC_DEFAULT_ARCH, DDTC_VERBOSE,
//                           DDTC_CHECK_POINTERS, DDTC_GENERIC_MAX_UNITS,
//                           DDTC_JIT_THREADS, DDTC_TILES, DDTC_MAPPED_CHUNKS,
//                           DDTC_ALIGN_VARIANTS, DDTC_UNPACK_ORDER,
//                           DDTC_HOST_STAGING_MIN, DDTC_HOST_STAGING_CHUNK,
//                           DDTC_NVRTC_OPTIONS, DDTC_BUILTIN_STRIDED
//   CUDADriver.cpp          DDTC_CUDA_DRIVER (shared with the GPU test, which
//                           loads the driver before any setting is read)
//   lib/Target/CUDA/NVRTCCompiler.cpp
//                           DDTC_NVRTC_PATH, DDTC_DUMP_SOURCE (shared with the
//                           ddtc compiler)
//   runtime/mpi/Settings.cpp  every DDTC_MPI_* variable, for libddtc-mpi
//                           (listed in docs/MPI.md)
//   tests only              DDTC_FAKE_* (runtime/test/FakeCUDADriver.cpp),
//                           DDTC_TEST_* (the runtime and MPI layer tests)
// The build reads DDTC_NVRTC_PATH too, to find NVRTC for the generic kernels.
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_CONFIG_H
#define DDTC_RUNTIME_CONFIG_H

#include <cstdint>
#include <string>
#include <vector>

namespace ddtc::rt {

/// When specialized kernels are compiled (DDTC_JIT).
enum class JitMode {
  /// In the background; calls use the generic kernel until it is ready.
  Async,
  /// In ddtc_type_commit, which waits for it.
  Sync,
  /// Never while a generic kernel can serve the type (for debugging).
  Generic,
};

struct Config {
  /// The disk cache folder (DDTC_CACHE_DIR, else $XDG_CACHE_HOME/ddtc, else
  /// ~/.cache/ddtc); empty when no home folder is known.
  std::string cacheDir;
  /// DDTC_DISABLE_CACHE: no memory and no disk cache.
  bool cacheDisabled = false;
  JitMode jit = JitMode::Async;
  /// The architecture compiled for when no GPU is present
  /// (DDTC_DEFAULT_ARCH, digits of sm_XY).
  std::string defaultArch = "90";
  /// DDTC_VERBOSE: JIT and cache events on stderr.
  bool verbose = false;
  /// DDTC_CHECK_POINTERS=0 skips the check that buffers are GPU-accessible.
  bool checkPointers = true;
  /// DDTC_GENERIC_MAX_UNITS: the largest work-unit table built for a
  /// generic kernel (larger types wait for their specialized kernel).
  int64_t genericMaxUnits = int64_t(1) << 18;
  /// DDTC_TILES=0: transposing layouts keep the strided kernels instead of
  /// the shared-memory tile kernels (detectTransposeTiles).
  bool tiles = true;
  /// DDTC_MAPPED_CHUNKS=0: packs into mapped host memory of types whose
  /// kernels give a work unit a warp keep those kernels instead of the
  /// generic chunk kernels (a 16-byte chunk a thread).
  bool mappedChunks = true;
  /// DDTC_ALIGN_VARIANTS=0: a call whose origin is less aligned than the
  /// type's kernels assume runs those kernels (their byte path) instead of
  /// the type's variant for that offset.
  bool alignVariants = true;
  /// DDTC_UNPACK_ORDER=0: units plans unpack in packed order always, never
  /// by their table in destination order (orderUnpackUnits).
  bool unpackOrder = true;
  /// DDTC_COPY_ENGINE_ROWS: ddtc_copy moves rows of at least this many
  /// bytes (the same length on both sides) through a copy engine instead of
  /// its kernel; 0 never. On two H200s a copy engine moved rows of 256 bytes
  /// and more from the peer GPU at 0.92-1.01 of a contiguous copy, the
  /// kernel at 0.85-0.94; rows of 64 bytes at 0.50-0.64 against 0.86
  /// (bench/results/2026-11-29-NVIDIA-H200-x2-fused-pulls, peer-rows).
  int64_t copyEngineRows = 256;
  /// DDTC_JIT_THREADS: background compiler threads.
  int jitThreads = 2;
  /// DDTC_HOST_STAGING_MIN: packs of at least this many bytes into host
  /// memory go through device memory and a copy engine (HostStaging.h); 0
  /// turns that off. Below 16 MiB the kernel's own writes were faster on an
  /// H200 (docs/Performance.md).
  int64_t hostStagingMin = int64_t(16) << 20;
  /// DDTC_HOST_STAGING_CHUNK: the bytes packed and copied a step (the
  /// context's device ring holds two).
  int64_t hostStagingChunk = int64_t(8) << 20;
  /// DDTC_BUILTIN_STRIDED=0: the strided and tile shapes' kernels built
  /// into the library are not used (every specialized kernel is compiled);
  /// they are not used either while DDTC_NVRTC_OPTIONS is set.
  bool builtinStrided = true;
  /// DDTC_NVRTC_OPTIONS: options added to every NVRTC compile of a
  /// specialized kernel (separated by white space); part of the cache key.
  std::vector<std::string> nvrtcOptions;
  /// Settings that were not understood, to report once.
  std::string warnings;
};

/// The settings, read from the environment on first use.
const Config &config();

/// Reads the environment again. Only for tests, while no other thread uses
/// the runtime.
void reloadConfig();

/// Writes "ddtc: MESSAGE" to stderr when DDTC_VERBOSE is set.
void logVerbose(const std::string &message);

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_CONFIG_H
