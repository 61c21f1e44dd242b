//===- Profile.h - Where the layer's host time goes -------------*- C++ -*-===//
//
// With DDTC_MPI_PROFILE=1 the layer counts the calls it makes on the
// critical path of a transfer and the host time they take, and each rank
// prints the totals at MPI_Finalize: what a pipeline's fragment costs the
// host is the figure its model needs (docs/MPI.md).
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_PROFILE_H
#define DDTC_MPI_PROFILE_H

#include <atomic>
#include <chrono>
#include <cstdint>

namespace ddtc::mpi {

enum class Cost {
  Pack,    ///< ddtc_pack and device copies issued for packing
  Unpack,  ///< ddtc_unpack and device copies issued for unpacking
  Event,   ///< event create and record
  Query,   ///< event queries
  MpiTest, ///< PMPI_Test of the layer's own requests
  MpiPost, ///< the layer's small sends and receives
  Count
};

bool profiling();
void addCost(Cost c, double us);
/// Prints the totals (at MPI_Finalize), and writes the timeline.
void printProfile();

/// Whether DDTC_MPI_TRACE asks for a timeline.
bool tracing();
/// Records one step of a transfer: what happened, to which fragment (or
/// -1) and how many bytes, with the time.
void traceStep(const char *what, int64_t frag, int64_t bytes);
/// traceStep when tracing; one load and branch otherwise.
inline void trace(const char *what, int64_t frag = -1, int64_t bytes = 0) {
  if (tracing())
    traceStep(what, frag, bytes);
}

/// Adds the host time of its scope to a cost, when profiling.
class CostScope {
public:
  explicit CostScope(Cost c) : cost(c), on(profiling()) {
    if (on)
      t0 = std::chrono::steady_clock::now();
  }
  ~CostScope() {
    if (on)
      addCost(cost, std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - t0)
                        .count());
  }
  CostScope(const CostScope &) = delete;
  CostScope &operator=(const CostScope &) = delete;

private:
  Cost cost;
  bool on;
  std::chrono::steady_clock::time_point t0;
};

} // namespace ddtc::mpi

#endif // DDTC_MPI_PROFILE_H
