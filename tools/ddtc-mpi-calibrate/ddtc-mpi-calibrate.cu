//===- ddtc-mpi-calibrate.cu - The figures of libddtc-mpi's model -------===//
//
// Two ranks of one host, libddtc-mpi preloaded. Measures, with ping-pongs of
// device buffers through the layer (one-way = half the round trip, median
// of --reps):
//   - a vector type (blocks of 64 B, stride 128 B) through CUDA IPC at
//     4 MiB and 64 MiB packed, in fragments of 1, 4 and 16 MiB: the layer's
//     model fitted to them gives the IPC pipeline's fixed cost per message
//     (start), the hosts' and the GPUs' cost per fragment (alpha, gap) and
//     the rate of the moving stage (link);
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
#include <limits>
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
  auto predict =
      symbol<double (*)(double, double, double, double, double, long long,
                        long long)>("ddtc_mpi_model_predict");
  if (size != 2 || !setProtocol || !setFragment || !modelPath || !ipcReceives ||
      !active || !predict || !active()) {
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

  // Fit the layer's model (its Model.cpp, through ddtc_mpi_model_predict)
  // to the IPC points. For each cost per fragment (alpha) and link rate of
  // a grid, the start and the GPUs' cost per fragment (gap) enter linearly:
  // least squares of the relative errors give them (neither negative); the
  // pair with the smallest error wins.
  std::vector<const Point *> fitted;
  for (const Point &p : points)
    if (p.fragment >= kMiB)
      fitted.push_back(&p);
  double start = 0, alpha = 0, gap = 0, linkGBps = 0;
  double bestErr = std::numeric_limits<double>::infinity();
  // Each point's count of fragments, as the model cuts it: what a gap of
  // 1 us adds to its prediction.
  std::vector<double> base(fitted.size()), frags(fitted.size());
  for (size_t i = 0; i < fitted.size(); ++i)
    frags[i] = predict(0, 0, 1, localGBps, localGBps, fitted[i]->bytes,
                       fitted[i]->fragment) -
               predict(0, 0, 0, localGBps, localGBps, fitted[i]->bytes,
                       fitted[i]->fragment);
  for (double a = 0.5; a <= 40.0; a += 0.25)
    for (double link = 20.0; link <= localGBps * 1.0001; link *= 1.01) {
      double sw = 0, swn = 0, swnn = 0, swr = 0, swnr = 0;
      for (size_t i = 0; i < fitted.size(); ++i) {
        base[i] = predict(0, a, 0, link, localGBps, fitted[i]->bytes,
                          fitted[i]->fragment);
        double y = fitted[i]->us, w = 1.0 / (y * y), r = y - base[i];
        double n = frags[i];
        sw += w, swn += w * n, swnn += w * n * n, swr += w * r,
            swnr += w * n * r;
      }
      double d = sw * swnn - swn * swn, s = 0, g = 0;
      if (std::fabs(d) > 1e-30) {
        s = (swr * swnn - swn * swnr) / d;
        g = (sw * swnr - swn * swr) / d;
      }
      if (g < 0 || std::fabs(d) <= 1e-30) {
        g = 0;
        s = swr / sw;
      }
      if (s < 0) {
        s = 0;
        g = std::max(0.0, swnr / swnn);
      }
      double err = 0;
      for (size_t i = 0; i < fitted.size(); ++i) {
        double e = (s + g * frags[i] + base[i] - fitted[i]->us) / fitted[i]->us;
        err += e * e;
      }
      if (err < bestErr) {
        bestErr = err;
        start = s, alpha = a, gap = g, linkGBps = link;
      }
    }
  const bool ok = fitted.size() >= 4 && std::isfinite(bestErr);
  // The fastest link the grid allows: the points leave no link rate apart
  // from the kernels' (the ranks share one GPU, whose peer reads are local
  // reads).
  const bool sameMemory = ok && linkGBps * 1.01 > localGBps;
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
      std::fprintf(stderr, "ddtc-mpi-calibrate: too few IPC points to fit the "
                           "model (%zu of at least 4)\n",
                   fitted.size());
      rc = 4;
    } else {
      std::printf("model: start %.1f us, %.1f us per fragment on the hosts "
                  "and %.2f us on the GPUs, link %.0f GB/s%s, kernels %.0f "
                  "GB/s\n",
                  start, alpha, gap, linkGBps,
                  sameMemory ? " (the local rate: the points leave no link "
                               "rate apart, as on one GPU)"
                             : "",
                  localGBps);
      double worst = 0;
      for (const Point *p : fitted) {
        double pred = predict(start, alpha, gap, linkGBps, localGBps, p->bytes,
                              p->fragment);
        worst = std::max(worst, std::fabs(pred - p->us) / p->us);
      }
      std::printf("fit: worst relative error over the %zu IPC points %.0f%%\n",
                  fitted.size(), 100 * worst);
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
        << "ipc_gap_us " << gap << "\n"
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
        << ",\n  \"ipc_alpha_us\": " << alpha << ",\n  \"ipc_gap_us\": " << gap
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
