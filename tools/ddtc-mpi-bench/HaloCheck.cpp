//===- HaloCheck.cpp - The halo exchange of ddtc-mpi-bench on the driver API
//-===//
//
// ddtc-mpi-bench links the CUDA runtime, which needs a real GPU driver; this
// program runs the same exchange (HaloExchange.cpp) with device memory from
// the CUDA driver API loaded at run time (examples/mpi/device_memory.c), so
// that it also runs on ddtc's fake driver (DDTC_CUDA_DRIVER) under mpirun
// -np 2 with libddtc-mpi preloaded, where no GPU is. Its timings there mean
// nothing; its checks are the point.
//
//   mpirun -np 2 -x LD_PRELOAD=libddtc-mpi.so -x DDTC_CUDA_DRIVER=...
//       ddtc-mpi-halo-check [--halo-layout ZxYxX | --halo N] [--reps N]
//       [--json FILE]
//===----------------------------------------------------------------------===//

#include "HaloExchange.h"

#include "device_memory.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace bench;

namespace {

[[noreturn]] void usageError(const std::string &message) {
  std::fprintf(stderr, "ddtc-mpi-halo-check: %s\n", message.c_str());
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  HaloOptions opt;
  opt.program = "ddtc-mpi-halo-check";
  opt.reps = 3;
  opt.warmup = 1;
  std::string error;
  if (!parseHaloShape("6x10x14", opt.shape, error))
    usageError(error);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--halo-layout") {
      if (!parseHaloShape(value(), opt.shape, error))
        usageError("--halo-layout: " + error);
      opt.cube = 0;
    } else if (a == "--halo") {
      opt.cube = std::atoll(value().c_str());
      if (!haloShapeOfCube(opt.cube, opt.shape, error))
        usageError("--halo: " + error);
    } else if (a == "--reps") {
      opt.reps = std::atoi(value().c_str());
      if (opt.reps <= 0)
        usageError("--reps takes a positive count");
    } else if (a == "--json") {
      opt.jsonPath = value();
    } else {
      usageError("unknown argument '" + a + "'");
    }
  }

  dm_init(); // before MPI_Init, as CUDA-aware programs pick their device
  int rank = initTwoRanks(&argc, &argv, "ddtc-mpi-halo-check", "");
  if (rank < 0)
    return 2;
  // The fake driver's device memory is host memory, which plain MPI reads
  // by itself: with DDTC_EXAMPLE_REQUIRE_DDTC=1 a run without the layer
  // fails instead of passing.
  dm_require_ddtc();

  DeviceMemory memory;
  memory.alloc = [](size_t n) { return dm_alloc(n); };
  memory.free = [](void *p) { dm_free(p); };
  memory.toDevice = [](void *d, const void *s, size_t n) {
    dm_to_device(d, s, n);
  };
  memory.toHost = [](void *d, const void *s, size_t n) { dm_to_host(d, s, n); };
  int status = runHaloExchange(opt, memory, rank);
  MPI_Finalize();
  return status;
}
