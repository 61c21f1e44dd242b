//===- ddtc-mpi-calibrate.cu - The figures of libddtc-mpi's model -------===//
//
// Two ranks of one host, libddtc-mpi preloaded. Measures, with ping-pongs of
// device buffers through the layer (one-way = half the round trip, median
// of --reps):
//   - a vector type (blocks of 64 B, stride 128 B) through CUDA IPC at
//     4 MiB and 64 MiB packed, in fragments of 1, 4 and 16 MiB: least
//     squares give the IPC pipeline's fixed cost per message (start), its
//     host cost per fragment (alpha) and the rate of the moving stage (link);
//   - MPI_Pack of that type between device buffers: the local kernel rate;
//   - the same type through the eager protocol (host memory) at 64 B and
//     64 KiB: its fixed cost and rate, against which the layer decides
//     between eager and IPC for messages up to DDTC_MPI_EAGER_LIMIT;
//   - host bytes through plain MPI (PMPI) at 8 B and 4 MiB, for reference.
// Writes the figures to the calibration file the layer reads (in the ddtc
// cache folder, named after the GPU, the driver and the host) unless
// --dry-run, and all measurements to --json.
//===----------------------------------------------------------------------===//

#include <mpi.h>

#include <cuda_runtime.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

int rank = 0;

#define CHECK_CUDA(x)                                                          \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "ddtc-mpi-calibrate [rank %d]: %s: %s\n", rank, #x, \
                   cudaGetErrorString(e_));                                    \
      MPI_Abort(MPI_COMM_WORLD, 1);                                            \
    }                                                                          \
  } while (0)

template <typename F> F symbol(const char *name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// One-way microseconds (median of `reps` repetitions of `iters` round
/// trips), the same on both ranks. `host` uses PMPI (no layer).
double pingPong(void *buf, int count, MPI_Datatype type, int reps, int iters,
                bool host = false) {
  auto send = host ? PMPI_Send : MPI_Send;
  auto recv = host ? PMPI_Recv : MPI_Recv;
  int peer = 1 - rank;
  std::vector<double> samples;
  for (int r = -1; r < reps; ++r) { // r = -1: warm-up
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      if (rank == 0) {
        send(buf, count, type, peer, 7, MPI_COMM_WORLD);
        recv(buf, count, type, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        recv(buf, count, type, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        send(buf, count, type, peer, 7, MPI_COMM_WORLD);
      }
    }
    if (r >= 0)
      samples.push_back((MPI_Wtime() - t0) * 1e6 / (2.0 * iters));
  }
  double us = median(samples);
  PMPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return us;
}

/// Solves the least-squares fit y = a + b * x1 + c * x2 (normal equations).
/// Least squares y = a + b x; false when x does not vary.
bool fit2(const std::vector<double> &x, const std::vector<double> &y,
          double &a, double &b) {
  double n = static_cast<double>(y.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  double d = n * sxx - sx * sx;
  if (n < 2 || std::fabs(d) < 1e-30)
    return false;
  b = (n * sxy - sx * sy) / d;
  a = (sy - b * sx) / n;
  return true;
}

bool fit3(const std::vector<double> &x1, const std::vector<double> &x2,
          const std::vector<double> &y, double &a, double &b, double &c) {
  double m[3][4] = {};
  for (size_t i = 0; i < y.size(); ++i) {
    double v[3] = {1, x1[i], x2[i]};
    for (int r = 0; r < 3; ++r) {
      for (int k = 0; k < 3; ++k)
        m[r][k] += v[r] * v[k];
      m[r][3] += v[r] * y[i];
    }
  }
  for (int col = 0; col < 3; ++col) {
    int piv = col;
    for (int r = col + 1; r < 3; ++r)
      if (std::fabs(m[r][col]) > std::fabs(m[piv][col]))
        piv = r;
    if (std::fabs(m[piv][col]) < 1e-30)
      return false;
    for (int k = 0; k < 4; ++k)
      std::swap(m[col][k], m[piv][k]);
    for (int r = 0; r < 3; ++r)
      if (r != col) {
        double f = m[r][col] / m[col][col];
        for (int k = 0; k < 4; ++k)
          m[r][k] -= f * m[col][k];
      }
  }
  a = m[0][3] / m[0][0];
  b = m[1][3] / m[1][1];
  c = m[2][3] / m[2][2];
  return true;
}

void usage() {
  std::printf(
      "usage: mpirun -np 2 -x LD_PRELOAD=BUILD/lib/libddtc-mpi.so "
      "ddtc-mpi-calibrate [options]\n"
      "Measures the figures of libddtc-mpi's model between two ranks of one\n"
      "host (CUDA IPC, the eager protocol, the local kernels) and writes the\n"
      "calibration file the layer reads (its path is printed).\n"
      "  --reps N      repetitions per point (default 7)\n"
      "  --dry-run     measure and print, write no calibration file\n"
      "  --json FILE   every measurement and the figures as JSON\n"
      "  --help        this text\n"
      "Each rank uses GPU OMPI_COMM_WORLD_LOCAL_RANK mod the device count.\n"
      "Exits 77 without a GPU, 2 when not run on 2 ranks with libddtc-mpi,\n"
      "3 when the ranks cannot use CUDA IPC.\n");
}

} // namespace

int main(int argc, char **argv) {
  int reps = 7;
  bool dryRun = false;
  std::string jsonPath;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--dry-run") {
      dryRun = true;
    } else if (a == "--json" && i + 1 < argc) {
      jsonPath = argv[++i];
    } else {
      std::fprintf(stderr,
                   "ddtc-mpi-calibrate: unknown or incomplete option "
                   "'%s' (see --help)\n",
                   a.c_str());
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto setProtocol = symbol<int (*)(const char *)>("ddtc_mpi_set_protocol");
  auto setFragment = symbol<void (*)(long long)>("ddtc_mpi_set_fragment");
  auto modelPath = symbol<int (*)(char *, int)>("ddtc_mpi_model_path");
  auto ipcReceives = symbol<long long (*)()>("ddtc_mpi_ipc_receives");
  auto active = symbol<int (*)()>("ddtc_mpi_active");
  if (size != 2 || !setProtocol || !setFragment || !modelPath || !ipcReceives ||
      !active || !active()) {
    if (rank == 0)
      std::fprintf(stderr, "ddtc-mpi-calibrate: run 2 ranks with libddtc-mpi "
                           "preloaded and active (see --help)\n");
    MPI_Finalize();
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    if (rank == 0)
      std::printf("ddtc-mpi-calibrate: skipped: no GPU\n");
    MPI_Finalize();
    return 77;
  }
  const char *lr = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  CHECK_CUDA(cudaSetDevice((lr ? std::atoi(lr) : rank) % devices));

  const long long kMiB = 1 << 20;
  const long long big = 64 * kMiB;
  // The vector: blocks of 64 B (8 doubles), stride 128 B.
  MPI_Datatype block;
  MPI_Type_vector(1, 8, 16, MPI_DOUBLE, &block);
  MPI_Datatype stride;
  MPI_Type_create_resized(block, 0, 128, &stride);
  MPI_Type_commit(&stride);
  // The small messages: two blocks of 32 B, 128 B apart (one block alone is
  // one run of memory, which the layer copies instead of packing: a small
  // contiguous message, not the typed one the choice is made for).
  MPI_Datatype pair;
  MPI_Type_vector(2, 4, 16, MPI_DOUBLE, &pair);
  MPI_Type_commit(&pair);
  char *dev = nullptr, *packed = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, 2 * big));
  CHECK_CUDA(cudaMalloc(&packed, big));
  CHECK_CUDA(cudaMemset(dev, 1, 2 * big));

  struct Point {
    const char *what;
    long long bytes, fragment;
    double us;
  };
  std::vector<Point> points;
  // `count` instances of `type` (64 B packed each: `stride` or `pair`).
  auto vectorPoint = [&](const char *what, long long bytes, long long frag,
                         MPI_Datatype type) {
    setFragment(frag);
    int count = static_cast<int>(bytes / 64);
    double us =
        pingPong(dev, count, type, reps, bytes >= 16 * kMiB ? 3 : 20);
    points.push_back({what, bytes, frag, us});
    if (rank == 0)
      std::printf("  %-26s %10lld B  fragment %9lld  %9.2f us\n", what, bytes,
                  frag, us);
    return us;
  };

  if (rank == 0)
    std::printf("ddtc-mpi-calibrate: %d reps per point\n", reps);
  setProtocol("ipc");
  long long before = ipcReceives();
  for (long long m : {4 * kMiB, big})
    for (long long f : {1 * kMiB, 4 * kMiB, 16 * kMiB})
      if (f <= m)
        vectorPoint("vector through CUDA IPC", m, f, stride);
  long long viaIpc = ipcReceives() - before;
  PMPI_Allreduce(MPI_IN_PLACE, &viaIpc, 1, MPI_LONG_LONG, MPI_SUM,
                 MPI_COMM_WORLD);
  setFragment(0);
  double ipcSmall = vectorPoint("vector through CUDA IPC", 64, 64, pair);
  setFragment(0);
  setProtocol("eager");
  double eagerSmall = vectorPoint("vector, eager", 64, 64, pair);
  double eagerLarge =
      vectorPoint("vector, eager", 64 * 1024, 64 * 1024, stride);
  setProtocol("auto");
  if (viaIpc == 0) {
    if (rank == 0)
      std::fprintf(stderr, "ddtc-mpi-calibrate: the ranks do not reach each "
                           "other through CUDA IPC; nothing to calibrate\n");
    MPI_Finalize();
    return 3;
  }

  // The local kernel rate: MPI_Pack between device buffers.
  double packUs = 0;
  {
    int count = static_cast<int>(big / 64);
    std::vector<double> s;
    for (int r = -1; r < reps; ++r) {
      int pos = 0;
      double t0 = MPI_Wtime();
      MPI_Pack(dev, count, stride, packed, static_cast<int>(big), &pos,
               MPI_COMM_WORLD);
      CHECK_CUDA(cudaDeviceSynchronize());
      if (r >= 0)
        s.push_back((MPI_Wtime() - t0) * 1e6);
    }
    packUs = median(s);
    PMPI_Bcast(&packUs, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
  double localGBps = big / packUs / 1e3;

  // Host bytes through the MPI library.
  std::vector<char> host(4 * kMiB);
  double hostSmall = pingPong(host.data(), 8, MPI_BYTE, reps, 200, true);
  double hostLarge = pingPong(host.data(), static_cast<int>(host.size()),
                              MPI_BYTE, reps, 20, true);

  // Fit T - 2 f / local = start + n * alpha + M / link over the IPC points.
  std::vector<double> xn, xm, y;
  for (const Point &p : points)
    if (p.fragment >= kMiB) {
      double f = static_cast<double>(std::min(p.bytes, p.fragment));
      xn.push_back(std::ceil(static_cast<double>(p.bytes) / p.fragment));
      xm.push_back(static_cast<double>(p.bytes));
      y.push_back(p.us - 2 * f / (localGBps * 1e3));
    }
  double start = 0, alpha = 0, inv = 0;
  bool ok = fit3(xn, xm, y, start, alpha, inv) && inv > 0 && alpha > 0;
  // A link faster than the GPU's own memory (or none at all) means the
  // transfer term is not separable from the per-fragment cost: the ranks
  // share one GPU, whose peer reads are local reads. Then the link is the
  // local rate and only the start and the cost per fragment are fitted.
  const double localInv = 1.0 / (localGBps * 1e3);
  bool sameMemory = false;
  if (!ok || inv < localInv) {
    std::vector<double> rest(y.size());
    for (size_t i = 0; i < y.size(); ++i)
      rest[i] = y[i] - xm[i] * localInv;
    sameMemory = fit2(xn, rest, start, alpha) && alpha > 0;
    ok = sameMemory;
    inv = localInv;
  }
  double linkGBps = ok ? 1.0 / inv / 1e3 : 0;
  start = std::max(start, 0.0);
  double eagerGBps =
      (64 * 1024 - 64) / std::max(eagerLarge - eagerSmall, 1e-3) / 1e3;

  char path[4096] = {};
  modelPath(path, sizeof path);
  int rc = 0;
  if (rank == 0) {
    std::printf("local pack (MPI_Pack, 64 MiB, device to device): %.1f us = "
                "%.0f GB/s\n",
                packUs, localGBps);
    std::printf("host MPI: 8 B %.2f us one-way, 4 MiB %.1f us (%.1f GB/s)\n",
                hostSmall, hostLarge, 4.0 * kMiB / hostLarge / 1e3);
    std::printf("small messages: 64 B through CUDA IPC %.2f us, eager %.2f "
                "us; eager 64 KiB %.2f us\n",
                ipcSmall, eagerSmall, eagerLarge);
    if (!ok) {
      std::fprintf(stderr, "ddtc-mpi-calibrate: the IPC points do not fit the "
                           "model (no positive rate or cost per fragment)\n");
      rc = 4;
    } else {
      std::printf("model: start %.1f us, %.1f us per fragment, link %.0f "
                  "GB/s%s, kernels %.0f GB/s\n",
                  start, alpha, linkGBps,
                  sameMemory ? " (the local rate: the points leave no link "
                               "rate apart, as on one GPU)"
                             : "",
                  localGBps);
      double worst = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        double pred = start + xn[i] * alpha + xm[i] * inv;
        worst = std::max(worst, std::fabs(pred - y[i]) / (y[i] + 1e-9));
      }
      std::printf("fit: worst relative error over the %zu IPC points %.0f%%\n",
                  y.size(), 100 * worst);
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    int driverVersion = 0;
    cudaDriverGetVersion(&driverVersion);
    char hostName[256] = {};
    gethostname(hostName, sizeof hostName - 1);
    if (ok && !dryRun) {
      std::ofstream f(path);
      f << "# libddtc-mpi model, measured by ddtc-mpi-calibrate\n"
        << "gpu " << prop.name << "\n"
        << "driver " << driverVersion << "\n"
        << "host " << hostName << "\n"
        << "ipc_start_us " << start << "\n"
        << "ipc_alpha_us " << alpha << "\n"
        << "ipc_link_gbps " << linkGBps << "\n"
        << "ipc_local_gbps " << localGBps << "\n"
        << "eager_start_us " << eagerSmall << "\n"
        << "eager_gbps " << eagerGBps << "\n"
        << "ipc_small_us " << ipcSmall << "\n"
        << "host_mpi_small_us " << hostSmall << "\n"
        << "host_mpi_4mib_us " << hostLarge << "\n";
      if (!f) {
        std::fprintf(stderr, "ddtc-mpi-calibrate: cannot write %s\n", path);
        rc = 1;
      } else {
        std::printf("wrote %s\n", path);
      }
    } else if (dryRun) {
      std::printf("--dry-run: %s not written\n", path);
    }
    if (!jsonPath.empty()) {
      std::ofstream j(jsonPath);
      j << "{\n  \"gpu\": \"" << prop.name
        << "\",\n  \"driver\": " << driverVersion << ",\n  \"host\": \""
        << hostName << "\",\n  \"reps\": " << reps << ",\n  \"points\": [\n";
      for (size_t i = 0; i < points.size(); ++i)
        j << "    {\"what\": \"" << points[i].what
          << "\", \"bytes\": " << points[i].bytes
          << ", \"fragment\": " << points[i].fragment
          << ", \"one_way_us\": " << points[i].us << "}"
          << (i + 1 < points.size() ? "," : "") << "\n";
      j << "  ],\n  \"local_pack_us_64mib\": " << packUs
        << ",\n  \"host_mpi_small_us\": " << hostSmall
        << ",\n  \"host_mpi_4mib_us\": " << hostLarge
        << ",\n  \"fit_ok\": " << (ok ? "true" : "false")
        << ",\n  \"ipc_start_us\": " << start
        << ",\n  \"ipc_alpha_us\": " << alpha
        << ",\n  \"ipc_link_gbps\": " << linkGBps
        << ",\n  \"ipc_local_gbps\": " << localGBps
        << ",\n  \"eager_start_us\": " << eagerSmall
        << ",\n  \"eager_gbps\": " << eagerGBps << "\n}\n";
    }
  }
  PMPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Type_free(&pair);
  MPI_Type_free(&stride);
  MPI_Type_free(&block);
  cudaFree(dev);
  cudaFree(packed);
  MPI_Finalize();
  return rc;
}
