//===- Settings.cpp - DDTC_MPI_* variables and notices --------------------===//
//
// Read once, at first use; docs/MPI.md lists every variable.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace ddtc::mpi {
namespace {

int64_t envBytes(const char *name, int64_t fallback, int64_t min) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  double x = std::strtod(v, &end);
  int64_t scale = 1;
  if (end && (*end == 'k' || *end == 'K'))
    scale = 1024;
  else if (end && (*end == 'm' || *end == 'M'))
    scale = 1024 * 1024;
  else if (end && (*end == 'g' || *end == 'G'))
    scale = int64_t(1) << 30;
  else if (end && *end) {
    std::fprintf(stderr,
                 "ddtc-mpi: %s=%s is not a byte count (e.g. 65536, 64k, 4M); "
                 "using %lld\n",
                 name, v, static_cast<long long>(fallback));
    return fallback;
  }
  int64_t r = static_cast<int64_t>(x * scale);
  return r < min ? min : r;
}

/// A setting that names one of `names`: `value` becomes its index; anything
/// else keeps `value`, with a warning.
template <size_t N>
void envChoice(const char *name, const char *const (&names)[N], int &value) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return;
  for (size_t i = 0; i < N; ++i)
    if (!std::strcmp(v, names[i])) {
      value = static_cast<int>(i);
      return;
    }
  std::string all;
  for (size_t i = 0; i < N; ++i)
    all += std::string(i ? ", " : "") + names[i];
  std::fprintf(stderr, "ddtc-mpi: %s=%s is not one of %s; using %s\n", name, v,
               all.c_str(), names[value]);
}

Settings read() {
  Settings s;
  const char *d = std::getenv("DDTC_MPI_DISABLE");
  s.disabled = d && *d && std::strcmp(d, "0") != 0;
  if (const char *v = std::getenv("DDTC_MPI_VERBOSE"))
    s.verbose = std::atoi(v);
  s.eagerLimit = envBytes("DDTC_MPI_EAGER_LIMIT", s.eagerLimit, 0);
  s.hostPack = envBytes("DDTC_MPI_HOST_PACK", s.hostPack, 0);
  s.fragment = envBytes("DDTC_MPI_FRAGMENT", s.fragment, 1);
  s.fragmentSet = std::getenv("DDTC_MPI_FRAGMENT") != nullptr;
  s.fragmentMin = envBytes("DDTC_MPI_FRAGMENT_MIN", s.fragmentMin, 1);
  s.fragmentMinSet = std::getenv("DDTC_MPI_FRAGMENT_MIN") != nullptr;
  s.depth = static_cast<int>(envBytes("DDTC_MPI_DEPTH", s.depth, 1));
  s.maxCtas = static_cast<int>(envBytes("DDTC_MPI_CTAS", 0, 0));
  s.readStreams = static_cast<int>(std::min<int64_t>(
      envBytes("DDTC_MPI_READ_STREAMS", s.readStreams, 1), kReadStreams));
  if (const char *p = std::getenv("DDTC_MPI_PROTOCOL"); p && *p) {
    if (!parseProtocol(p, s.protocol))
      std::fprintf(stderr,
                   "ddtc-mpi: DDTC_MPI_PROTOCOL=%s is not one of auto, eager, "
                   "pipeline, staged, ipc; using auto\n",
                   p);
  }
  if (const char *h = std::getenv("DDTC_MPI_HANDSHAKE"))
    s.handshake = std::strcmp(h, "0") != 0;
  if (const char *v = std::getenv("DDTC_MPI_PROGRESS"))
    s.progressThread = std::strcmp(v, "0") != 0;
  if (const char *v = std::getenv("DDTC_MPI_EAGER_ASYNC"))
    s.eagerAsync = std::strcmp(v, "0") != 0;
  if (const char *v = std::getenv("DDTC_MPI_IPC"))
    s.ipc = std::strcmp(v, "0") != 0;
  // In the order of the IpcRead enumerators.
  static const char *const ipcReads[] = {"direct", "stage", "push",
                                         "push-copy", "pull", "auto"};
  int ipcRead = static_cast<int>(s.ipcRead);
  envChoice("DDTC_MPI_IPC_READ", ipcReads, ipcRead);
  s.ipcRead = static_cast<IpcRead>(ipcRead);
  if (const char *v = std::getenv("DDTC_MPI_IPC_FUSE"))
    s.ipcFuse = std::strcmp(v, "0") != 0;
  static const char *const ipcSyncs[] = {"host", "device"};
  int ipcSync = s.ipcStreamSync ? 1 : 0;
  envChoice("DDTC_MPI_IPC_SYNC", ipcSyncs, ipcSync);
  s.ipcStreamSync = ipcSync == 1;
  static const char *const hostReads[] = {"direct", "stage"};
  int hostRead = s.hostStage ? 1 : 0;
  envChoice("DDTC_MPI_HOST_READ", hostReads, hostRead);
  s.hostStage = hostRead == 1;
  s.ipcCache = static_cast<int>(envBytes("DDTC_MPI_IPC_CACHE", s.ipcCache, 1));
  s.peerTypes = static_cast<int>(envBytes("DDTC_MPI_PEER_TYPES", s.peerTypes, 1));
  return s;
}

std::atomic<int> chosen{-1}; // ddtc_mpi_set_protocol
std::mutex noteMutex;
std::set<std::string> noted;

} // namespace

const Settings &settings() {
  static const Settings s = read();
  return s;
}

bool parseProtocol(const char *name, Protocol &p) {
  for (Protocol q : {Protocol::Auto, Protocol::Eager, Protocol::Pipeline,
                     Protocol::Staged, Protocol::Ipc})
    if (!std::strcmp(name, protocolName(q))) {
      p = q;
      return true;
    }
  return false;
}

Protocol protocol() {
  int c = chosen.load(std::memory_order_relaxed);
  return c < 0 ? settings().protocol : static_cast<Protocol>(c);
}

const char *protocolName(Protocol p) {
  switch (p) {
  case Protocol::Auto:
    return "auto";
  case Protocol::Eager:
    return "eager";
  case Protocol::Pipeline:
    return "pipeline";
  case Protocol::Staged:
    return "staged";
  case Protocol::Ipc:
    return "ipc";
  }
  return "?";
}

static void emit(const char *text) {
  int rank = -1, init = 0, fin = 0;
  PMPI_Initialized(&init);
  PMPI_Finalized(&fin);
  if (init && !fin)
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "ddtc-mpi[%d]: %s\n", rank, text);
}

void note(int level, const char *fmt, ...) {
  if (settings().verbose < level)
    return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  emit(buf);
}

void noteOnce(const std::string &text) {
  if (settings().verbose < 1)
    return;
  std::lock_guard<std::mutex> lock(noteMutex);
  if (noted.insert(text).second)
    emit(text.c_str());
}

} // namespace ddtc::mpi

/// For benchmarks and tests: the protocol of this rank's later device sends
/// (auto, eager, pipeline, staged or ipc; what needs setting up at MPI_Init,
/// the communicators of the pipeline, must not have been turned off then by
/// DDTC_MPI_PROTOCOL=eager or staged). Returns 0, or -1 for an unknown name.
extern "C" __attribute__((visibility("default"))) int
ddtc_mpi_set_protocol(const char *name) {
  ddtc::mpi::Protocol p;
  if (!name || !ddtc::mpi::parseProtocol(name, p))
    return -1;
  ddtc::mpi::chosen.store(static_cast<int>(p), std::memory_order_relaxed);
  return 0;
}
