//===- Profile.cpp - Where the layer's host time goes ---------------------===//

#include "Profile.h"

#include "Layer.h"

#include <cstdlib>
#include <cstring>

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

} // namespace

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
  note(0, "%s", line.c_str());
}

} // namespace ddtc::mpi
