//===- GPUPackTest.cpp - ddtc_pack and ddtc_unpack on a GPU ---------------===//
//
// ddtc-gpu-tests [--types N] [--seed S] [--mode all|async|sync|generic]
//
// Packs and unpacks fixed and random datatypes with libddtc on the GPU and
// compares every result with the reference pack and unpack on the host:
// into poisoned device buffers and mapped pinned host buffers, whole and
// random [lo, hi) ranges of count > 1 instances, fragment by fragment,
// several CTA caps, aligned and misaligned buffers, on the legacy default
// stream and on a non-blocking stream; each type once right after its commit
// (the generic kernel, while the specialized one compiles) and once after
// ddtc_type_wait (the specialized kernel).
//
// --mode all (the default) runs the test again in three fresh processes,
// with DDTC_JIT=async, sync and generic and one new cache folder (so the
// later processes read kernels from disk), and adds up their results.
// The CUDA driver is used directly (no CUDA runtime), through the same
// loader as libddtc. Exits 77 where there is no GPU. The last line is
// "P passed, F failed".
//===----------------------------------------------------------------------===//

#include "CUDADriver.h"

#include "ddtc/Core/SpecParser.h"
#include "ddtc/Testing/KernelCheck.h"
#include "ddtc/Testing/RandomDatatype.h"
#include "ddtc/ddtc.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ftw.h>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern char **environ;

using namespace ddtc;
using namespace ddtc::cu;

namespace {

constexpr int64_t kGuard = 256;

const DriverAPI *api = nullptr;
int passed = 0, failed = 0;
/// Set once the context is unusable (a kernel faulted): stop testing.
bool contextLost = false;

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool cuOk(CUresult rc, const char *call) {
  if (rc == CUDA_SUCCESS)
    return true;
  std::fprintf(stderr, "%s\n", describeError(*api, call, rc).c_str());
  if (rc != CUDA_ERROR_INVALID_VALUE && rc != CUDA_ERROR_OUT_OF_MEMORY)
    contextLost = true;
  return false;
}

/// Device memory or mapped pinned host memory, with a host mirror.
class Buffer {
public:
  enum Kind { Device, Mapped };
  Buffer(Kind kind, size_t bytes) : kind_(kind), bytes_(bytes) {
    if (kind == Device) {
      ok_ = cuOk(api->cuMemAlloc(&dev_, bytes), "cuMemAlloc");
    } else {
      ok_ = cuOk(api->cuMemHostAlloc(&host_, bytes,
                                     CU_MEMHOSTALLOC_DEVICEMAP |
                                         CU_MEMHOSTALLOC_PORTABLE),
                 "cuMemHostAlloc") &&
            cuOk(api->cuMemHostGetDevicePointer(&dev_, host_, 0),
                 "cuMemHostGetDevicePointer");
    }
  }
  ~Buffer() {
    if (kind_ == Device && dev_)
      api->cuMemFree(dev_);
    if (kind_ == Mapped && host_)
      api->cuMemFreeHost(host_);
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  bool ok() const { return ok_; }
  CUdeviceptr device() const { return dev_; }
  /// Copies bytes() bytes from `data`.
  bool write(const unsigned char *data) {
    if (kind_ == Mapped) {
      std::memcpy(host_, data, bytes_);
      return true;
    }
    // From pageable memory cuMemcpyHtoD may return before its DMA has
    // landed, ordered only on the legacy stream: a kernel on a
    // non-blocking stream could read the bytes before them (seen on an
    // H200: zeros in 3 of 23577 checks). Wait for the copy.
    return cuOk(api->cuMemcpyHtoD(dev_, data, bytes_), "cuMemcpyHtoD") &&
           cuOk(api->cuCtxSynchronize(), "cuCtxSynchronize");
  }
  /// Copies bytes() bytes to `data`.
  bool read(unsigned char *data) {
    if (kind_ == Mapped) {
      std::memcpy(data, host_, bytes_);
      return true;
    }
    return cuOk(api->cuMemcpyDtoH(data, dev_, bytes_), "cuMemcpyDtoH");
  }
  const char *name() const {
    return kind_ == Device ? "device" : "mapped host";
  }

private:
  Kind kind_;
  size_t bytes_;
  bool ok_ = false;
  CUdeviceptr dev_ = 0;
  void *host_ = nullptr;
};

struct Call {
  bool pack;
  int64_t count, lo, hi;
  Buffer::Kind originKind, packedKind;
  int maxCtas;
  unsigned originShift, packedShift; ///< misalignment in bytes
  bool nonBlocking;
  int64_t fragment; ///< > 0: the range is moved in pieces of this size
  /// Displacement 0 at a 256-byte boundary, as in a buffer from cudaMalloc
  /// (else the first touched byte is, plus originShift).
  bool alignOrigin = false;
};

std::string describe(const Call &c) {
  char buf[256];
  std::snprintf(
      buf, sizeof buf,
      "%s count %lld [%lld, %lld) origin %s%s packed %s%s cap %d "
      "%s stream%s",
      c.pack ? "pack" : "unpack", (long long)c.count, (long long)c.lo,
      (long long)c.hi, c.originKind == Buffer::Device ? "device" : "mapped",
      c.alignOrigin   ? " (displacement 0 aligned)"
      : c.originShift ? "+shift"
                      : "",
      c.packedKind == Buffer::Device ? "device" : "mapped",
      c.packedShift ? "+shift" : "", c.maxCtas,
      c.nonBlocking ? "non-blocking" : "default",
      c.fragment ? (" in fragments of " + std::to_string(c.fragment)).c_str()
                 : "");
  return buf;
}

/// Runs one call and compares it with the reference (the KernelCheck
/// harness: random source bytes, poisoned outputs with kGuard guard bytes);
/// returns whether it matched.
bool runCall(ddtc_type t, const Datatype &type, const Call &c, CUstream stream,
             std::mt19937_64 &rng, std::string &why) {
  KernelCheckOptions options;
  options.guard = kGuard;
  options.random = &rng;
  options.maxSpan = std::numeric_limits<int64_t>::max();
  KernelChecker checker(type, c.count, options);
  KernelCall call;
  call.pack = c.pack;
  call.lo = c.lo;
  call.hi = c.hi;
  call.originShift = c.originShift;
  call.packedShift = c.packedShift;
  call.alignOrigin = c.alignOrigin;
  // The harness's host buffers go to the device (or mapped host memory) as
  // they are, the call runs on them, and they come back to be compared.
  auto runOnGPU = [&](const KernelCall &, KernelBuffers &b) -> std::string {
    Buffer origin(c.originKind, static_cast<size_t>(b.originBytes)),
        packed(c.packedKind, static_cast<size_t>(b.packedBytes));
    if (!origin.ok() || !packed.ok())
      return "cannot allocate the buffers";
    if (!origin.write(b.originBuffer) || !packed.write(b.packedBuffer))
      return "cannot fill the buffers";
    const CUdeviceptr originPtr =
        origin.device() + static_cast<CUdeviceptr>(b.originAt);
    const CUdeviceptr packedPtr =
        packed.device() + static_cast<CUdeviceptr>(b.packedAt);
    const int64_t step =
        c.fragment > 0 ? c.fragment : std::max<int64_t>(c.hi - c.lo, 1);
    for (int64_t a = c.lo; a < c.hi || a == c.lo; a += step) {
      int64_t e = std::min(c.hi, a + step);
      void *o = reinterpret_cast<void *>(originPtr);
      void *p = reinterpret_cast<void *>(packedPtr + (a - c.lo));
      ddtc_status s =
          c.pack ? ddtc_pack(t, o, c.count, a, e, p, stream, c.maxCtas)
                 : ddtc_unpack(t, o, c.count, a, e, p, stream, c.maxCtas);
      if (s != DDTC_SUCCESS)
        return std::string(ddtc_status_name(s)) + ": " + ddtc_last_error();
      if (e >= c.hi)
        break;
    }
    if (!cuOk(api->cuStreamSynchronize(stream), "cuStreamSynchronize"))
      return "the kernel failed";
    if (!origin.read(b.originBuffer) || !packed.read(b.packedBuffer))
      return "cannot read the buffers back";
    return "";
  };
  why = checker.check(call, runOnGPU);
  return why.empty();
}

/// The calls one round makes for a type with `count` instances.
std::vector<Call> makeCalls(const Datatype &type, int64_t count,
                            std::mt19937_64 &rng) {
  const int64_t total = type.layout().size * count;
  auto range = [&](int64_t &lo, int64_t &hi) {
    lo = static_cast<int64_t>(rng() % (total + 1));
    hi = static_cast<int64_t>(rng() % (total + 1));
    if (lo > hi)
      std::swap(lo, hi);
  };
  std::vector<Call> calls;
  using B = Buffer;
  calls.push_back(
      {true, count, 0, total, B::Device, B::Device, 0, 0, 0, false, 0});
  calls.push_back(
      {false, count, 0, total, B::Device, B::Device, 0, 0, 0, true, 0});
  for (bool pack : {true, false})
    calls.push_back(
        {pack, count, 0, total, B::Device, B::Device, 0, 0, 0, false, 0, true});
  Call c{};
  for (int i = 0; i < 8; ++i) {
    c = {i % 2 == 0, count, 0, 0, B::Device, B::Device, 0, 0, 0, i % 3 == 0, 0};
    range(c.lo, c.hi);
    switch (i) {
    case 0: // pack into mapped host memory (zero-copy)
    case 1: // unpack from mapped host memory
      c.packedKind = B::Mapped;
      c.maxCtas = 1 + static_cast<int>(rng() % 4);
      break;
    case 2: // pack from mapped host memory
    case 3: // unpack into mapped host memory
      c.originKind = B::Mapped;
      c.maxCtas = 2;
      break;
    case 4: // misaligned buffers
    case 5:
      c.originShift = 1 + static_cast<unsigned>(rng() % 15);
      c.packedShift = 1 + static_cast<unsigned>(rng() % 15);
      c.maxCtas = static_cast<int>(rng() % 3);
      break;
    case 6: // fragments, as a pipelined protocol moves them
    case 7:
      c.lo = 0;
      c.hi = total;
      c.fragment =
          1 + static_cast<int64_t>(rng() % std::max<int64_t>(total / 3, 1));
      c.packedKind = i == 6 ? B::Mapped : B::Device;
      c.maxCtas = 1;
      break;
    }
    calls.push_back(c);
  }
  // One instance, a one-block grid.
  calls.push_back({true, 1, 0, type.layout().size, B::Device, B::Device, 1, 0,
                   0, false, 0});
  return calls;
}

/// Times the life of one type of a shape no other test uses: commit, the
/// first calls (generic kernel while the specialized one compiles), the
/// wait, the first specialized call, and the host time of later calls.
void measureLatency(CUstream stream) {
  const char *spec = "lat = subarray([6, 7, 8, 9], [2, 3, 4, 5], [1, 2, 3, 4], "
                     "C, short)\n";
  ddtc_type t = nullptr;
  if (ddtc_type_from_spec(spec, nullptr, &t) != DDTC_SUCCESS)
    return;
  int64_t bytes = 0;
  ddtc_type_packed_size(t, 1, &bytes);
  int64_t extent = 0;
  ddtc_type_extent(t, &extent);
  Buffer origin(Buffer::Device, static_cast<size_t>(extent)),
      packed(Buffer::Device, static_cast<size_t>(bytes));
  void *o = reinterpret_cast<void *>(origin.device());
  void *p = reinterpret_cast<void *>(packed.device());
  auto timeCall = [&] {
    double t0 = nowMs();
    ddtc_status s = ddtc_pack(t, o, 1, 0, bytes, p, stream, 0);
    double ms = nowMs() - t0;
    return s == DDTC_SUCCESS ? ms : -1.0;
  };
  auto steady = [&](int n) {
    double t0 = nowMs();
    for (int i = 0; i < n; ++i)
      ddtc_pack(t, o, 1, 0, bytes, p, stream, 0);
    double us = (nowMs() - t0) * 1000 / n;
    api->cuStreamSynchronize(stream);
    return us;
  };
  auto roundTrip = [&](int n) {
    double t0 = nowMs();
    for (int i = 0; i < n; ++i) {
      ddtc_pack(t, o, 1, 0, bytes, p, stream, 0);
      api->cuStreamSynchronize(stream);
    }
    return (nowMs() - t0) * 1000 / n;
  };
  double t0 = nowMs();
  ddtc_type_commit(t);
  double commitMs = nowMs() - t0;
  ddtc_kernel_info info;
  ddtc_type_kernel_info(t, &info);
  int ready = info.origin != DDTC_KERNEL_NONE;
  double firstMs = timeCall();
  api->cuStreamSynchronize(stream);
  double firstDoneMs = nowMs() - t0;
  double earlyUs = steady(200);
  double earlyTripUs = roundTrip(50);
  ddtc_stats st;
  ddtc_get_stats(&st);
  double w0 = nowMs();
  ddtc_type_wait(t);
  double waitMs = nowMs() - w0;
  ddtc_type_kernel_info(t, &info);
  double specFirstMs = timeCall();
  api->cuStreamSynchronize(stream);
  double specUs = steady(1000);
  double specTripUs = roundTrip(200);
  // What a call spends in the driver besides the launch.
  unsigned memType = 0;
  double q0 = nowMs();
  for (int i = 0; i < 1000; ++i)
    api->cuPointerGetAttribute(&memType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                               origin.device());
  double attrUs = (nowMs() - q0);
  CUcontext cur = nullptr;
  q0 = nowMs();
  for (int i = 0; i < 1000; ++i)
    api->cuCtxGetCurrent(&cur);
  double ctxUs = (nowMs() - q0);
  std::printf("per call: cuPointerGetAttribute %.3f us (two per call), "
              "cuCtxGetCurrent %.3f us\n",
              attrUs, ctxUs);
  std::printf("latency (%s, %lld packed bytes): commit %.3f ms (kernel %s); "
              "first call %.3f ms on the host, done %.3f ms after the commit; "
              "then %.2f us a call, %.2f us call+sync; wait for the "
              "specialized kernel %.1f ms (NVRTC %.1f ms, origin %d); its "
              "first call %.3f ms; then %.2f us a call, %.2f us call+sync\n",
              info.shape, (long long)bytes, commitMs,
              ready ? "ready at commit" : "compiling", firstMs, firstDoneMs,
              earlyUs, earlyTripUs, waitMs, info.compile_ms, info.origin,
              specFirstMs, specUs, specTripUs);
  ddtc_type_free(&t);
}

/// Pack bandwidth of a few large layouts with the kernel this process's
/// DDTC_JIT picks (after ddtc_type_wait), next to a device-to-device copy of
/// the same bytes. Counts bytes read plus bytes written.
void measureBandwidth(CUstream stream) {
  struct Layout {
    const char *name, *spec;
  } layouts[] = {
      {"16 B blocks", "v = vector(4194304, 2, 4, double)\n"},
      {"256 B blocks", "v = vector(262144, 32, 64, double)\n"},
      {"3-d interior", "v = subarray([512, 256, 256], [510, 128, 254], "
                       "[1, 1, 1], C, double)\n"},
      {"triangle", ""},
      // Columns of a 4096 x 4096 matrix: the tile kernels (DDTC_TILES=0:
      // the strided ones).
      {"transpose", "v = contiguous(4096, resized(0, 8, vector(4096, 1, "
                    "4096, double)))\n"},
  };
  // A lower-triangular 4096 x 4096 matrix of doubles, by columns.
  std::string tri = "v = indexed([";
  std::string displs;
  for (int j = 0; j < 4096; ++j) {
    tri += (j ? "," : "") + std::to_string(4096 - j);
    displs += (j ? "," : "") + std::to_string(j * 4096 + j);
  }
  tri += "], [" + displs + "], double)\n";
  layouts[3].spec = tri.c_str();
  CUevent start, stop;
  api->cuEventCreate(&start, CU_EVENT_DEFAULT);
  api->cuEventCreate(&stop, CU_EVENT_DEFAULT);
  for (const Layout &l : layouts) {
    ddtc_type t = nullptr;
    if (ddtc_type_from_spec(l.spec, nullptr, &t) != DDTC_SUCCESS)
      continue;
    int64_t bytes = 0, lb = 0, extent = 0;
    ddtc_type_packed_size(t, 1, &bytes);
    ddtc_type_true_extent(t, &lb, &extent);
    ddtc_type_commit(t);
    ddtc_type_wait(t);
    ddtc_kernel_info info;
    ddtc_type_kernel_info(t, &info);
    Buffer origin(Buffer::Device, static_cast<size_t>(lb + extent)),
        packed(Buffer::Device, static_cast<size_t>(bytes)),
        copy(Buffer::Device, static_cast<size_t>(bytes));
    if (!origin.ok() || !packed.ok() || !copy.ok()) {
      ddtc_type_free(&t);
      continue;
    }
    void *o = reinterpret_cast<void *>(origin.device());
    void *p = reinterpret_cast<void *>(packed.device());
    auto timeIt = [&](auto fn) {
      for (int i = 0; i < 3; ++i)
        fn();
      api->cuEventRecord(start, stream);
      const int reps = 10;
      for (int i = 0; i < reps; ++i)
        fn();
      api->cuEventRecord(stop, stream);
      api->cuEventSynchronize(stop);
      float ms = 0;
      api->cuEventElapsedTime(&ms, start, stop);
      return 2.0 * static_cast<double>(bytes) * reps / (ms * 1e-3) / 1e12;
    };
    double kernel = timeIt([&] { ddtc_pack(t, o, 1, 0, bytes, p, stream, 0); });
    double memcpy = timeIt([&] {
      api->cuMemcpyDtoDAsync(copy.device(), packed.device(),
                             static_cast<size_t>(bytes), stream);
    });
    ddtc_stats st;
    ddtc_get_stats(&st);
    std::printf("bandwidth %-13s %-22s %6.1f MiB: pack %.2f TB/s, memcpy "
                "%.2f TB/s, ratio %.2f\n",
                l.name, info.shape, bytes / 1048576.0, kernel, memcpy,
                kernel / memcpy);
    ddtc_type_free(&t);
  }
  api->cuEventDestroy(start);
  api->cuEventDestroy(stop);
}

void record(bool ok, const std::string &what) {
  if (ok) {
    ++passed;
    return;
  }
  ++failed;
  std::printf("FAIL %s\n", what.c_str());
}

/// One process's run: returns its exit code.
int runTests(int64_t randomTypes, uint64_t seed) {
  std::string error;
  api = getDriver(error);
  if (!api) {
    std::printf("no GPU: %s\n", error.c_str());
    return 77;
  }
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  char name[256] = "";
  int major = 0, minor = 0, sms = 0;
  if (!cuOk(api->cuDeviceGet(&dev, 0), "cuDeviceGet") ||
      !cuOk(api->cuDevicePrimaryCtxRetain(&ctx, dev),
            "cuDevicePrimaryCtxRetain") ||
      !cuOk(api->cuCtxSetCurrent(ctx), "cuCtxSetCurrent"))
    return 1;
  api->cuDeviceGetName(name, sizeof name, dev);
  api->cuDeviceGetAttribute(&major,
                            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  api->cuDeviceGetAttribute(&minor,
                            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  api->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                            dev);
  const char *jit = std::getenv("DDTC_JIT");
  std::printf("GPU: %s (sm_%d%d, %d SMs); DDTC_JIT=%s\n", name, major, minor,
              sms, jit ? jit : "(default: async)");
  CUstream nonBlocking = nullptr;
  if (!cuOk(api->cuStreamCreate(&nonBlocking, CU_STREAM_NON_BLOCKING),
            "cuStreamCreate"))
    return 1;

  measureLatency(nonBlocking);

  std::vector<std::pair<std::string, int64_t>> types = {
      {"vector(3, 2, 5, double)", 7},
      {"vector(1000, 3, 7, float)", 3},
      {"indexed([1, 2, 3], [0, 5, 11], double)", 5},
      {"subarray([64, 64, 64], [5, 60, 61], [1, 2, 3], C, double)", 2},
      {"subarray([32, 32], [30, 1], [1, 5], Fortran, int)", 4},
      {"struct([1, 2, 1], [0, 8, 16], [double, int, char])", 100},
      {"resized(-8, 40, struct([3, 1], [1, 20], [char, double]))", 9},
      {"hvector(5, 3, -40, contiguous(7, char))", 3},
      {"indexed([1, 2, 3, 4, 5, 6, 7, 8], [0, 8, 16, 24, 32, 40, 48, 56], "
       "long long)",
       33},
      {"contiguous(100000, double)", 2},
      {"hindexed_block(1000, [0, 1000000, 3000001], char)", 2},
      // Transposing layouts: the tile kernels.
      {"contiguous(37, resized(0, 8, vector(45, 1, 37, double)))", 3},
      {"hvector(3, 1, 8000, contiguous(33, resized(0, 2, vector(40, 1, 66, "
       "short))))",
       2},
      {"contiguous(40, resized(0, 12, vector(9, 1, 40, contiguous(3, "
       "int))))",
       4},
      // Runs whose place modulo 16 changes from run to run: the gather
      // unpack's word stores (runs of words), the run-aligned unpack kernel
      // (byte-wide runs).
      {"hindexed([1], [4], hvector(40, 4100, 4108, char))", 3},
      {"hindexed([1], [4], hvector(300, 64, 132, char))", 3},
      {"contiguous(500, resized(0, 48, struct([3, 3, 1, 1], [0, 24, 36, 40], "
       "[double, float, int, char])))",
       2},
      {"hvector(200, 33, 50, char)", 5},
      // Byte-wide runs all at one place modulo 16 (9 past alignment): a
      // run of 50 bytes takes 4 destination vectors there, 5 elsewhere.
      {"contiguous(70, resized(0, 64, hindexed([1], [9], contiguous(50, "
       "char))))",
       3},
      // Runs of one or two 4-byte words, a chunk's words loaded together
      // (rows of 5 words end inside chunks); long runs, two chunks a thread
      // (an interior of a cube at 8 bytes past 16-byte boundaries).
      // Dense records packed through a shared window: one struct per
      // instance, runs of 44 bytes of words at an offset, and rows of 40900
      // packed bytes whose ends some blocks' chunks cross (those skip the
      // window).
      {"resized(0, 48, struct([3, 3, 1, 1], [0, 24, 36, 40], [double, "
       "float, int, char]))",
       3000},
      {"hindexed([1], [4], hvector(2000, 44, 48, char))", 2},
      {"hvector(3, 1, 45000, hvector(100, 409, 420, char))", 2},
      // Records of several runs through the window: one struct per
      // instance, rows of 700 structs that some blocks leave, fields of
      // words at an offset.
      {"resized(0, 48, struct([3, 1], [0, 36], [double, int]))", 4000},
      {"hvector(3, 1, 50000, contiguous(700, resized(0, 48, struct([3, 1], "
       "[0, 36], [double, int]))))",
       2},
      {"contiguous(900, resized(0, 32, struct([2, 3], [4, 16], [int, "
       "float])))",
       3},
      // Records of bytes, unpacked a destination vector a thread: one
      // struct per instance, rows of structs of three runs at an odd
      // offset.
      {"resized(0, 48, struct([1, 1, 1], [0, 36, 40], [double, int, "
       "char]))",
       5000},
      {"hvector(3, 1, 9000, contiguous(150, resized(0, 52, struct([2, 1, 1], "
       "[1, 20, 33], [short, int, char]))))",
       2},
      // Records packed by their period: 4 structs of 9 packed bytes every
      // 14 a period, in rows and one an instance.
      {"contiguous(700, resized(0, 14, struct([1, 1, 2], [0, 4, 8], [float, "
       "char, short])))",
       3},
      {"resized(0, 24, struct([2, 1, 1], [0, 12, 17], [float, int, char]))",
       3001},
      // Short single runs by their period, rows restarting at the vector's
      // trailing gap or an outer dimension; a byte of every 24; 9 bytes of
      // every 16 in one row.
      {"vector(5000, 3, 4, float)", 3},
      {"hvector(40, 1, 2000, vector(96, 3, 5, float))", 2},
      {"vector(4000, 1, 24, char)", 2},
      {"contiguous(3000, resized(0, 16, struct([1, 1], [0, 8], [double, "
       "char])))",
       2},
      {"vector(3000, 1, 2, float)", 2},
      {"hindexed([1], [4], hvector(500, 8, 12, char))", 3},
      {"hvector(40, 1, 400, vector(5, 1, 3, float))", 2},
      {"subarray([40, 40, 40], [38, 38, 38], [1, 1, 1], C, double)", 2},
      // Records of several runs (a struct's fields without the ones between
      // them): the strided kernels' search of a point's runs; a triangle of
      // 20 rows, more runs than a point may have, takes the work units.
      {"resized(0, 48, struct([3, 1], [0, 36], [double, int]))", 5000},
      {"contiguous(300, resized(0, 48, struct([3, 1], [0, 36], [double, "
       "int])))",
       3},
      {"contiguous(50, resized(0, 29, struct([1, 3, 1], [0, 9, 21], "
       "[double, char, short])))",
       3},
      {"vector(7, 3, 5, resized(0, 40, struct([2, 1], [0, 24], [int, "
       "double])))",
       4},
      {"indexed([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, "
       "18, 19, 20], [0, 20, 40, 60, 80, 100, 120, 140, 160, 180, 200, 220, "
       "240, 260, 280, 300, 320, 340, 360, 380], double)",
       3},
      // Work units of 320-472 bytes and of a long run cut into units (a
      // warp a unit); units of 1-3 doubles and of 1-11 chars at odd places,
      // many groups of items a call (a 16-byte chunk a thread).
      {"indexed([40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, "
       "55, 56, 57, 58, 59], [0, 64, 128, 192, 256, 320, 384, 448, 512, 576, "
       "640, 704, 768, 832, 896, 960, 1024, 1088, 1152, 1216], double)",
       3},
      {"hindexed([4000, 100, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "
       "[8, 10000, 10900, 10920, 10940, 10960, 10980, 11000, 11020, 11040, "
       "11060, 11080, 11100, 11120, 11140, 11160, 11180], double)",
       3},
      {"resized(0, 416, indexed([1, 3, 2, 1, 2, 3, 1, 1, 2, 3, 3, 2, 1, 2, 1, "
       "3, 2, 1], [0, 2, 6, 9, 11, 14, 18, 20, 22, 25, 29, 33, 35, 37, 40, "
       "42, 46, 49], double))",
       400},
      {"resized(0, 120, hindexed([2, 3, 7, 1, 11, 4, 9, 5, 1, 6, 10, 2, 8, 3, "
       "1, 7, 5], [1, 5, 9, 17, 19, 31, 36, 46, 52, 54, 61, 72, 75, 84, 88, "
       "90, 99], char))",
       300},
      // Work units of 2 KiB a warp: long blocks of bytes at odd places and
      // of ints past a word (units of several steps, chunks cut at both
      // ends); a triangle of doubles below.
      {"hindexed([917, 497, 2494, 1797, 2378, 453, 2076, 586, 671, 2038, "
       "807, 553, 503, 490, 845, 2016, 782, 1040, 1069, 699], [2, 926, "
       "1425, 3921, 5719, 8101, 8556, 10639, 11229, 11909, 13948, 14759, "
       "15319, 15826, 16325, 17175, 19194, 19981, 21023, 22098], char)",
       2},
      {"indexed([164, 161, 310, 796, 537, 576, 564, 406, 284, 183, 407, "
       "606, 846, 394, 174, 624, 268, 255, 531, 784], [3, 172, 338, 652, "
       "1453, 1993, 2574, 3141, 3549, 3835, 4023, 4435, 5044, 5894, 6293, "
       "6468, 7096, 7367, 7626, 8158], int)",
       3},
      // Rows of 300 points of 3 floats of every 4, longer than a period
      // tile: tiles across a row end load both rows' words together.
      {"hvector(6, 1, 4864, vector(300, 3, 4, float))", 2},
      {"hvector(5, 1, 4868, vector(300, 3, 4, float))", 2},
  };
  {
    // The lower triangle of a 200 x 200 matrix of doubles: work units of
    // up to 1600 bytes, a warp each.
    std::string lengths, displacements;
    for (int j = 0; j < 200; ++j) {
      lengths += (j ? ", " : "") + std::to_string(200 - j);
      displacements += (j ? ", " : "") + std::to_string(j * 201);
    }
    types.push_back(
        {"indexed([" + lengths + "], [" + displacements + "], double)", 2});
  }
  {
    // Gathers whose stores in packed order scatter (a shuffled half of the
    // slots of doubles, ints and pairs of doubles; a matrix of doubles
    // column by column, some elements left out): whole instances unpack by
    // the units in origin order.
    std::mt19937_64 shuffle(2029);
    auto shuffled = [&](int n, int slots, int scale) {
      std::vector<int> s(slots);
      for (int i = 0; i < slots; ++i)
        s[i] = i;
      std::shuffle(s.begin(), s.end(), shuffle);
      std::string out;
      for (int i = 0; i < n; ++i)
        out += (i ? ", " : "") + std::to_string(scale * s[i]);
      return out;
    };
    types.push_back({"resized(0, 4096, indexed_block(1, [" +
                         shuffled(256, 512, 1) + "], double))",
                     300});
    types.push_back(
        {"indexed_block(1, [" + shuffled(700, 1400, 1) + "], int)", 3});
    types.push_back(
        {"indexed_block(2, [" + shuffled(300, 600, 2) + "], double)", 3});
    std::string columns;
    for (int j = 0; j < 30; ++j)
      for (int i = 0; i < 40; ++i)
        if ((i * 7 + j * 3) % 5 != 0)
          columns += (columns.empty() ? "" : ", ") + std::to_string(i * 30 + j);
    types.push_back({"indexed_block(1, [" + columns + "], double)", 3});
  }
  RandomDatatypeOptions opts;
  for (int64_t i = 0; i < randomTypes; ++i) {
    std::mt19937_64 rng(randomCaseSeed(seed, static_cast<uint64_t>(i)));
    RandomDatatypeCase c = generateRandomDatatype(rng, opts);
    types.push_back({printSpecExpr(*c.type), c.count});
  }

  double firstCallMs = 0;
  int unitsTypes = 0, chunkUnitsTypes = 0, unpackOrderTypes = 0;
  // Types whose kernels give a work unit a warp and whose packs into mapped
  // host memory ran the built-in chunk kernel (a generic launch once the
  // specialized kernel is ready).
  int mappedChunkTypes = 0;
  int periodTypes = 0, periodRowTypes = 0;
  int firstCalls = 0, tileTypes = 0, runAlignedTypes = 0, batchedTypes = 0,
      shortWordTypes = 0, windowTypes = 0, recordTypes = 0,
      recordWindowTypes = 0, recordAlignedTypes = 0;
  for (size_t i = 0; i < types.size() && !contextLost; ++i) {
    const std::string spec = "t = " + types[i].first + "\n";
    SpecFile parsed;
    if (!parseSpec(spec, "gpu-test", parsed, error)) {
      record(false, "cannot parse " + spec + ": " + error);
      continue;
    }
    const Datatype &type = *parsed.bindings.back().type;
    const int64_t count = types[i].second;
    ddtc_type t = nullptr;
    if (ddtc_type_from_spec(spec.c_str(), nullptr, &t) != DDTC_SUCCESS) {
      record(false, spec + ": " + ddtc_last_error());
      continue;
    }
    double t0 = nowMs();
    ddtc_status s = ddtc_type_commit(t);
    record(s == DDTC_SUCCESS, "commit " + spec + ": " + ddtc_last_error());
    if (s != DDTC_SUCCESS || type.layout().size == 0) {
      ddtc_type_free(&t);
      continue;
    }
    std::mt19937_64 rng(seed * 31 + i);
    bool warpUnits = false, mappedByChunks = false;
    for (int round = 0; round < 2 && !contextLost; ++round) {
      if (round == 1) {
        s = ddtc_type_wait(t);
        record(s == DDTC_SUCCESS, "wait " + spec + ": " + ddtc_last_error());
        ddtc_kernel_info info;
        // Its specialized kernel ready (not DDTC_JIT=generic), so that a
        // generic launch can only be the chunk kernel's.
        warpUnits = ddtc_type_kernel_info(t, &info) == DDTC_SUCCESS &&
                    info.origin >= DDTC_KERNEL_BUILTIN &&
                    info.origin <= DDTC_KERNEL_COMPILED &&
                    std::strncmp(info.shape, "units.", 6) == 0 &&
                    !std::strstr(info.shape, ".chunks");
      }
      std::vector<Call> calls = makeCalls(type, count, rng);
      for (size_t k = 0; k < calls.size() && !contextLost; ++k) {
        std::string why;
        const bool mappedPack =
            warpUnits && calls[k].pack && calls[k].packedKind == Buffer::Mapped;
        ddtc_stats before;
        ddtc_get_stats(&before);
        bool ok =
            runCall(t, type, calls[k],
                    calls[k].nonBlocking ? nonBlocking : nullptr, rng, why);
        if (mappedPack) {
          ddtc_stats after;
          ddtc_get_stats(&after);
          mappedByChunks |=
              after.generic_launches > before.generic_launches &&
              after.specialized_launches == before.specialized_launches;
        }
        if (round == 0 && k == 0) {
          firstCallMs += nowMs() - t0;
          ++firstCalls;
        }
        record(ok, types[i].first + " (round " + std::to_string(round) +
                       "): " + describe(calls[k]) + ": " + why);
      }
    }
    mappedChunkTypes += mappedByChunks;
    ddtc_kernel_info info;
    if (ddtc_type_kernel_info(t, &info) == DDTC_SUCCESS) {
      tileTypes += std::strncmp(info.shape, "tile.", 5) == 0;
      unitsTypes += std::strncmp(info.shape, "units.", 6) == 0;
      chunkUnitsTypes += std::strstr(info.shape, ".chunks") != nullptr;
      runAlignedTypes += std::strstr(info.shape, "-runs.") != nullptr;
      windowTypes += std::strstr(info.shape, ".window") != nullptr;
      // ".p<stride>:<runs>" in the shape.
      periodTypes += std::strchr(info.shape, ':') != nullptr;
      // ".p<stride>r:": rows that restart, a row piece at a time.
      periodRowTypes += std::strstr(info.shape, "r:") != nullptr;
      batchedTypes += std::strstr(info.shape, ".b2.") != nullptr;
      shortWordTypes += std::strstr(info.shape, ".short.") != nullptr;
      unpackOrderTypes += info.unpack_in_origin_order;
      // A segment of several runs per point: "d1r3" in the shape.
      const bool records =
          std::strncmp(info.shape, "strided.", 8) == 0 &&
          std::strchr(std::strrchr(info.shape, '.'), 'r') != nullptr;
      recordTypes += records;
      recordWindowTypes +=
          records && std::strstr(info.shape, ".window") != nullptr;
      recordAlignedTypes +=
          records && std::strstr(info.shape, "-runs.") != nullptr;
      if (i < 11)
        std::printf("  %-40.40s shape %-22s origin %d compile %.1f ms\n",
                    types[i].first.c_str(), info.shape, info.origin,
                    info.compile_ms);
    }
    ddtc_type_free(&t);
  }
  // Errors the GPU path reports: pageable host memory.
  {
    ddtc_type t = nullptr;
    ddtc_type_from_spec("t = vector(4, 1, 2, int)\n", nullptr, &t);
    ddtc_type_commit(t);
    std::vector<char> pageable(64);
    Buffer dst(Buffer::Device, 64);
    ddtc_status s =
        ddtc_pack(t, pageable.data(), 1, 0, 16,
                  reinterpret_cast<void *>(dst.device()), nullptr, 0);
    record(s == DDTC_ERROR_INVALID_POINTER,
           std::string("pageable origin gives ") + ddtc_status_name(s) + ": " +
               ddtc_last_error());
    ddtc_type_free(&t);
  }
  if (std::getenv("DDTC_TEST_BANDWIDTH"))
    measureBandwidth(nonBlocking);
  ddtc_finalize();
  ddtc_stats st;
  ddtc_get_stats(&st);
  std::printf("stats: %lld compiles (%.1f ms), %lld memory hits, %lld disk "
              "hits, %lld built-in, %lld generic launches, %lld specialized "
              "launches, %lld module loads, %lld table uploads\n",
              (long long)st.nvrtc_compiles, st.compile_ms_total,
              (long long)st.memory_hits, (long long)st.disk_hits,
              (long long)st.builtin_hits, (long long)st.generic_launches,
              (long long)st.specialized_launches, (long long)st.module_loads,
              (long long)st.table_uploads);
  if (firstCalls)
    std::printf("commit to first call done, mean of %d types: %.2f ms\n",
                firstCalls, firstCallMs / firstCalls);
  std::printf("tile kernels (transposing layouts) served %d type(s)\n",
              tileTypes);
  std::printf("work-unit kernels served %d type(s), %d of them a 16-byte "
              "chunk a thread (short units); %d of the others packed into "
              "mapped host memory with the chunk kernels\n",
              unitsTypes, chunkUnitsTypes, mappedChunkTypes);
  std::printf("work-unit kernels unpacked whole instances of %d type(s) by "
              "their units in origin order\n",
              unpackOrderTypes);
  std::printf("run-aligned unpack kernels (runs drifting modulo 16) served "
              "%d type(s), %d of them of several runs per nest point\n",
              runAlignedTypes, recordAlignedTypes);
  std::printf("window packs (dense records) served %d type(s), %d of "
              "them of several runs per nest point\n",
              windowTypes, recordWindowTypes);
  std::printf(
      "period kernels (records and short single runs, a period of "
      "points a thread) served %d type(s), %d of them in rows that restart\n",
      periodTypes, periodRowTypes);
  std::printf("batched gather kernels (two chunks a thread) served %d "
              "type(s)\n",
              batchedTypes);
  std::printf("strided kernels of records (several runs per nest point) "
              "served %d type(s)\n",
              recordTypes);
  std::printf("gather packs of runs of one or two 4-byte words served %d "
              "type(s)\n",
              shortWordTypes);
  api->cuStreamDestroy(nonBlocking);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

/// Runs this program in a fresh process with DDTC_JIT=`mode` and the cache
/// folder `cache`, echoes its output and adds up its summary line.
int runMode(const std::string &mode, const std::string &cache,
            const std::vector<std::string> &args, int &p, int &f) {
  // Everything the child needs is built before fork: it only execs.
  std::vector<std::string> argStrings = {"ddtc-gpu-tests"};
  argStrings.insert(argStrings.end(), args.begin(), args.end());
  argStrings.insert(argStrings.end(), {"--mode", mode});
  std::vector<char *> argv;
  for (std::string &a : argStrings)
    argv.push_back(&a[0]);
  argv.push_back(nullptr);
  std::vector<std::string> envStrings;
  for (char **e = environ; *e; ++e)
    if (std::strncmp(*e, "DDTC_JIT=", 9) != 0 &&
        std::strncmp(*e, "DDTC_CACHE_DIR=", 15) != 0)
      envStrings.push_back(*e);
  envStrings.push_back("DDTC_JIT=" + mode);
  envStrings.push_back("DDTC_CACHE_DIR=" + cache);
  std::vector<char *> envp;
  for (std::string &e : envStrings)
    envp.push_back(&e[0]);
  envp.push_back(nullptr);

  std::fflush(stdout);
  int fds[2];
  if (pipe(fds) != 0)
    return 1;
  pid_t pid = fork();
  if (pid < 0)
    return 1;
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execve("/proc/self/exe", argv.data(), envp.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) {
    std::fwrite(buf, 1, static_cast<size_t>(n), stdout);
    out.append(buf, static_cast<size_t>(n));
  }
  std::fflush(stdout);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // The summary is the last line.
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  size_t line = out.rfind('\n');
  int pp = 0, ff = 0;
  if (std::sscanf(out.c_str() + (line == std::string::npos ? 0 : line + 1),
                  "%d passed, %d failed", &pp, &ff) != 2 &&
      rc != 77) {
    std::printf("FAIL the DDTC_JIT=%s process ended without a summary "
                "(exit %d)\n",
                mode.c_str(), rc);
    ff = 1;
  }
  p += pp;
  f += ff;
  return rc;
}

} // namespace

int main(int argc, char **argv) {
  int64_t randomTypes = 200;
  uint64_t seed = 20261121;
  std::string mode = "all";
  std::vector<std::string> passOn;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--types" && i + 1 < argc) {
      randomTypes = std::atoll(argv[++i]);
      passOn.insert(passOn.end(), {a, argv[i]});
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
      passOn.insert(passOn.end(), {a, argv[i]});
    } else if (a == "--mode" && i + 1 < argc) {
      mode = argv[++i];
    } else {
      std::fprintf(stderr, "usage: ddtc-gpu-tests [--types N] [--seed S] "
                           "[--mode all|async|sync|generic]\n");
      return 2;
    }
  }
  if (mode != "all") {
    setenv("DDTC_JIT", mode.c_str(), 1); // read by the first ddtc call
    return runTests(randomTypes, seed);
  }

  // Check for a GPU first, so that a machine without one says so once.
  std::string error;
  if (!getDriver(error)) {
    std::printf("no GPU: %s\n0 passed, 0 failed\n", error.c_str());
    return 77;
  }
  char dir[] = "/tmp/ddtc-gpu-cache-XXXXXX";
  if (!mkdtemp(dir)) {
    std::perror("mkdtemp");
    return 1;
  }
  int p = 0, f = 0, worst = 0;
  for (const char *m : {"async", "sync", "generic"}) {
    std::printf("=== DDTC_JIT=%s ===\n", m);
    int rc = runMode(m, dir, passOn, p, f);
    if (rc != 0 && rc != 77)
      worst = rc;
  }
  nftw(
      dir,
      [](const char *path, const struct stat *, int, struct FTW *) {
        return std::remove(path);
      },
      16, FTW_DEPTH | FTW_PHYS);
  std::printf("%d passed, %d failed\n", p, f);
  return f || worst ? 1 : 0;
}
