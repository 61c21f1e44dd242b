//===- Profile.cpp - Where the layer's host time goes ---------------------===//

#include "Profile.h"

#include "Layer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace ddtc::mpi {
namespace {

struct Totals {
  std::atomic<long long> calls[static_cast<int>(Cost::Count)] = {};
  std::atomic<long long> ns[static_cast<int>(Cost::Count)] = {};
};
Totals totals;

const char *costName(int c) {
  static const char *names[] = {"pack",        "unpack",   "event record",
                                "event query", "MPI test", "MPI post"};
  return names[c];
}

struct Step {
  double us;
  const char *what;
  int64_t frag, bytes;
};
std::mutex stepsMutex;
std::vector<Step> steps;
const auto traceStart = std::chrono::steady_clock::now();

const char *tracePrefix() {
  static const char *prefix = [] {
    const char *v = std::getenv("DDTC_MPI_TRACE");
    return v && *v ? v : nullptr;
  }();
  return prefix;
}

void writeTrace() {
  std::lock_guard<std::mutex> lock(stepsMutex);
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string path = std::string(tracePrefix()) + "." + std::to_string(rank);
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    note(0, "cannot write the timeline to %s", path.c_str());
    return;
  }
  // The start on the host's monotonic clock, so that the ranks of one host
  // line up.
  std::fprintf(f, "# start %.3f us; us since the start, step, fragment, bytes\n",
               std::chrono::duration<double, std::micro>(
                   traceStart.time_since_epoch())
                   .count());
  for (const Step &s : steps)
    std::fprintf(f, "%.3f %s %lld %lld\n", s.us, s.what,
                 static_cast<long long>(s.frag),
                 static_cast<long long>(s.bytes));
  std::fclose(f);
  note(1, "timeline of %zu steps written to %s", steps.size(), path.c_str());
}

} // namespace

bool tracing() { return tracePrefix() != nullptr; }

void traceStep(const char *what, int64_t frag, int64_t bytes) {
  std::lock_guard<std::mutex> lock(stepsMutex); // (first: times in order)
  double us = std::chrono::duration<double, std::micro>(
                  std::chrono::steady_clock::now() - traceStart)
                  .count();
  if (steps.size() < (size_t(1) << 22)) // bounded: 4 Mi steps
    steps.push_back(Step{us, what, frag, bytes});
}

bool profiling() {
  static const bool on = [] {
    const char *v = std::getenv("DDTC_MPI_PROFILE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void addCost(Cost c, double us) {
  int i = static_cast<int>(c);
  totals.calls[i].fetch_add(1, std::memory_order_relaxed);
  totals.ns[i].fetch_add(static_cast<long long>(us * 1e3),
                         std::memory_order_relaxed);
}

void printProfile() {
  if (tracing())
    writeTrace();
  if (!profiling())
    return;
  std::string line = "host time of the layer's calls:";
  for (int i = 0; i < static_cast<int>(Cost::Count); ++i) {
    long long n = totals.calls[i].load(), ns = totals.ns[i].load();
    char buf[160];
    std::snprintf(buf, sizeof buf, " %s %lld x %.2f us = %.0f us;", costName(i),
                  n, n ? ns / 1e3 / n : 0.0, ns / 1e3);
    line += buf;
  }
  // Which kernels ran: a generic one serves a type until its own is
  // compiled (in the background).
  ddtc_stats st{};
  if (ddtc_get_stats(&st) == DDTC_SUCCESS) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  " kernels: %lld specialized launches, %lld generic, %lld "
                  "NVRTC compiles (%.0f ms)",
                  static_cast<long long>(st.specialized_launches),
                  static_cast<long long>(st.generic_launches),
                  static_cast<long long>(st.nvrtc_compiles),
                  st.compile_ms_total);
    line += buf;
  }
  note(0, "%s", line.c_str());
}

} // namespace ddtc::mpi
