//===- Model.cpp - The fragments of the IPC pipeline ----------------------===//
//
// The model of a pipelined message (PipelineModel.cpp) chooses its
// fragments.
//
// Small first and last fragments start the pipeline sooner and add
// fragments: the model tries the largest fragment among the powers of two
// from 256 KiB to 64 MiB and the first among those from 64 KiB up to the
// largest, and takes the fastest (the fewer fragments on a tie).
//
// The figures come from the environment (DDTC_MPI_IPC_START_US, _ALPHA_US,
// _GAP_US, _LINK_GBPS, _LOCAL_GBPS), else from the calibration file that
// ddtc-mpi-calibrate measured for this GPU, driver and host (in the ddtc
// cache folder), else from defaults fitted to the ping-pong of two H200s
// joined by NVLink (10 us, 9.5 us, 4.75 us, 370 GB/s, 1400 GB/s).
// DDTC_MPI_FRAGMENT and DDTC_MPI_FRAGMENT_MIN override the choices.
//
// Messages up to DDTC_MPI_EAGER_LIMIT go eager (through pinned host memory)
// unless a calibration measured a small message through IPC faster than
// the eager protocol's fixed cost plus its rate (then they go through IPC
// when the peer can be reached that way).
//===----------------------------------------------------------------------===//

#include "DeviceDriver.h"

#include "Config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace ddtc::mpi {
namespace {

std::atomic<int64_t> chosenFragment{0};

/// A fragment size as the note carries it (int32).
int64_t noteSize(int64_t v) { return std::min<int64_t>(v, INT32_MAX); }

/// GPU name and driver version of device 0, and the host name: what the
/// figures depend on.
void identity(std::string &gpu, int &driverVersion, std::string &host) {
  gpu = "no-gpu";
  driverVersion = 0;
  if (const cu::DriverAPI *api = driver()) {
    char name[256] = {};
    cu::CUdevice dev = 0;
    if (api->cuDeviceGet(&dev, 0) == cu::CUDA_SUCCESS)
      api->cuDeviceGetName(name, sizeof name - 1, dev);
    if (*name)
      gpu = name;
    api->cuDriverGetVersion(&driverVersion);
  }
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  host = h;
}

/// Reads "key value" lines; false when the file is missing or describes
/// another GPU, driver or host.
bool readFile(const std::string &path, ModelFigures &f) {
  std::ifstream in(path);
  if (!in)
    return false;
  std::string gpu, host;
  int driverVersion = 0;
  identity(gpu, driverVersion, host);
  std::string line;
  bool sameGpu = false, sameDriver = false, sameHost = false;
  ModelFigures read;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ls(line);
    std::string key, rest;
    ls >> key;
    std::getline(ls >> std::ws, rest);
    if (key == "gpu")
      sameGpu = rest == gpu;
    else if (key == "driver")
      sameDriver = rest == std::to_string(driverVersion);
    else if (key == "host")
      sameHost = rest == host;
    else if (key == "ipc_start_us")
      read.startUs = std::atof(rest.c_str());
    else if (key == "ipc_alpha_us")
      read.alphaUs = std::atof(rest.c_str());
    else if (key == "ipc_gap_us")
      read.gapUs = std::atof(rest.c_str());
    else if (key == "ipc_link_gbps")
      read.linkGBps = std::atof(rest.c_str());
    else if (key == "ipc_local_gbps")
      read.localGBps = std::atof(rest.c_str());
    else if (key == "eager_start_us")
      read.eagerStartUs = std::atof(rest.c_str());
    else if (key == "eager_gbps")
      read.eagerGBps = std::atof(rest.c_str());
    else if (key == "ipc_small_us")
      read.ipcSmallUs = std::atof(rest.c_str());
  }
  if (!sameGpu || !sameDriver || !sameHost || !(read.startUs >= 0) ||
      !(read.alphaUs > 0) || !(read.linkGBps > 0) || !(read.localGBps > 0) ||
      !(read.eagerGBps > 0)) {
    note(1,
         "model: %s is for another GPU, driver or host, or incomplete; "
         "not used",
         path.c_str());
    return false;
  }
  read.source = path;
  f = read;
  return true;
}

double envNumber(const char *name, double fallback, bool &set) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  double x = std::strtod(v, &end);
  if (*end || !(x > 0)) {
    std::fprintf(stderr,
                 "ddtc-mpi: %s=%s is not a positive number; using "
                 "%g\n",
                 name, v, fallback);
    return fallback;
  }
  set = true;
  return x;
}

} // namespace

std::string modelPath() {
  std::string gpu, host;
  int driverVersion = 0;
  identity(gpu, driverVersion, host);
  std::string key = gpu + "-" + std::to_string(driverVersion) + "-" + host;
  for (char &c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.')
      c = '_';
  return rt::config().cacheDir + "/mpi-model-" + key + ".txt";
}

const ModelFigures &modelFigures() {
  static const ModelFigures figures = [] {
    ModelFigures f;
    readFile(modelPath(), f);
    bool set = false;
    f.startUs = envNumber("DDTC_MPI_IPC_START_US", f.startUs, set);
    f.alphaUs = envNumber("DDTC_MPI_IPC_ALPHA_US", f.alphaUs, set);
    f.gapUs = envNumber("DDTC_MPI_IPC_GAP_US", f.gapUs, set);
    f.linkGBps = envNumber("DDTC_MPI_IPC_LINK_GBPS", f.linkGBps, set);
    f.localGBps = envNumber("DDTC_MPI_IPC_LOCAL_GBPS", f.localGBps, set);
    if (set)
      f.source += " and DDTC_MPI_IPC_*";
    note(2,
         "model of the IPC pipeline (%s): start %.1f us, %.1f us per "
         "fragment on the hosts and %.2f us on the GPUs, link %.0f GB/s, "
         "kernels %.0f GB/s",
         f.source.c_str(), f.startUs, f.alphaUs, f.gapUs, f.linkGBps,
         f.localGBps);
    return f;
  }();
  return figures;
}

bool smallFasterThroughIpc(int64_t bytes) {
  const ModelFigures &m = modelFigures();
  double eager = m.eagerStartUs + bytes / (m.eagerGBps * 1e3);
  double ipc = m.ipcSmallUs + bytes / (m.linkGBps * 1e3);
  return ipc < eager;
}

void chooseFragment(int64_t bytes) {
  chosenFragment.store(std::max<int64_t>(bytes, 0), std::memory_order_relaxed);
}

double predictIpcUs(const FragmentSchedule &schedule,
                    const KernelTraffic &traffic) {
  return pipelineUs(modelFigures(), schedule, traffic);
}

double predictPullUs(const FragmentSchedule &schedule,
                     const KernelTraffic &traffic) {
  return pullUs(modelFigures(), schedule, traffic);
}

double predictInPlaceUs(const FragmentSchedule &schedule) {
  const ModelFigures &m = modelFigures();
  if (schedule.count() == 0)
    return 0;
  // Nothing is packed and no fragment waits for a ready message: `start`
  // (the note, the answer, the closing message) covers the one copy's
  // launch as well, and only fragments after the first add the hosts' cost
  // of one. Fitted so, the contiguous face of two runs on two H200s, 1 to
  // 256 MiB, came within -4..+7% (with alpha for the first as well:
  // +2..+67%; bench/results/2026-11-29-NVIDIA-H200-x2-unpack-model).
  return m.startUs + static_cast<double>(schedule.count() - 1) * m.alphaUs +
         static_cast<double>(schedule.total()) / (m.linkGBps * 1e3);
}

FragmentSchedule inPlaceSchedule(int64_t bytes) {
  const Settings &s = settings();
  // Staged reads copy a fragment to local staging before its unpack: there
  // fragments do overlap, and the model's choice stands.
  if (s.fragmentSet || s.ipcRead == IpcRead::Stage ||
      chosenFragment.load(std::memory_order_relaxed))
    return ipcSchedule(bytes);
  // One copy (or unpack) of the whole message: on two H200s a 16 MiB
  // contiguous message took 59 us read at once against 85 us in the
  // 4+8+4 MiB the pipeline's model would choose, each fragment paying a
  // signal and a wait that no pack hides.
  constexpr int64_t kMost = int64_t(1) << 30; // the note holds int32 sizes
  int64_t one = std::max<int64_t>(std::min(bytes, kMost), 1);
  return FragmentSchedule(bytes, one, one);
}

FragmentSchedule pullSchedule(int64_t bytes) {
  const Settings &s = settings();
  if (s.fragmentSet)
    return FragmentSchedule(bytes, noteSize(s.fragment),
                            s.fragmentMinSet ? noteSize(s.fragmentMin) : 0);
  // No sender's pack to overlap: the receiver queues, per fragment, a pack
  // from the peer's memory and a local unpack, each local unpack
  // overlapping the next pack. n fragments cost n x alpha of launches and
  // leave the last unpack, bytes / n at the local rate, after the last
  // pack: n = sqrt(bytes / (local x alpha)) minimizes the sum. (Fragments
  // of the pipeline's size were host bound: on one H200 under MPS each
  // took ~10 us of launches for ~1 us of GPU work.)
  const ModelFigures &m = modelFigures();
  // At most 16 MiB a fragment: the receiver's staging slots, and the pinned
  // ring of a message that goes through host memory after all, stay small.
  constexpr int64_t kMost = int64_t(16) << 20;
  const double perAlpha = std::max(m.localGBps, 1.0) * 1e3 *
                          std::max(m.alphaUs, 0.1);
  int64_t n = std::llround(std::sqrt(static_cast<double>(bytes) / perAlpha));
  n = std::max<int64_t>({n, 1, (bytes + kMost - 1) / kMost});
  n = std::min<int64_t>(n, 64);
  int64_t largest = FragmentSchedule::roundUp((bytes + n - 1) / n);
  largest = std::max<int64_t>(std::min(largest, kMost), 1);
  return FragmentSchedule(bytes, largest, largest);
}

FragmentSchedule ipcSchedule(int64_t bytes, const KernelTraffic &traffic) {
  const Settings &s = settings();
  int64_t first = s.fragmentMinSet ? noteSize(s.fragmentMin) : 0;
  if (int64_t c = chosenFragment.load(std::memory_order_relaxed))
    return FragmentSchedule(bytes, noteSize(c), first);
  if (s.fragmentSet && s.fragmentMinSet)
    return FragmentSchedule(bytes, noteSize(s.fragment), first);
  // The search costs a few microseconds: the last answer is kept per
  // thread (messages of one size tend to follow each other).
  thread_local int64_t lastBytes = -1;
  thread_local KernelTraffic lastTraffic{0, 0};
  thread_local FragmentSchedule last;
  if (bytes == lastBytes && traffic.read == lastTraffic.read &&
      traffic.write == lastTraffic.write)
    return last;
  constexpr int64_t kLeast = int64_t(64) << 10,
                    kLargestLeast = int64_t(256) << 10,
                    kLargestMost = int64_t(64) << 20;
  FragmentSchedule best;
  double bestUs = std::numeric_limits<double>::infinity();
  auto consider = [&](int64_t largest, int64_t firstFragment) {
    FragmentSchedule candidate(bytes, largest, firstFragment);
    double us = predictIpcUs(candidate, traffic);
    if (us < bestUs || (us == bestUs && candidate.count() < best.count())) {
      best = candidate;
      bestUs = us;
    }
  };
  for (int64_t largest = s.fragmentSet ? noteSize(s.fragment) : kLargestLeast;;
       largest *= 2) {
    if (s.fragmentMinSet) {
      consider(largest, first);
    } else {
      for (int64_t f = std::min(kLeast, largest); f < largest; f *= 2)
        consider(largest, f);
      consider(largest, largest);
    }
    // Larger fragments than the message change nothing.
    if (s.fragmentSet || largest >= kLargestMost || largest >= bytes)
      break;
  }
  lastBytes = bytes;
  lastTraffic = traffic;
  last = best;
  return best;
}

} // namespace ddtc::mpi

extern "C" {

/// For calibration and benchmarks: the fragment size of later IPC messages
/// of this rank (0: the model's choice again).
__attribute__((visibility("default"))) void
ddtc_mpi_set_fragment(long long bytes) {
  ddtc::mpi::chooseFragment(bytes);
}

/// For calibration: the model's time for `bytes` in fixed fragments of
/// `fragment` bytes of a type reading one byte per packed byte, with the
/// given figures (so that the fit and the layer share one formula).
__attribute__((visibility("default"))) double
ddtc_mpi_model_predict(double startUs, double alphaUs, double gapUs,
                       double linkGBps, double localGBps, long long bytes,
                       long long fragment) {
  ddtc::mpi::ModelFigures m;
  m.startUs = startUs;
  m.alphaUs = alphaUs;
  m.gapUs = gapUs;
  m.linkGBps = linkGBps;
  m.localGBps = localGBps;
  return ddtc::mpi::pipelineUs(
      m, ddtc::mpi::FragmentSchedule(bytes, fragment, fragment),
      ddtc::mpi::KernelTraffic{});
}

/// The calibration file this process reads; the buffer gets the path
/// (truncated to `size`), the return value is its length.
__attribute__((visibility("default"))) int ddtc_mpi_model_path(char *buffer,
                                                               int size) {
  std::string p = ddtc::mpi::modelPath();
  if (buffer && size > 0) {
    std::strncpy(buffer, p.c_str(), static_cast<size_t>(size) - 1);
    buffer[size - 1] = 0;
  }
  return static_cast<int>(p.size());
}

} // extern "C"
