//===- BenchSupport.cpp - What ddtc-mpi-bench's modes share ---------------===//

#include "BenchSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace bench {

int gRank = -1;
bool gMpiUp = false;
std::function<void(const std::string &)> gOnAbort;

void die(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "ddtc-mpi-bench [rank %d]: %s\n", gRank, msg);
  std::fflush(stderr);
  if (gOnAbort) {
    auto f = gOnAbort;
    gOnAbort = nullptr;
    f(msg);
  }
  if (gMpiUp)
    PMPI_Abort(MPI_COMM_WORLD, 3);
  std::exit(3);
}

void checkMpi(int rc, const char *what) {
  if (rc == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS)
    std::snprintf(text, sizeof text, "error code %d", rc);
  die("%s failed: %s", what, text);
}

int initTwoRanks(int *argc, char ***argv, const char *program,
                 const char *hint) {
  MPI_Init(argc, argv);
  gMpiUp = true;
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  gRank = rank;
  if (size != 2) {
    if (rank == 0)
      std::fprintf(stderr, "%s: needs exactly 2 MPI ranks, got %d%s\n", program,
                   size, hint);
    MPI_Finalize();
    return -1;
  }
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return rank;
}

double median(std::vector<double> v) {
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ratio(double num, double den) {
  return std::isfinite(num) && std::isfinite(den) && den > 0 ? num / den : NAN;
}

std::string jstr(const std::string &s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += (char)c;
    } else if (c == '\n') {
      o += "\\n";
    } else if (c == '\t') {
      o += "\\t";
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += (char)c;
    }
  }
  return o + "\"";
}

std::string jnum(double v) {
  if (!std::isfinite(v))
    return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

std::string jint(int64_t v) { return std::to_string(v); }

std::string JObj::text(int indent) const {
  if (f.empty())
    return "{}";
  std::string sep = indent < 0 ? ", " : ",\n" + std::string(indent + 1, ' ');
  std::string o = indent < 0 ? "{" : "{\n" + std::string(indent + 1, ' ');
  for (size_t i = 0; i < f.size(); ++i)
    o += (i ? sep : "") + jstr(f[i].first) + ": " + f[i].second;
  o += indent < 0 ? "}" : "\n" + std::string(indent, ' ') + "}";
  return o;
}

std::string jarr(const std::vector<std::string> &items, int indent) {
  if (items.empty())
    return "[]";
  std::string sep = indent < 0 ? ", " : ",\n" + std::string(indent + 1, ' ');
  std::string o = indent < 0 ? "[" : "[\n" + std::string(indent + 1, ' ');
  for (size_t i = 0; i < items.size(); ++i)
    o += (i ? sep : "") + items[i];
  return o + (indent < 0 ? "]" : "\n" + std::string(indent, ' ') + "]");
}

std::string jnums(const std::vector<double> &v) {
  std::vector<std::string> s;
  for (double x : v)
    s.push_back(jnum(x));
  return jarr(s);
}

bool writeFileAtomically(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << text;
    if (!f) {
      std::fprintf(stderr, "ddtc-mpi-bench: cannot write %s\n", tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "ddtc-mpi-bench: cannot rename %s to %s\n",
                 tmp.c_str(), path.c_str());
    return false;
  }
  return true;
}

} // namespace bench
