//===- ddtc-bench.cu - ddtc pack/unpack against cudaMemcpy, in one run ----===//
//
// For every layout of bench/layouts.py (read as TSV): checks ddtc's packed
// bytes against the reference (poisoned outputs, device and mapped host
// memory, unpack too), then times with CUDA events (warm-up, median of
// --reps) ddtc pack and unpack, cudaMemcpy of the same packed bytes,
// cudaMemcpy2D/3D where they express the layout, packing into mapped pinned
// host memory against a pinned cudaMemcpy D2H, and the empty-kernel launch.
// Also the JIT: cold compile (passes and NVRTC apart), in-process cache hit,
// and a fresh process loading from the disk cache. Prints a table of ratios
// and writes JSON.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"
#include "ddtc/ddtc.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "ddtc-bench: %s failed: %s (%s:%d)\n", #call,       \
                   cudaGetErrorString(err_), __FILE__, __LINE__);              \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#define CHECK_DDTC(call)                                                       \
  do {                                                                         \
    ddtc_status st_ = (call);                                                  \
    if (st_ != DDTC_SUCCESS) {                                                 \
      std::fprintf(stderr, "ddtc-bench: %s failed: %s: %s\n", #call,           \
                   ddtc_status_name(st_), ddtc_last_error());                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void emptyKernel() {}

/// Fills n bytes with a pattern that differs from byte to byte and run to
/// run (never zeros, never the poison).
__global__ void fillKernel(unsigned char *p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned long long x = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    p[i] = (unsigned char)(x | 1);
  }
}

struct Layout {
  std::string name, group, spec;
  int64_t count = 1, offset = 0;
  bool has2d = false, has3d = false;
  int64_t w2 = 0, h2 = 0, pitch2 = 0, off2 = 0;
  int64_t sizes3[3], sub3[3], start3[3], elem3 = 0;
};

std::vector<int64_t> splitInts(const std::string &s) {
  std::vector<int64_t> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    v.push_back(std::stoll(item));
  return v;
}

std::vector<Layout> readLayouts(const std::string &path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "ddtc-bench: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  std::vector<Layout> out;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, '\t'))
      f.push_back(field);
    if (f.size() != 7)
      continue;
    Layout l;
    l.name = f[0];
    l.group = f[1];
    l.count = std::stoll(f[2]);
    l.offset = std::stoll(f[3]);
    if (f[4] != "-") {
      auto v = splitInts(f[4]);
      l.has2d = true;
      l.w2 = v[0], l.h2 = v[1], l.pitch2 = v[2], l.off2 = v[3];
    }
    if (f[5] != "-") {
      auto v = splitInts(f[5]);
      l.has3d = true;
      for (int i = 0; i < 3; ++i)
        l.sizes3[i] = v[i], l.sub3[i] = v[3 + i], l.start3[i] = v[6 + i];
      l.elem3 = v[9];
    }
    std::string spec;
    for (size_t i = 0; i < f[6].size(); ++i) {
      if (f[6][i] == '\\' && i + 1 < f[6].size() && f[6][i + 1] == 'n') {
        spec += '\n';
        ++i;
      } else {
        spec += f[6][i];
      }
    }
    l.spec = spec;
    out.push_back(l);
  }
  return out;
}

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Median microseconds of `reps` runs of fn on the default stream, timed
/// with events, after `warmup` runs.
template <typename Fn> double timeUs(Fn fn, int reps, int warmup = 3) {
  for (int i = 0; i < warmup; ++i)
    fn();
  CHECK_CUDA(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    CHECK_CUDA(cudaEventRecord(a));
    fn();
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaEventSynchronize(b));
    CHECK_CUDA(cudaGetLastError());
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.0);
  }
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Result {
  std::map<std::string, double> v;
  std::map<std::string, std::string> s;
};

std::string json(const std::vector<std::pair<std::string, Result>> &rs,
                 const std::map<std::string, double> &global,
                 const std::string &device) {
  std::ostringstream os;
  os << "{\n \"device\": \"" << device << "\",\n";
  for (auto &[k, v] : global)
    os << " \"" << k << "\": " << v << ",\n";
  os << " \"layouts\": {\n";
  for (size_t i = 0; i < rs.size(); ++i) {
    os << "  \"" << rs[i].first << "\": {";
    bool first = true;
    for (auto &[k, v] : rs[i].second.v) {
      os << (first ? "" : ", ") << "\"" << k << "\": " << v;
      first = false;
    }
    for (auto &[k, v] : rs[i].second.s) {
      os << (first ? "" : ", ") << "\"" << k << "\": \"" << v << "\"";
      first = false;
    }
    os << "}" << (i + 1 < rs.size() ? "," : "") << "\n";
  }
  os << " }\n}\n";
  return os.str();
}

int usage() {
  std::puts(
      "usage: ddtc-bench --layouts FILE.tsv --out FILE.json [--reps N]\n"
      "                  [--only NAME]... [--no-check] [--disk-child]\n\n"
      "Benchmarks ddtc pack/unpack against cudaMemcpy, cudaMemcpy2D/3D and\n"
      "pinned D2H copies on the current GPU, after checking the packed and\n"
      "unpacked bytes against the reference. FILE.tsv comes from\n"
      "`python3 bench/layouts.py --tsv`. The JIT figures are cold when\n"
      "DDTC_CACHE_DIR is a new, empty folder\n"
      "(bench/run-gpu.sh makes one).\n"
      "--disk-child is internal: commit every layout from the disk cache and\n"
      "print the times.");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string layoutsPath, outPath;
  std::vector<std::string> only;
  int reps = 20;
  bool check = true, diskChild = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h")
      return usage();
    if (a == "--layouts" && i + 1 < argc)
      layoutsPath = argv[++i];
    else if (a == "--out" && i + 1 < argc)
      outPath = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--only" && i + 1 < argc)
      only.push_back(argv[++i]);
    else if (a == "--no-check")
      check = false;
    else if (a == "--disk-child")
      diskChild = true;
    else {
      std::fprintf(stderr, "ddtc-bench: unknown argument '%s' (see --help)\n",
                   a.c_str());
      return 2;
    }
  }
  if (layoutsPath.empty() || (outPath.empty() && !diskChild)) {
    std::fprintf(stderr, "ddtc-bench: --layouts and --out are required\n");
    return 2;
  }
  std::vector<Layout> layouts = readLayouts(layoutsPath);
  if (!only.empty())
    layouts.erase(std::remove_if(layouts.begin(), layouts.end(),
                                 [&](const Layout &l) {
                                   return std::find(only.begin(), only.end(),
                                                    l.name) == only.end();
                                 }),
                  layouts.end());
  int deviceCount = 0;
  if (cudaGetDeviceCount(&deviceCount) != cudaSuccess || deviceCount == 0) {
    std::puts("ddtc-bench: no CUDA device");
    return 77;
  }
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaFree(nullptr));
  CHECK_DDTC(ddtc_init());

  if (diskChild) {
    // A fresh process: every kernel must come from the disk cache.
    for (const Layout &l : layouts) {
      double t0 = nowMs();
      ddtc_type t = nullptr;
      CHECK_DDTC(ddtc_type_from_spec(l.spec.c_str(), "t", &t));
      double t1 = nowMs();
      CHECK_DDTC(ddtc_type_commit(t));
      CHECK_DDTC(ddtc_type_wait(t));
      double t2 = nowMs();
      ddtc_kernel_info info;
      CHECK_DDTC(ddtc_type_kernel_info(t, &info));
      std::printf("disk %s %.3f %.3f %d\n", l.name.c_str(), t2 - t1,
                  info.disk_load_ms, (int)info.origin);
      ddtc_type_free(&t);
    }
    return 0;
  }

  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::string device = prop.name;

  std::map<std::string, double> global;
  // The empty kernel: a single launch waited for, and back-to-back launches.
  global["empty_kernel_us"] = timeUs([] { emptyKernel<<<1, 32>>>(); }, 200, 20);
  {
    const int n = 1000;
    emptyKernel<<<1, 32>>>();
    CHECK_CUDA(cudaDeviceSynchronize());
    double t0 = nowMs();
    for (int i = 0; i < n; ++i)
      emptyKernel<<<1, 32>>>();
    CHECK_CUDA(cudaDeviceSynchronize());
    global["empty_kernel_back_to_back_us"] = (nowMs() - t0) * 1000.0 / n;
  }

  std::vector<std::pair<std::string, Result>> results;
  int failures = 0;
  std::printf("%-26s %9s %8s %8s %8s %8s %8s %8s %8s\n", "layout", "MiB",
              "pack", "unpack", "memcpy", "pk/mcp", "pk/2D3D", "host",
              "ho/d2h");
  for (const Layout &l : layouts) {
    Result r;
    // JIT: passes alone, then commit (compile), then a second commit of a
    // new handle of the same layout (in-process cache).
    ddtc::SpecFile spec;
    std::string error;
    if (!ddtc::parseSpec(l.spec, l.name, spec, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    const ddtc::Datatype &tree = *spec.find("t")->type;
    double p0 = nowMs();
    ddtc::KernelPlan plan;
    if (!ddtc::planKernel(tree, plan, error)) {
      std::fprintf(stderr, "%s: %s\n", l.name.c_str(), error.c_str());
      return 1;
    }
    r.v["passes_ms"] = nowMs() - p0;

    ddtc_type t = nullptr;
    CHECK_DDTC(ddtc_type_from_spec(l.spec.c_str(), "t", &t));
    double c0 = nowMs();
    CHECK_DDTC(ddtc_type_commit(t));
    double c1 = nowMs();
    CHECK_DDTC(ddtc_type_wait(t));
    double c2 = nowMs();
    ddtc_kernel_info info;
    CHECK_DDTC(ddtc_type_kernel_info(t, &info));
    r.v["commit_ms"] = c1 - c0;
    r.v["commit_and_wait_ms"] = c2 - c0;
    r.v["nvrtc_ms"] = info.compile_ms;
    r.v["kernel_origin"] = info.origin;
    r.v["width"] = info.width;
    r.v["uses_work_units"] = info.uses_work_units;
    r.s["shape"] = info.shape;
    {
      ddtc_type again = nullptr;
      CHECK_DDTC(ddtc_type_from_spec(l.spec.c_str(), "t", &again));
      double h0 = nowMs();
      CHECK_DDTC(ddtc_type_commit(again));
      r.v["cache_hit_us"] = (nowMs() - h0) * 1000.0;
      ddtc_type_free(&again);
    }

    int64_t size = 0, trueLb = 0, trueExtent = 0, packed = 0;
    CHECK_DDTC(ddtc_type_size(t, &size));
    CHECK_DDTC(ddtc_type_true_extent(t, &trueLb, &trueExtent));
    CHECK_DDTC(ddtc_type_packed_size(t, l.count, &packed));
    // The buffer covers the bytes the instances touch and their whole
    // extent, so cudaMemcpy2D/3D can address the array from its origin.
    int64_t lo = 0, hi = 0;
    ddtc::touchedSpan(tree, l.count, lo, hi, error);
    lo = std::min(lo, tree.layout().lb);
    hi = std::max(hi, tree.layout().lb + l.count * tree.layout().extent);
    int64_t spanBytes = hi - lo + l.offset;
    r.v["packed_bytes"] = (double)packed;

    unsigned char *src = nullptr, *dst = nullptr, *back = nullptr,
                  *hostPacked = nullptr;
    CHECK_CUDA(cudaMalloc(&src, spanBytes + 16));
    CHECK_CUDA(cudaMalloc(&dst, packed + 16));
    CHECK_CUDA(cudaMalloc(&back, spanBytes + 16));
    CHECK_CUDA(cudaHostAlloc(&hostPacked, packed + 16, cudaHostAllocMapped));
    unsigned char *origin = src + l.offset - lo;
    unsigned char *backOrigin = back + l.offset - lo;
    fillKernel<<<1024, 256>>>(src, spanBytes, 12345u);
    CHECK_CUDA(cudaGetLastError());

    if (check) {
      std::vector<unsigned char> hostSrc(spanBytes), expected(packed),
          got(packed);
      CHECK_CUDA(
          cudaMemcpy(hostSrc.data(), src, spanBytes, cudaMemcpyDeviceToHost));
      ddtc::referencePack(tree, l.count, hostSrc.data() + l.offset - lo,
                          expected.data());
      // Device destination, poisoned.
      CHECK_CUDA(cudaMemset(dst, 0xA5, packed));
      CHECK_DDTC(ddtc_pack(t, origin, l.count, 0, packed, dst, nullptr, 0));
      CHECK_CUDA(cudaMemcpy(got.data(), dst, packed, cudaMemcpyDeviceToHost));
      bool ok = got == expected;
      // Mapped host destination, poisoned.
      std::memset(hostPacked, 0xA5, packed);
      CHECK_DDTC(
          ddtc_pack(t, origin, l.count, 0, packed, hostPacked, nullptr, 0));
      CHECK_CUDA(cudaDeviceSynchronize());
      ok = ok && std::memcmp(hostPacked, expected.data(), packed) == 0;
      // Unpack into a poisoned origin.
      CHECK_CUDA(cudaMemset(back, 0x5A, spanBytes));
      CHECK_DDTC(
          ddtc_unpack(t, backOrigin, l.count, 0, packed, dst, nullptr, 0));
      std::vector<unsigned char> unpacked(spanBytes), want(spanBytes, 0x5A);
      CHECK_CUDA(
          cudaMemcpy(unpacked.data(), back, spanBytes, cudaMemcpyDeviceToHost));
      ddtc::referenceUnpack(tree, l.count, expected.data(),
                            want.data() + l.offset - lo);
      ok = ok && unpacked == want;
      r.s["check"] = ok ? "passed" : "FAILED";
      failures += !ok;
    } else {
      r.s["check"] = "skipped";
    }

    r.v["pack_us"] = timeUs(
        [&] { ddtc_pack(t, origin, l.count, 0, packed, dst, nullptr, 0); },
        reps);
    r.v["unpack_us"] = timeUs(
        [&] {
          ddtc_unpack(t, backOrigin, l.count, 0, packed, dst, nullptr, 0);
        },
        reps);
    r.v["memcpy_d2d_us"] = timeUs(
        [&] { cudaMemcpyAsync(back, dst, packed, cudaMemcpyDeviceToDevice); },
        reps);
    if (l.has2d) {
      r.v["memcpy2d_d2d_us"] = timeUs(
          [&] {
            cudaMemcpy2DAsync(dst, l.w2, origin - l.offset + l.off2, l.pitch2,
                              l.w2, l.h2, cudaMemcpyDeviceToDevice);
          },
          reps);
      r.v["memcpy2d_d2h_us"] = timeUs(
          [&] {
            cudaMemcpy2DAsync(hostPacked, l.w2, origin - l.offset + l.off2,
                              l.pitch2, l.w2, l.h2, cudaMemcpyDeviceToHost);
          },
          std::max(3, reps / 4), 1);
    }
    if (l.has3d) {
      cudaMemcpy3DParms p = {};
      // Linear memory: widths and x positions in bytes.
      size_t srcPitch = l.sizes3[2] * l.elem3, dstPitch = l.sub3[2] * l.elem3;
      p.srcPtr = make_cudaPitchedPtr(origin, srcPitch, srcPitch, l.sizes3[1]);
      p.srcPos = make_cudaPos(l.start3[2] * l.elem3, l.start3[1], l.start3[0]);
      p.dstPtr = make_cudaPitchedPtr(dst, dstPitch, dstPitch, l.sub3[1]);
      p.extent = make_cudaExtent(l.sub3[2] * l.elem3, l.sub3[1], l.sub3[0]);
      p.kind = cudaMemcpyDeviceToDevice;
      // Only timed when the runtime accepts the copy (it is a comparison,
      // not something ddtc depends on).
      cudaError_t err = cudaMemcpy3DAsync(&p);
      if (err == cudaSuccess)
        err = cudaDeviceSynchronize();
      if (err == cudaSuccess) {
        r.v["memcpy3d_d2d_us"] = timeUs([&] { cudaMemcpy3DAsync(&p); }, reps);
      } else {
        r.s["memcpy3d_error"] = cudaGetErrorString(err);
        cudaGetLastError();
      }
    }
    r.v["pack_to_host_us"] = timeUs(
        [&] {
          ddtc_pack(t, origin, l.count, 0, packed, hostPacked, nullptr, 0);
        },
        std::max(3, reps / 2));
    r.v["memcpy_d2h_us"] = timeUs(
        [&] {
          cudaMemcpyAsync(hostPacked, dst, packed, cudaMemcpyDeviceToHost);
        },
        std::max(3, reps / 2));

    double mcp = r.v["memcpy_d2d_us"];
    r.v["pack_vs_memcpy"] = mcp / r.v["pack_us"];
    r.v["unpack_vs_memcpy"] = mcp / r.v["unpack_us"];
    double alt = l.has2d   ? r.v["memcpy2d_d2d_us"]
                 : l.has3d ? r.v["memcpy3d_d2d_us"]
                           : 0;
    if (alt > 0)
      r.v["pack_vs_memcpy2d3d"] = alt / r.v["pack_us"];
    r.v["host_vs_d2h"] = r.v["memcpy_d2h_us"] / r.v["pack_to_host_us"];
    r.v["pack_GBps"] = packed / r.v["pack_us"] / 1e3;

    std::printf("%-26s %9.2f %8.1f %8.1f %8.1f %8.3f %8s %8.1f %8.3f%s\n",
                l.name.c_str(), packed / 1048576.0, r.v["pack_us"],
                r.v["unpack_us"], mcp, r.v["pack_vs_memcpy"],
                alt > 0
                    ? std::to_string(alt / r.v["pack_us"]).substr(0, 6).c_str()
                    : "-",
                r.v["pack_to_host_us"], r.v["host_vs_d2h"],
                r.s["check"] == "passed" ? "" : "  CHECK FAILED");
    std::fflush(stdout);
    CHECK_CUDA(cudaFree(src));
    CHECK_CUDA(cudaFree(dst));
    CHECK_CUDA(cudaFree(back));
    CHECK_CUDA(cudaFreeHost(hostPacked));
    ddtc_type_free(&t);
    results.push_back({l.name, r});
  }
  ddtc_stats stats;
  CHECK_DDTC(ddtc_get_stats(&stats));
  global["nvrtc_compiles"] = (double)stats.nvrtc_compiles;
  global["generic_launches"] = (double)stats.generic_launches;
  global["specialized_launches"] = (double)stats.specialized_launches;
  std::ofstream(outPath) << json(results, global, device);
  std::printf("empty kernel: %.2f us waited, %.2f us back to back\n",
              global["empty_kernel_us"],
              global["empty_kernel_back_to_back_us"]);
  std::printf("%d checked, %d failed\n", (int)results.size(), failures);
  return failures ? 1 : 0;
}
