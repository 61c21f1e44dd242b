//===- HaloExchange.h - ddtc-mpi-bench --halo: a 3-d halo exchange --------===//
//
// Two ranks each own half of a cube of doubles plus one ghost layer on every
// side, in device memory, and exchange their 6 faces (periodic: with 2 ranks
// the neighbour in every direction is the other rank) with MPI_Isend of
// subarray types, MPI_Irecv into the ghost faces and MPI_Waitall, against the
// same 6+6 messages as contiguous device buffers of the same bytes. Plain C++
// and MPI: device memory comes through DeviceMemory, so the same exchange
// runs in ddtc-mpi-bench (the CUDA runtime) and in a check program on the
// CUDA driver API (ddtc's fake driver in CI).
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_BENCH_HALOEXCHANGE_H
#define DDTC_MPI_BENCH_HALOEXCHANGE_H

#include "BenchSupport.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace bench {

/// Device memory as the halo exchange needs it; every function ends the
/// program with a message when the device fails.
struct DeviceMemory {
  std::function<void *(size_t bytes)> alloc;
  std::function<void(void *)> free;
  std::function<void(void *dst, const void *src, size_t bytes)> toDevice;
  std::function<void(void *dst, const void *src, size_t bytes)> toHost;
};

/// One rank's interior block in doubles, slowest dimension first (C order):
/// z planes of y rows of x doubles. The ranks split the cube along z.
struct HaloShape {
  int64_t z = 0, y = 0, x = 0;
  std::string text() const; // "ZxYxX"
};

/// The block of one rank of an n^3 cube: n/2 x n x n. False, with the rule
/// broken in `error`, unless n is even and the block fits (see
/// checkHaloShape).
bool haloShapeOfCube(int64_t n, HaloShape &shape, std::string &error);
/// Parses "ZxYxX" (three positive integers); false with `error` otherwise.
bool parseHaloShape(const std::string &text, HaloShape &shape,
                    std::string &error);
/// The block with its ghost layer must hold at most 2^31 doubles (the
/// pattern tells the ranks and positions apart exactly, and a face's bytes
/// fit an int count).
bool checkHaloShape(const HaloShape &shape, std::string &error);

struct HaloOptions {
  HaloShape shape;
  int64_t cube = 0; ///< n when the block came from --halo n, else 0
  int reps = 20;
  int warmup = 3;
  std::string jsonPath; ///< rank 0 writes the report there (if set)
  JObj environment;     ///< copied into the report
  std::string program = "ddtc-mpi-bench";
};

/// Checks, times and reports the exchange on the 2 ranks of MPI_COMM_WORLD
/// (rank 0 prints). Returns 0 when every check passed, 1 otherwise.
int runHaloExchange(const HaloOptions &options, const DeviceMemory &memory,
                    int rank);

} // namespace bench

#endif
