//===- LaunchCost.cu - What a pack or unpack call costs its thread --------===//
//
// Each timed call moves a small range (64 KiB), so the GPU never holds the
// launches back: the figure is the calling thread's time alone. The driver
// calls a ddtc call makes are timed the same way beside it, so that what is
// left is ddtc's own work. A few are timed one call at a time after the
// thread slept or evicted its caches, as a layer's calls come.
//===----------------------------------------------------------------------===//

#include "LaunchCost.h"

#include "BenchCuda.h"

#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

extern char **environ;

namespace ddtc {
namespace {

__global__ void emptyKernel(const void *, void *, const long long *,
                            const void *) {}

double nowUs() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch())
      .count();
}

template <typename T> T entryPoint(const char *name) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  CHECK_CUDA(cudaGetDriverEntryPointByVersion(name, &fn, 12000,
                                              cudaEnableDefault, &q));
  if (!fn || q != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "ddtc-bench: the driver has no %s\n", name);
    std::exit(1);
  }
  return reinterpret_cast<T>(fn);
}

struct Timer {
  cudaStream_t stream;
  int batch, batches;
  FILE *json;
  bool first = true;

  /// Median microseconds per call of `fn` over the batches.
  void time(const std::string &name, const std::function<void()> &fn) {
    fn();
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<double> per;
    for (int b = 0; b < batches; ++b) {
      double t0 = nowUs();
      for (int i = 0; i < batch; ++i)
        fn();
      per.push_back((nowUs() - t0) / batch);
      CHECK_CUDA(cudaStreamSynchronize(stream));
    }
    CHECK_CUDA(cudaGetLastError());
    std::sort(per.begin(), per.end());
    record(name, per[per.size() / 2], per.front());
  }

  /// The same for calls made one at a time, each after `before` has run
  /// (a sleep, or work that evicts the CPU's caches): what a call costs a
  /// thread that comes to it from elsewhere, as a layer's calls do.
  void timeAlone(const std::string &name, const std::function<void()> &before,
                 const std::function<void()> &fn) {
    fn();
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> per;
    for (int b = 0; b < batches * 5; ++b) {
      before();
      double t0 = nowUs();
      fn();
      per.push_back(nowUs() - t0);
      CHECK_CUDA(cudaStreamSynchronize(stream));
    }
    CHECK_CUDA(cudaGetLastError());
    std::sort(per.begin(), per.end());
    record(name, per[per.size() / 2], per.front());
  }

  void record(const std::string &name, double med, double least) {
    std::printf("%-58s %7.2f us per call (min %.2f)\n", name.c_str(), med,
                least);
    std::fflush(stdout);
    if (json)
      std::fprintf(json,
                   "%s\n  {\"call\": \"%s\", \"us\": %.4f, \"min_us\": %.4f}",
                   first ? "" : ",", name.c_str(), med, least);
    first = false;
  }
};

struct TypeCase {
  const char *name;
  const char *spec;
  long long extent; // bytes an instance spans from its origin
};

const TypeCase kTypes[] = {
    {"vector-4KiB", "t = hvector(16384, 4096, 8192, char)", 16384LL * 8192},
    {"vector-16B", "t = hvector(4194304, 16, 32, char)", 4194304LL * 32},
    {"particles",
     "p = struct([3, 3, 1, 1], [0, 24, 36, 40], [double, float, int, char])\n"
     "t = contiguous(349526, resized(0, 48, p))",
     349526LL * 48},
};

/// How the layer learns that its stream work has run, and what a launch
/// costs beside another thread's driver calls: event records and queries
/// against a stream write of a word in mapped host memory that the host
/// reads without the driver; launches on the layer's kind of stream
/// (blocking) and on two streams in turn; launches while a second thread
/// queries an event in a loop, spins on a word of its own (no driver), or
/// launches on a stream of its own.
void timeCompletion(Timer &timer, cudaStream_t stream,
                    const std::function<void(cudaStream_t)> &launch) {
  using EventRecord = CUresult (*)(CUevent, CUstream);
  using EventQuery = CUresult (*)(CUevent);
  using WriteValue64 =
      CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned);
  auto eventRecord = entryPoint<EventRecord>("cuEventRecord");
  auto eventQuery = entryPoint<EventQuery>("cuEventQuery");
  auto writeValue64 = entryPoint<WriteValue64>("cuStreamWriteValue64");
  CUevent event = nullptr;
  CHECK_CUDA(cudaEventCreateWithFlags(reinterpret_cast<cudaEvent_t *>(&event),
                                      cudaEventDisableTiming));
  uint64_t *word = nullptr;
  CHECK_CUDA(cudaHostAlloc(&word, 64, cudaHostAllocMapped));
  *word = 0;
  uint64_t *wordOnDevice = nullptr;
  CHECK_CUDA(cudaHostGetDevicePointer(&wordOnDevice, word, 0));
  const CUdeviceptr wordAddress = reinterpret_cast<CUdeviceptr>(wordOnDevice);
  auto cs = static_cast<CUstream>(stream);

  timer.time("cuEventRecord", [&] { eventRecord(event, cs); });
  CHECK_CUDA(cudaStreamSynchronize(stream));
  timer.time("cuEventQuery of a completed event", [&] { eventQuery(event); });
  uint64_t seq = 0;
  timer.time("cuStreamWriteValue64 to mapped host memory",
             [&] { writeValue64(cs, wordAddress, ++seq, 0); });
  CHECK_CUDA(cudaStreamSynchronize(stream));

  // From a launch to the host knowing it ran: by event queries, by reading
  // the word, by a stream synchronize.
  auto none = [] {};
  timer.timeAlone("launch + event record, queried until done", none, [&] {
    launch(stream);
    eventRecord(event, cs);
    while (eventQuery(event) == CUDA_ERROR_NOT_READY) {
    }
  });
  timer.timeAlone("launch + word written, read until written", none, [&] {
    launch(stream);
    writeValue64(cs, wordAddress, ++seq, 0);
    while (reinterpret_cast<volatile uint64_t *>(word)[0] != seq) {
    }
  });
  timer.timeAlone("launch + cuStreamSynchronize", none, [&] {
    launch(stream);
    CHECK_CUDA(cudaStreamSynchronize(stream));
  });

  cudaStream_t blocking[2] = {};
  for (cudaStream_t &b : blocking)
    CHECK_CUDA(cudaStreamCreate(&b));
  timer.time("launch on a blocking stream", [&] { launch(blocking[0]); });
  int turn = 0;
  timer.time("launch on two blocking streams in turn",
             [&] { launch(blocking[turn++ & 1]); });

  // A second thread busy beside the launches.
  auto beside = [&](const std::string &name,
                    const std::function<void()> &busy) {
    std::atomic<bool> stop{false}, started{false};
    long long calls = 0;
    double from = 0, to = 0;
    std::thread other([&] {
      started = true;
      from = nowUs();
      while (!stop.load(std::memory_order_relaxed)) {
        busy();
        ++calls;
      }
      to = nowUs();
    });
    while (!started)
      std::this_thread::yield();
    timer.time(name, [&] { launch(stream); });
    stop = true;
    other.join();
    // The other thread's own rate over the whole time, as a mean.
    const double per = calls ? (to - from) / static_cast<double>(calls) : 0;
    timer.record(name + " [the other thread]", per, per);
  };
  eventRecord(event, cs);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  beside("launch, another thread querying an event in a loop",
         [&] { eventQuery(event); });
  beside("launch, another thread reading a host word in a loop",
         [&] { (void)reinterpret_cast<volatile uint64_t *>(word)[0]; });
  // Launches from two threads at once, each on a stream of its own: whether
  // a second launching thread adds launches or takes turns with the first.
  beside("launch, another thread launching on its own stream",
         [&] { launch(blocking[1]); });
  CHECK_CUDA(cudaDeviceSynchronize());
  for (cudaStream_t b : blocking)
    CHECK_CUDA(cudaStreamDestroy(b));
  CHECK_CUDA(cudaEventDestroy(reinterpret_cast<cudaEvent_t>(event)));
  CHECK_CUDA(cudaFreeHost(word));
}

} // namespace

int runLaunchCost(const std::string &outPath, int batch, int batches) {
  using CtxGetCurrent = CUresult (*)(CUcontext *);
  using CtxGetId = CUresult (*)(CUcontext, unsigned long long *);
  using PointerGetAttribute =
      CUresult (*)(void *, CUpointer_attribute, CUdeviceptr);
  using LaunchKernel =
      CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                   unsigned, unsigned, CUstream, void **, void **);
  auto ctxGetCurrent = entryPoint<CtxGetCurrent>("cuCtxGetCurrent");
  auto ctxGetId = entryPoint<CtxGetId>("cuCtxGetId");
  auto pointerGetAttribute =
      entryPoint<PointerGetAttribute>("cuPointerGetAttribute");
  auto launchKernel = entryPoint<LaunchKernel>("cuLaunchKernel");

  constexpr long long kRange = 64 << 10;
  long long span = 0;
  for (const TypeCase &c : kTypes)
    span = std::max(span, c.extent);
  unsigned char *origin = nullptr, *packed = nullptr, *mapped = nullptr;
  CHECK_CUDA(cudaMalloc(&origin, span + 4096));
  CHECK_CUDA(cudaMalloc(&packed, span + 4096));
  CHECK_CUDA(cudaHostAlloc(&mapped, kRange, cudaHostAllocMapped));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  FILE *json = nullptr;
  if (!outPath.empty() && !(json = std::fopen(outPath.c_str(), "w"))) {
    std::fprintf(stderr, "ddtc-bench: cannot write %s\n", outPath.c_str());
    return 1;
  }
  if (json) {
    std::fprintf(json, "{\"batch\": %d, \"batches\": %d, \"env\": {", batch,
                 batches);
    bool firstEnv = true;
    for (char **e = environ; *e; ++e)
      if (std::strncmp(*e, "DDTC_", 5) == 0) {
        const char *eq = std::strchr(*e, '=');
        std::fprintf(json, "%s\"%.*s\": \"%s\"", firstEnv ? "" : ", ",
                     static_cast<int>(eq - *e), *e, eq + 1);
        firstEnv = false;
      }
    std::fprintf(json, "},\n \"calls\": [");
  }
  Timer timer{stream, batch, batches, json};

  int64_t bytes = 0;
  ddtc_type named = nullptr;
  CHECK_DDTC(ddtc_type_from_spec("t = contiguous(1, char)", "t", &named));
  CHECK_DDTC(ddtc_type_commit(named));
  timer.time("a C API call that launches nothing (ddtc_type_packed_size)",
             [&] { ddtc_type_packed_size(named, 1, &bytes); });
  CUcontext ctx = nullptr;
  timer.time("cuCtxGetCurrent", [&] { ctxGetCurrent(&ctx); });
  unsigned long long id = 0;
  timer.time("cuCtxGetId", [&] { ctxGetId(ctx, &id); });
  unsigned memType = 0;
  timer.time("cuPointerGetAttribute(MEMORY_TYPE), device memory", [&] {
    pointerGetAttribute(&memType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                        reinterpret_cast<CUdeviceptr>(packed + 4096));
  });
  timer.time("cuPointerGetAttribute(MEMORY_TYPE), mapped host memory", [&] {
    pointerGetAttribute(&memType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                        reinterpret_cast<CUdeviceptr>(mapped));
  });
  cudaFunction_t fn = nullptr;
  CHECK_CUDA(
      cudaGetFuncBySymbol(&fn, reinterpret_cast<const void *>(&emptyKernel)));
  CUdeviceptr a0 = reinterpret_cast<CUdeviceptr>(origin),
              a1 = reinterpret_cast<CUdeviceptr>(packed), a3 = 0;
  long long params[8] = {};
  long long *a2 = params;
  void *args[4] = {&a0, &a1, &a2, &a3};
  auto launchEmpty = [&](cudaStream_t s) {
    launchKernel(reinterpret_cast<CUfunction>(fn), 1, 1, 1, 32, 1, 1, 0, s,
                 args, nullptr);
  };
  timer.time("cuLaunchKernel, an empty kernel of 4 arguments",
             [&] { launchEmpty(stream); });
  timer.time("cuLaunchKernel, the same on the legacy default stream",
             [&] { launchEmpty(nullptr); });
  CHECK_CUDA(cudaDeviceSynchronize());
  timeCompletion(timer, stream, launchEmpty);

  std::vector<char> scratch(32 << 20);
  for (const TypeCase &c : kTypes) {
    ddtc_type t = nullptr;
    CHECK_DDTC(ddtc_type_from_spec(c.spec, "t", &t));
    CHECK_DDTC(ddtc_type_commit(t));
    CHECK_DDTC(ddtc_type_wait(t));
    const std::string n = c.name;
    timer.time(n + ": ddtc_pack of no bytes (checks only)",
               [&] { ddtc_pack(t, origin, 1, 0, 0, packed, stream, 0); });
    timer.time(n + ": ddtc_pack of 64 KiB into device memory", [&] {
      CHECK_DDTC(ddtc_pack(t, origin, 1, 0, kRange, packed, stream, 0));
    });
    timer.time(n + ": ddtc_unpack of 64 KiB from device memory", [&] {
      CHECK_DDTC(ddtc_unpack(t, origin, 1, 0, kRange, packed, stream, 0));
    });
    timer.time(n + ": ddtc_unpack, the same on the legacy default stream", [&] {
      CHECK_DDTC(ddtc_unpack(t, origin, 1, 0, kRange, packed, nullptr, 0));
    });
    timer.time(n + ": ddtc_pack of 64 KiB into mapped host memory", [&] {
      CHECK_DDTC(ddtc_pack(t, origin, 1, 0, kRange, mapped, stream, 0));
    });
    if (&c == &kTypes[0]) {
      // One call at a time, after the thread slept or streamed through 32
      // MiB of host memory (evicting the caches the call's code and the
      // driver's data sat in).
      auto unpack = [&] {
        CHECK_DDTC(ddtc_unpack(t, origin, 1, 0, kRange, packed, stream, 0));
      };
      auto sleep = [] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      };
      auto evict = [&] {
        for (size_t i = 0; i < scratch.size(); i += 64)
          scratch[i] = static_cast<char>(scratch[i] + 1);
      };
      timer.timeAlone("cuLaunchKernel alone, after 200 us asleep", sleep,
                      [&] { launchEmpty(stream); });
      timer.timeAlone("cuLaunchKernel alone, after 32 MiB of host writes",
                      evict, [&] { launchEmpty(stream); });
      timer.timeAlone(n + ": ddtc_unpack alone, after 200 us asleep", sleep,
                      unpack);
      timer.timeAlone(n + ": ddtc_unpack alone, after 32 MiB of host writes",
                      evict, unpack);
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    ddtc_type_free(&t);
  }
  ddtc_type_free(&named);
  if (json) {
    std::fprintf(json, "\n]}\n");
    std::fclose(json);
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFreeHost(mapped));
  CHECK_CUDA(cudaFree(packed));
  CHECK_CUDA(cudaFree(origin));
  return 0;
}

} // namespace ddtc
