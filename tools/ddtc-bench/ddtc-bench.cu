//===- ddtc-bench.cu - ddtc pack/unpack against cudaMemcpy, in one run ----===//
//
// For every layout of bench/layouts.py (read as TSV): checks ddtc's packed
// bytes against the reference (poisoned outputs, device and mapped host
// memory, unpack too), then times with CUDA events (warm-up, median of
// --reps) ddtc pack and unpack, cudaMemcpy of the same packed bytes,
// cudaMemcpy2D/3D where they express the layout, packing into mapped pinned
// host memory against a pinned cudaMemcpy D2H, and the empty-kernel launch.
// Each direction is also held against the memory limit: cudaMemcpy moving the
// DRAM traffic the layout forces (TrafficModel.h). With --yaksa (or
// DDTC_YAKSA_LIB), MPICH's datatype engine packs the same layouts in the same
// run (YaksaPeer.h); without it its columns say "not run". Also the JIT: cold
// compile (passes and NVRTC apart), in-process cache hit, and a fresh process
// loading from the disk cache. Prints a table of ratios and writes JSON.
// --calibrate-traffic instead measures the traffic model's assumptions
// (TrafficCalibration.h).
//===----------------------------------------------------------------------===//

#include "BenchCuda.h"
#include "LaunchCost.h"
#include "LayoutFile.h"
#include "TrafficCalibration.h"
#include "TrafficModel.h"
#include "Watchdog.h"
#include "YaksaApi.h"
#include "YaksaPeer.h"

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"
#include "ddtc/ddtc.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ddtc::timeUs;

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
  std::vector<ddtc::LayoutLine> lines;
  if (!ddtc::readLayoutFile(path, lines)) {
    std::fprintf(stderr, "ddtc-bench: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  std::vector<Layout> out;
  for (const ddtc::LayoutLine &f : lines) {
    Layout l;
    l.name = f.name;
    l.group = f.group;
    l.count = std::stoll(f.count);
    l.offset = std::stoll(f.offset);
    if (f.memcpy2d != "-") {
      auto v = splitInts(f.memcpy2d);
      l.has2d = true;
      l.w2 = v[0], l.h2 = v[1], l.pitch2 = v[2], l.off2 = v[3];
    }
    if (f.memcpy3d != "-") {
      auto v = splitInts(f.memcpy3d);
      l.has3d = true;
      for (int i = 0; i < 3; ++i)
        l.sizes3[i] = v[i], l.sub3[i] = v[3 + i], l.start3[i] = v[6 + i];
      l.elem3 = v[9];
    }
    l.spec = f.spec;
    out.push_back(l);
  }
  return out;
}

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Result {
  std::map<std::string, double> v;
  std::map<std::string, std::string> s;
};

/// Runs the traffic model lists at the most for one layout: 2^26 runs take
/// 1 GiB of host memory while they are counted.
constexpr int64_t kTrafficMaxRuns = int64_t(1) << 26;
/// New handles timed after the first for the in-process cache hit.
constexpr int kCacheHitReps = 5;

/// Where the benchmark puts a layout's origin in its buffers: allocations
/// (cudaMalloc, 256-byte aligned) start at the lowest byte the instances
/// touch or at the lower bound, whichever is lower, then `offset` further.
int64_t originInBuffer(const ddtc::Datatype &tree, const Layout &l) {
  int64_t lo = 0, hi = 0;
  std::string error;
  ddtc::touchedSpan(tree, l.count, lo, hi, error);
  return l.offset - std::min(lo, tree.layout().lb);
}

/// The offset of `p` past a boundary of the largest read granule (a
/// multiple of every granule and of the sector).
int64_t granuleOffset(const void *p) {
  return (int64_t)((uintptr_t)p % ddtc::kMaxReadGranule);
}

/// Counts the traffic of a layout whose source lies `sourceOffset` and
/// whose unpack destination lies `destOffset` past a granule boundary
/// (TrafficModel.h), into the fields of `r` the JSON reports. False, with
/// r.s["traffic"] saying why, when the layout has too many runs to count.
bool countLayoutTraffic(const ddtc::CanonicalLayout &layout, int64_t count,
                        int64_t sourceOffset, int64_t destOffset,
                        const ddtc::TrafficParams &params, Result &r) {
  ddtc::SectorFootprint src, dst;
  std::string error;
  // Counting lists every run (seconds for 16M runs): once per alignment.
  bool counted = ddtc::countSectorFootprint(layout, count, sourceOffset,
                                            params.readGranule, kTrafficMaxRuns,
                                            src, error);
  dst = src;
  if (counted && destOffset != sourceOffset)
    counted = ddtc::countSectorFootprint(layout, count, destOffset,
                                         params.readGranule, kTrafficMaxRuns,
                                         dst, error);
  if (!counted) {
    r.s["traffic"] = "not counted: " + error;
    return false;
  }
  const ddtc::Traffic pack = ddtc::packTraffic(src);
  const ddtc::Traffic unpack =
      ddtc::unpackTraffic(dst, params.partialWriteCost);
  const ddtc::Traffic hostSide = ddtc::packToHostDeviceTraffic(src);
  r.v["sectors_read"] = (double)src.sectors;
  r.v["granules_read"] = (double)src.granules;
  r.v["sectors_written"] = (double)dst.sectors;
  r.v["partial_sectors_written"] = (double)dst.partialSectors;
  r.v["pack_traffic_bytes"] = (double)pack.total();
  r.v["unpack_traffic_bytes"] = (double)unpack.total();
  r.v["host_device_traffic_bytes"] = (double)hostSide.total();
  return true;
}

/// Adds the traffic ratios of a layout whose kernels were timed in `r`: the
/// traffic its source and unpack destination force at their real alignment
/// (countLayoutTraffic), the time cudaMemcpy D2D needs to move each
/// direction's traffic (a copy of N bytes moves 2N: half read, half
/// written), and that time over the kernel's. Into mapped host memory the
/// limit is the slower of the source's granules at the memcpy rate and the
/// pinned D2H copy of the packed bytes.
void addTrafficRatios(const ddtc::CanonicalLayout &layout, int64_t count,
                      const void *source, const void *unpackDest,
                      const ddtc::TrafficParams &params, int reps, Result &r) {
  if (!countLayoutTraffic(layout, count, granuleOffset(source),
                          granuleOffset(unpackDest), params, r))
    return;
  const int64_t pack = (int64_t)r.v["pack_traffic_bytes"],
                unpack = (int64_t)r.v["unpack_traffic_bytes"],
                hostSide = (int64_t)r.v["host_device_traffic_bytes"];
  const int64_t most = std::max({pack, unpack, hostSide}) / 2 + 1;
  unsigned char *a = nullptr, *b = nullptr;
  CHECK_CUDA(cudaMalloc(&a, most));
  CHECK_CUDA(cudaMalloc(&b, most));
  std::map<int64_t, double> memcpyUs; // by traffic bytes
  auto moving = [&](int64_t traffic) {
    auto it = memcpyUs.find(traffic);
    if (it != memcpyUs.end())
      return it->second;
    double us = timeUs(
        [&] { cudaMemcpyAsync(b, a, traffic / 2, cudaMemcpyDeviceToDevice); },
        reps);
    return memcpyUs[traffic] = us;
  };
  r.v["memcpy_pack_traffic_us"] = moving(pack);
  r.v["memcpy_unpack_traffic_us"] = moving(unpack);
  r.v["memcpy_host_traffic_us"] = moving(hostSide);
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  r.v["pack_vs_traffic"] = r.v["memcpy_pack_traffic_us"] / r.v["pack_us"];
  r.v["unpack_vs_traffic"] = r.v["memcpy_unpack_traffic_us"] / r.v["unpack_us"];
  r.v["host_vs_traffic"] =
      std::max(r.v["memcpy_host_traffic_us"], r.v["memcpy_d2h_us"]) /
      r.v["pack_to_host_us"];
}

/// "-" for a ratio that was not measured.
std::string ratioText(const Result &r, const char *key) {
  auto it = r.v.find(key);
  if (it == r.v.end())
    return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", it->second);
  return buf;
}

/// `text` between the quotes of a JSON string.
std::string jsonEscaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

std::string json(const std::vector<std::pair<std::string, Result>> &rs,
                 const std::map<std::string, double> &global,
                 const std::map<std::string, std::string> &globalText,
                 const std::string &device) {
  std::ostringstream os;
  os << "{\n \"device\": \"" << device << "\",\n";
  for (auto &[k, v] : global)
    os << " \"" << k << "\": " << v << ",\n";
  for (auto &[k, v] : globalText)
    os << " \"" << k << "\": \"" << jsonEscaped(v) << "\",\n";
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

/// The traffic model's parameters and, per parameter, where it came from:
/// "default", "calibration" or the option that set it.
struct TrafficModelChoice {
  ddtc::TrafficParams params;
  std::string granuleFrom = "default", costFrom = "default";
  std::string calibrationPath;
};

/// Sets the parameters from the calibration file, if any, then from the
/// options given (which win); prints the model and the calibration's notes.
/// False, with a message, when the file cannot be used.
bool chooseTrafficModel(TrafficModelChoice &c, long long granuleOption,
                        double costOption, const char *costOptionName) {
  if (!c.calibrationPath.empty()) {
    ddtc::CalibratedTraffic cal;
    std::string error;
    if (!ddtc::loadTrafficCalibration(c.calibrationPath, cal, error)) {
      std::fprintf(stderr, "ddtc-bench: --traffic-calibration: %s\n",
                   error.c_str());
      return false;
    }
    for (const std::string &n : cal.notes)
      std::printf("traffic calibration: %s\n", n.c_str());
    c.params = cal.params;
    if (cal.readGranuleDerived)
      c.granuleFrom = "calibration";
    if (cal.partialWriteCostDerived)
      c.costFrom = "calibration";
  }
  if (granuleOption > 0) {
    c.params.readGranule = granuleOption;
    c.granuleFrom = "--read-granule";
  }
  if (costOption > 0) {
    c.params.partialWriteCost = costOption;
    c.costFrom = costOptionName;
  }
  std::printf("traffic model: reads in %lld-byte granules (%s), a sector "
              "written in part costs %.3g full sector writes (%s)\n",
              (long long)c.params.readGranule, c.granuleFrom.c_str(),
              c.params.partialWriteCost, c.costFrom.c_str());
  return true;
}

/// The model into the JSON's top level, so a summary says what it divided
/// by.
void recordTrafficModel(const TrafficModelChoice &c,
                        std::map<std::string, double> &global,
                        std::map<std::string, std::string> &text) {
  global["read_granule"] = (double)c.params.readGranule;
  global["partial_write_cost"] = c.params.partialWriteCost;
  text["read_granule_from"] = c.granuleFrom;
  text["partial_write_cost_from"] = c.costFrom;
  if (!c.calibrationPath.empty())
    text["traffic_calibration"] = c.calibrationPath;
}

/// --count-traffic: the traffic of every layout under the model, with the
/// buffers placed as the benchmark places them, and nothing run on a GPU.
/// bench/summarize.py --retraffic holds an earlier run's kernel times
/// against it.
int countTrafficOnly(const std::vector<Layout> &layouts,
                     const TrafficModelChoice &model,
                     const std::string &outPath) {
  std::vector<std::pair<std::string, Result>> results;
  for (const Layout &l : layouts) {
    ddtc::SpecFile spec;
    std::string error;
    ddtc::KernelPlan plan;
    if (!ddtc::parseSpec(l.spec, l.name, spec, error) ||
        !ddtc::planKernel(*spec.find("t")->type, plan, error)) {
      std::fprintf(stderr, "%s: %s\n", l.name.c_str(), error.c_str());
      return 1;
    }
    const int64_t at =
        (originInBuffer(*spec.find("t")->type, l) % ddtc::kMaxReadGranule +
         ddtc::kMaxReadGranule) %
        ddtc::kMaxReadGranule;
    Result r;
    r.v["origin_offset"] = (double)at;
    if (countLayoutTraffic(plan.layout, l.count, at, at, model.params, r))
      std::printf("%-26s granules %10.0f sectors %10.0f partial %10.0f "
                  "pack %12.0f unpack %12.0f\n",
                  l.name.c_str(), r.v["granules_read"], r.v["sectors_read"],
                  r.v["partial_sectors_written"], r.v["pack_traffic_bytes"],
                  r.v["unpack_traffic_bytes"]);
    else
      std::printf("%-26s %s\n", l.name.c_str(), r.s["traffic"].c_str());
    std::fflush(stdout);
    results.push_back({l.name, r});
  }
  std::map<std::string, double> global;
  std::map<std::string, std::string> text;
  recordTrafficModel(model, global, text);
  text["mode"] = "count-traffic";
  std::ofstream(outPath) << json(results, global, text, "none");
  return 0;
}

/// --max-ctas: the CTA cap every ddtc pack and unpack of the benchmark
/// passes (0: none, the library's launch).
int64_t benchMaxCtas = 0;

int usage() {
  std::puts(
      "usage: ddtc-bench --layouts FILE.tsv --out FILE.json [--reps N]\n"
      "                  [--only NAME]... [--no-check] [--disk-child]\n"
      "                  [--read-granule 32|64|128]\n"
      "                  [--partial-write-cost F]\n"
      "                  [--traffic-calibration CALIBRATION.json]\n"
      "                  [--yaksa LIB] [--yaksa-timeout SECONDS]\n"
      "                  [--yaksa-no-host] [--max-ctas N]\n"
      "       ddtc-bench --calibrate-traffic --out FILE.json [--reps N]\n"
      "                  [--device-mib N] [--host-mib N]\n"
      "       ddtc-bench --launch-cost [--out FILE.json] [--reps N]\n"
      "       ddtc-bench --count-traffic --layouts FILE.tsv --out FILE.json\n"
      "                  [--only NAME]... [the traffic model options]\n\n"
      "Benchmarks ddtc pack/unpack against cudaMemcpy, cudaMemcpy2D/3D and\n"
      "pinned D2H copies on the current GPU, after checking the packed and\n"
      "unpacked bytes against the reference. FILE.tsv comes from\n"
      "`python3 bench/layouts.py --tsv`. The JIT figures are cold when\n"
      "DDTC_CACHE_DIR is a new, empty folder\n"
      "(bench/run-gpu.sh makes one); the driver's compute cache, which\n"
      "keeps the machine code of NVRTC's compiles, is turned off\n"
      "(CUDA_CACHE_DISABLE=1) unless CUDA_CACHE_DISABLE or CUDA_CACHE_PATH\n"
      "is set.\n"
      "The traffic ratio is the time cudaMemcpy needs to move the DRAM\n"
      "traffic a layout forces over the kernel's time. The strided side is\n"
      "read in aligned granules of --read-granule bytes (default 64: a\n"
      "granule is read whole if any byte of it is needed) and written in\n"
      "32-byte sectors, a sector written in part costing --partial-write-cost\n"
      "full sector writes (default 2.2); the packed side moves its bytes.\n"
      "The defaults are an H100's calibration. --traffic-calibration takes\n"
      "both from a file of --calibrate-traffic instead (a parameter the file\n"
      "lacks keeps its default, and a line says so); the two options above\n"
      "override the file. --partial-write-reads N, the older option, is\n"
      "--partial-write-cost 1+N (N = 0 or 1: a partial sector costs its\n"
      "write and N sector reads). The JSON records the values used.\n"
      "--yaksa LIB (default: $DDTC_YAKSA_LIB) loads MPICH's datatype engine\n"
      "(libyaksa.so, with CUDA) and runs it on every layout beside ddtc:\n"
      "its bytes checked against ddtc's, then timed the same way. A Yaksa\n"
      "call that takes more than --yaksa-timeout seconds (default 60) marks\n"
      "the layout \"timed out\", writes the results so far and exits with\n"
      "code 85; rerun with --only for the layouts left. Its pack into mapped\n"
      "host memory runs last (a time-out there keeps the device figures and\n"
      "marks only yaksa_host); --yaksa-no-host leaves it out.\n"
      "--max-ctas N passes N as the CTA cap of every ddtc pack and unpack\n"
      "(default 0: none); the kernels then loop over the blocks' steps.\n"
      "--calibrate-traffic times kernels of known access patterns (every\n"
      "k-th sector read or written, partial sectors, mapped host writes)\n"
      "over --device-mib (default 1024) of device memory and --host-mib\n"
      "(default 256) of mapped pinned host memory.\n"
      "--count-traffic counts the traffic of every layout under the model,\n"
      "with the buffers placed as the benchmark places them (allocations\n"
      "256-byte aligned), and writes it without touching a GPU;\n"
      "`bench/summarize.py --retraffic` divides an earlier run's kernel\n"
      "times by it.\n"
      "--launch-cost times what one ddtc_pack or ddtc_unpack of 64 KiB\n"
      "costs the calling thread (--reps batches of 50 calls, the median per\n"
      "call), beside the driver calls it is made of, and how the host\n"
      "learns that a launch ran (event queries, a word the stream writes,\n"
      "a synchronize) and what a launch costs beside a second thread\n"
      "(querying, spinning, launching); --out keeps the JSON.\n"
      "--disk-child is internal: commit every layout from the disk cache and\n"
      "print the times.");
  return 0;
}

/// A whole number argument within [lo, hi], or exit with a message naming
/// the option.
long long intArg(const char *option, const char *text, long long lo,
                 long long hi) {
  char *end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != 0 || v < lo || v > hi) {
    std::fprintf(stderr,
                 "ddtc-bench: %s takes a whole number from %lld to %lld, "
                 "not '%s'\n",
                 option, lo, hi, text);
    std::exit(2);
  }
  return v;
}

/// A number within [lo, hi], or exit with a message naming the option.
double numberArg(const char *option, const char *text, double lo, double hi) {
  char *end = nullptr;
  double v = std::strtod(text, &end);
  if (end == text || *end != 0 || !(v >= lo && v <= hi)) {
    std::fprintf(stderr,
                 "ddtc-bench: %s takes a number from %g to %g, not "
                 "'%s'\n",
                 option, lo, hi, text);
    std::exit(2);
  }
  return v;
}

/// NVRTC hands the PTX of a compile to the driver, whose compute cache
/// (~/.nv/ComputeCache) keeps the machine code it made. Any earlier process
/// on the machine that compiled the same kernel (the GPU tests do) turns a
/// compile into a cache hit: 20-35 ms instead of 0.1-1.3 s on an H200 host.
/// The JIT figures are meant cold, so the bench runs with the cache off
/// unless the caller chose a setting. Set inside main, the setting came too
/// late (the compiles still hit the cache), so the bench starts itself again
/// with it in its environment.
constexpr const char *kCacheMark = "DDTC_BENCH_SET_CUDA_CACHE";

bool computeCacheSetByBench() { return std::getenv(kCacheMark) != nullptr; }

void restartWithoutComputeCache(char **argv) {
  if (std::getenv("CUDA_CACHE_DISABLE") || std::getenv("CUDA_CACHE_PATH"))
    return;
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  setenv(kCacheMark, "1", 1);
  execv("/proc/self/exe", argv);
  // Not restarted: the run goes on with the cache as it was, and says so.
  unsetenv("CUDA_CACHE_DISABLE");
  unsetenv(kCacheMark);
  std::perror("ddtc-bench: cannot restart with the compute cache off");
}

} // namespace

int main(int argc, char **argv) {
  restartWithoutComputeCache(argv);
  std::string layoutsPath, outPath;
  std::vector<std::string> only;
  int reps = 20;
  TrafficModelChoice traffic;
  long long granuleOption = 0;
  double costOption = 0;
  const char *costOptionName = "";
  long long deviceMiB = 1024, hostMiB = 256;
  bool check = true, diskChild = false, calibrate = false, countOnly = false;
  bool launchCost = false;
  std::string yaksaOption;
  double yaksaTimeout = 60;
  bool yaksaHost = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h")
      return usage();
    if (a == "--layouts" && i + 1 < argc)
      layoutsPath = argv[++i];
    else if (a == "--out" && i + 1 < argc)
      outPath = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = (int)intArg("--reps", argv[++i], 1, 100000);
    else if (a == "--only" && i + 1 < argc)
      only.push_back(argv[++i]);
    else if (a == "--no-check")
      check = false;
    else if (a == "--disk-child")
      diskChild = true;
    else if (a == "--read-granule" && i + 1 < argc) {
      granuleOption = intArg(a.c_str(), argv[++i], 32, 128);
      if (!ddtc::isValidReadGranule(granuleOption)) {
        std::fprintf(stderr,
                     "ddtc-bench: --read-granule takes 32, 64 or "
                     "128, not '%s'\n",
                     argv[i]);
        return 2;
      }
    } else if ((a == "--partial-write-cost" || a == "--partial-write-reads") &&
               i + 1 < argc) {
      if (costOption > 0) {
        std::fprintf(stderr, "ddtc-bench: give one of --partial-write-cost "
                             "and --partial-write-reads, once\n");
        return 2;
      }
      // --partial-write-reads N: the write and N sector reads.
      costOption =
          a == "--partial-write-cost"
              ? numberArg(a.c_str(), argv[++i], ddtc::kMinPartialWriteCost,
                          ddtc::kMaxPartialWriteCost)
              : 1.0 + (double)intArg(a.c_str(), argv[++i], 0, 1);
      costOptionName = argv[i - 1];
    } else if (a == "--traffic-calibration" && i + 1 < argc)
      traffic.calibrationPath = argv[++i];
    else if (a == "--count-traffic")
      countOnly = true;
    else if (a == "--yaksa" && i + 1 < argc)
      yaksaOption = argv[++i];
    else if (a == "--yaksa-no-host")
      yaksaHost = false;
    else if (a == "--max-ctas" && i + 1 < argc)
      benchMaxCtas = intArg(a.c_str(), argv[++i], 0, 1 << 30);
    else if (a == "--yaksa-timeout" && i + 1 < argc)
      yaksaTimeout = (double)intArg(a.c_str(), argv[++i], 1, 3600);
    else if (a == "--calibrate-traffic")
      calibrate = true;
    else if (a == "--launch-cost")
      launchCost = true;
    else if (a == "--device-mib" && i + 1 < argc)
      deviceMiB = intArg(a.c_str(), argv[++i], 1, 1 << 20);
    else if (a == "--host-mib" && i + 1 < argc)
      hostMiB = intArg(a.c_str(), argv[++i], 1, 1 << 20);
    else {
      std::fprintf(stderr, "ddtc-bench: unknown argument '%s' (see --help)\n",
                   a.c_str());
      return 2;
    }
  }
  if (launchCost && (calibrate || countOnly || !layoutsPath.empty())) {
    std::fprintf(stderr, "ddtc-bench: --launch-cost goes alone (with --out "
                         "and --reps at most)\n");
    return 2;
  }
  if (calibrate && outPath.empty()) {
    std::fprintf(stderr, "ddtc-bench: --calibrate-traffic needs --out\n");
    return 2;
  }
  if (calibrate && hostMiB > deviceMiB) {
    // The pinned D2H reference copies from the device buffer.
    std::fprintf(stderr,
                 "ddtc-bench: --host-mib (%lld) must not exceed "
                 "--device-mib (%lld)\n",
                 hostMiB, deviceMiB);
    return 2;
  }
  if (calibrate && countOnly) {
    std::fprintf(stderr, "ddtc-bench: --calibrate-traffic and "
                         "--count-traffic do not go together\n");
    return 2;
  }
  if (!calibrate && !launchCost &&
      (layoutsPath.empty() || (outPath.empty() && !diskChild))) {
    std::fprintf(stderr, "ddtc-bench: --layouts and --out are required\n");
    return 2;
  }
  std::vector<Layout> layouts;
  if (!calibrate && !launchCost)
    layouts = readLayouts(layoutsPath);
  if (!only.empty())
    layouts.erase(std::remove_if(layouts.begin(), layouts.end(),
                                 [&](const Layout &l) {
                                   return std::find(only.begin(), only.end(),
                                                    l.name) == only.end();
                                 }),
                  layouts.end());
  // Before any GPU work, so a bad calibration file stops the run at once.
  if (!calibrate && !launchCost && !diskChild &&
      !chooseTrafficModel(traffic, granuleOption, costOption, costOptionName))
    return 2;
  if (countOnly)
    return countTrafficOnly(layouts, traffic, outPath);
  int deviceCount = 0;
  if (cudaGetDeviceCount(&deviceCount) != cudaSuccess || deviceCount == 0) {
    std::puts("ddtc-bench: no CUDA device");
    return 77;
  }
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaFree(nullptr));
  if (calibrate)
    return ddtc::runTrafficCalibration(outPath, reps, deviceMiB, hostMiB);
  CHECK_DDTC(ddtc_init());
  if (launchCost)
    return ddtc::runLaunchCost(outPath, 50, reps);

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
  std::map<std::string, std::string> globalText;
  recordTrafficModel(traffic, global, globalText);
  global["max_ctas"] = (double)benchMaxCtas;
  globalText["driver_compute_cache"] =
      computeCacheSetByBench() ? "off (set by ddtc-bench)"
                               : "as the environment set it";
  // Settings of libddtc that change what the "host" column measures.
  for (const char *name : {"DDTC_HOST_STAGING_MIN", "DDTC_HOST_STAGING_CHUNK",
                           "DDTC_MAPPED_CHUNKS"}) {
    const char *v = std::getenv(name);
    globalText[name] = v ? v : "unset (the default)";
  }
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

  // Yaksa, when a library is named. The watchdog's callback writes the
  // layouts done, and the current one marked "timed out", while the main
  // thread is stuck inside Yaksa (it touches neither then).
  ddtc::yaksa::Api yaksaApi;
  const std::string yaksaPath = ddtc::yaksa::libraryPath(yaksaOption);
  const bool withYaksa = !yaksaPath.empty();
  std::string currentName;
  const Result *current = nullptr;
  const ddtc::YaksaFigures *currentYaksa = nullptr;
  std::unique_ptr<ddtc::Watchdog> watchdog;
  if (withYaksa) {
    std::string error;
    if (!ddtc::yaksa::loadApi(yaksaPath, yaksaApi, error)) {
      std::fprintf(stderr, "ddtc-bench: %s\n", error.c_str());
      return 1;
    }
    if (!yaksaApi.hasCuda) {
      std::fprintf(stderr,
                   "ddtc-bench: the Yaksa library %s has no CUDA backend "
                   "(built without CUDA); ddtc-yaksa-check runs such a "
                   "build on host memory\n",
                   yaksaPath.c_str());
      return 1;
    }
    if (!ddtc::initYaksa(yaksaApi, error)) {
      std::fprintf(stderr, "ddtc-bench: %s\n", error.c_str());
      return 1;
    }
    global["yaksa_run"] = 1;
    watchdog = std::make_unique<ddtc::Watchdog>([&](const std::string &what) {
      auto sofar = results;
      if (current) {
        Result r = *current;
        if (currentYaksa) {
          r.v.insert(currentYaksa->v.begin(), currentYaksa->v.end());
          r.s.insert(currentYaksa->s.begin(), currentYaksa->s.end());
        }
        // A pack into mapped host memory that did not return keeps the
        // device figures Yaksa gave before it.
        r.s[what.rfind("yaksa pack to mapped host", 0) == 0 ? "yaksa_host"
                                                            : "yaksa"] =
            "timed out: " + what;
        sofar.push_back({currentName, r});
      }
      std::ofstream(outPath) << json(sofar, global, globalText, device);
    });
  } else {
    global["yaksa_run"] = 0;
  }
  std::printf("%-26s %9s %8s %8s %8s %8s %8s %8s %8s %9s %8s %8s %8s %8s\n",
              "layout", "MiB", "pack", "unpack", "memcpy", "pk/mcp", "pk/2D3D",
              "host", "ho/d2h", "trafMiB", "pk/traf", "up/traf", "ho/traf",
              "yak/pk");
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
      // New handles of the type, each committed once: the first right after
      // the compile wait (a core left idle meanwhile runs it cold: caches,
      // clocks), then the median of the next ones.
      std::vector<double> hits;
      for (int i = 0; i < 1 + kCacheHitReps; ++i) {
        ddtc_type again = nullptr;
        CHECK_DDTC(ddtc_type_from_spec(l.spec.c_str(), "t", &again));
        double h0 = nowMs();
        CHECK_DDTC(ddtc_type_commit(again));
        hits.push_back((nowMs() - h0) * 1000.0);
        ddtc_type_free(&again);
      }
      r.v["cache_hit_first_us"] = hits.front();
      hits.erase(hits.begin());
      r.v["cache_hit_us"] = ddtc::median(hits);
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
      CHECK_DDTC(
          ddtc_pack(t, origin, l.count, 0, packed, dst, nullptr, benchMaxCtas));
      CHECK_CUDA(cudaMemcpy(got.data(), dst, packed, cudaMemcpyDeviceToHost));
      bool ok = got == expected;
      // Mapped host destination, poisoned.
      std::memset(hostPacked, 0xA5, packed);
      CHECK_DDTC(ddtc_pack(t, origin, l.count, 0, packed, hostPacked, nullptr,
                           benchMaxCtas));
      CHECK_CUDA(cudaDeviceSynchronize());
      ok = ok && std::memcmp(hostPacked, expected.data(), packed) == 0;
      // Unpack into a poisoned origin.
      CHECK_CUDA(cudaMemset(back, 0x5A, spanBytes));
      CHECK_DDTC(ddtc_unpack(t, backOrigin, l.count, 0, packed, dst, nullptr,
                             benchMaxCtas));
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
        [&] {
          ddtc_pack(t, origin, l.count, 0, packed, dst, nullptr, benchMaxCtas);
        },
        reps);
    r.v["unpack_us"] = timeUs(
        [&] {
          ddtc_unpack(t, backOrigin, l.count, 0, packed, dst, nullptr,
                      benchMaxCtas);
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
          ddtc_pack(t, origin, l.count, 0, packed, hostPacked, nullptr,
                    benchMaxCtas);
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
    addTrafficRatios(plan.layout, l.count, origin, backOrigin, traffic.params,
                     reps, r);
    if (withYaksa) {
      ddtc::YaksaLayout yl;
      yl.type = t;
      yl.tree = &tree;
      yl.count = l.count;
      yl.packed = packed;
      yl.spanBytes = spanBytes;
      yl.origin = origin;
      yl.back = back;
      yl.backOrigin = backOrigin;
      yl.dst = dst;
      yl.hostPacked = hostPacked;
      ddtc::YaksaFigures y;
      currentName = l.name;
      current = &r;
      currentYaksa = &y;
      ddtc::runYaksa(yaksaApi, *watchdog, yaksaTimeout, yl, r.v, reps,
                     yaksaHost, y);
      current = nullptr;
      currentYaksa = nullptr;
      r.v.insert(y.v.begin(), y.v.end());
      r.s.insert(y.s.begin(), y.s.end());
    } else {
      r.s["yaksa"] = "not run";
    }

    auto traffic = r.v.find("pack_traffic_bytes");
    std::printf(
        "%-26s %9.2f %8.1f %8.1f %8.1f %8.3f %8s %8.1f %8.3f %9s %8s %8s "
        "%8s %8s%s\n",
        l.name.c_str(), packed / 1048576.0, r.v["pack_us"], r.v["unpack_us"],
        mcp, r.v["pack_vs_memcpy"],
        alt > 0 ? std::to_string(alt / r.v["pack_us"]).substr(0, 6).c_str()
                : "-",
        r.v["pack_to_host_us"], r.v["host_vs_d2h"],
        traffic == r.v.end()
            ? "-"
            : std::to_string(traffic->second / 1048576.0).substr(0, 8).c_str(),
        ratioText(r, "pack_vs_traffic").c_str(),
        ratioText(r, "unpack_vs_traffic").c_str(),
        ratioText(r, "host_vs_traffic").c_str(),
        ratioText(r, "ddtc_vs_yaksa_pack").c_str(),
        r.s["check"] == "passed" ? "" : "  CHECK FAILED");
    if (withYaksa && r.s["yaksa"] != "passed")
      std::printf("  yaksa: %s\n", r.s["yaksa"].c_str());
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
  watchdog.reset(); // no Yaksa call is left to watch
  std::ofstream(outPath) << json(results, global, globalText, device);
  std::printf("empty kernel: %.2f us waited, %.2f us back to back\n",
              global["empty_kernel_us"],
              global["empty_kernel_back_to_back_us"]);
  std::printf("%d checked, %d failed\n", (int)results.size(), failures);
  return failures ? 1 : 0;
}
