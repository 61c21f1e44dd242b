//===- BenchSupport.h - What ddtc-mpi-bench's modes share -----------------===//
//
// Error exits that take both ranks down, MPI checks, medians and ratios, and
// the small JSON writer the modes fill their reports with. Plain C++ and MPI:
// the halo exchange, built also without the CUDA runtime, uses it too.
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_BENCH_BENCHSUPPORT_H
#define DDTC_MPI_BENCH_BENCHSUPPORT_H

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace bench {

/// This process's rank once MPI is up (-1 before), for messages.
extern int gRank;
/// Whether MPI_Init ran: die() then aborts both ranks.
extern bool gMpiUp;
/// Runs once when die() is called (rank 0 writes its partial report).
extern std::function<void(const std::string &)> gOnAbort;

/// Prints the message with the rank, runs gOnAbort, aborts (status 3).
[[noreturn]] void die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/// Dies with MPI's text for rc unless rc is MPI_SUCCESS.
void checkMpi(int rc, const char *what);

/// MPI_Init for a mode that runs on two ranks: sets gMpiUp and gRank, and
/// errors on MPI_COMM_WORLD return instead of aborting. Returns this
/// process's rank, or -1 (MPI finalized) when there are not two ranks: rank
/// 0 then says so, as "<program>: needs exactly 2 MPI ranks, got N<hint>".
int initTwoRanks(int *argc, char ***argv, const char *program,
                 const char *hint);

double median(std::vector<double> v);

/// num / den, NaN unless both are finite and den is positive.
double ratio(double num, double den);

std::string jstr(const std::string &s);
/// A finite number, else null.
std::string jnum(double v);
std::string jint(int64_t v);
std::string jarr(const std::vector<std::string> &items, int indent = -1);
std::string jnums(const std::vector<double> &v);

/// A JSON object built field by field; values are raw JSON text.
struct JObj {
  std::vector<std::pair<std::string, std::string>> f;
  JObj &add(const std::string &k, const std::string &rawValue) {
    f.push_back({k, rawValue});
    return *this;
  }
  JObj &num(const std::string &k, double v) { return add(k, jnum(v)); }
  JObj &i64(const std::string &k, int64_t v) { return add(k, jint(v)); }
  JObj &str(const std::string &k, const std::string &v) {
    return add(k, jstr(v));
  }
  JObj &boolean(const std::string &k, bool v) {
    return add(k, v ? "true" : "false");
  }
  std::string text(int indent = -1) const;
};

/// Writes text to path through a temporary file and a rename; false (with a
/// message on stderr) when it cannot.
bool writeFileAtomically(const std::string &path, const std::string &text);

} // namespace bench

#endif
