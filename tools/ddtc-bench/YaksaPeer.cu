//===- YaksaPeer.cu - Yaksa packing the benchmark's layouts ---------------===//

#include "YaksaPeer.h"

#include "BenchCuda.h"
#include "YaksaType.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ddtc {

bool initYaksa(const yaksa::Api &api, std::string &error) {
  int rc = api.init(nullptr);
  if (rc != yaksa::kSuccess) {
    error = "yaksa_init failed (" + std::to_string(rc) + ")";
    return false;
  }
  return true;
}

namespace {

/// Pack and unpack on the default stream: the stream calls where the library
/// has them (the stream is passed as a pointer to the cudaStream_t), else a
/// request waited for on the host.
struct Calls {
  const yaksa::Api &api;
  yaksa::Type type;
  const YaksaLayout &l;
  cudaStream_t stream = 0;

  int pack(void *out, uintptr_t &actual) {
    if (api.pack_stream)
      return api.pack_stream(l.origin, l.count, type, 0, out, l.packed, &actual,
                             nullptr, yaksa::kOpReplace, &stream);
    yaksa::Request req = 0;
    int rc = api.ipack(l.origin, l.count, type, 0, out, l.packed, &actual,
                       nullptr, yaksa::kOpReplace, &req);
    return rc == yaksa::kSuccess ? api.request_wait(req) : rc;
  }
  int unpack(uintptr_t &actual) {
    if (api.unpack_stream)
      return api.unpack_stream(l.dst, l.packed, l.backOrigin, l.count, type, 0,
                               &actual, nullptr, yaksa::kOpReplace, &stream);
    yaksa::Request req = 0;
    int rc = api.iunpack(l.dst, l.packed, l.backOrigin, l.count, type, 0,
                         &actual, nullptr, yaksa::kOpReplace, &req);
    return rc == yaksa::kSuccess ? api.request_wait(req) : rc;
  }
};

std::string rcText(int rc) {
  return rc == yaksa::kErrNotSupported ? "not supported"
                                       : "error " + std::to_string(rc);
}

/// The first byte where `got` differs from `want`, as text.
std::string firstDifference(const unsigned char *got, const unsigned char *want,
                            int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (got[i] != want[i])
      return "byte " + std::to_string(i) + " of " + std::to_string(n);
  return "";
}

} // namespace

void runYaksa(const yaksa::Api &api, Watchdog &watchdog, double limitSeconds,
              const YaksaLayout &l, const std::map<std::string, double> &ours,
              int reps, bool tryHost, YaksaFigures &f) {
  f = YaksaFigures();
  std::string error;
  yaksa::Built built;
  if (!yaksa::buildType(api, *l.tree, built, error)) {
    f.s["yaksa"] = "not expressible: " + error;
    return;
  }
  struct Free {
    const yaksa::Api &api;
    yaksa::Built &b;
    ~Free() { yaksa::freeType(api, b); }
  } freeAtEnd{api, built};
  if (!yaksa::checkLayout(api, *l.tree, built.type, error)) {
    f.s["yaksa"] = "FAILED: " + error;
    return;
  }
  f.s["yaksa_api"] = api.pack_stream ? "stream" : "request";
  Calls calls{api, built.type, l};
  const int64_t n = l.packed, span = l.spanBytes;

  // ddtc's packed and unpacked bytes: what Yaksa must produce.
  std::vector<unsigned char> oursPacked(n), oursUnpacked(span), got;
  CHECK_DDTC(ddtc_pack(l.type, l.origin, l.count, 0, n, l.dst, nullptr, 0));
  CHECK_CUDA(cudaMemcpy(oursPacked.data(), l.dst, n, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemset(l.back, 0x5A, span));
  CHECK_DDTC(
      ddtc_unpack(l.type, l.backOrigin, l.count, 0, n, l.dst, nullptr, 0));
  CHECK_CUDA(
      cudaMemcpy(oursUnpacked.data(), l.back, span, cudaMemcpyDeviceToHost));

  // Pack into device memory, poisoned.
  uintptr_t actual = 0;
  CHECK_CUDA(cudaMemset(l.dst, 0xA5, n));
  int rc = watchdog.run(limitSeconds, "yaksa pack to device", [&] {
    int r = calls.pack(l.dst, actual);
    CHECK_CUDA(cudaDeviceSynchronize());
    return r;
  });
  if (rc != yaksa::kSuccess) {
    f.s["yaksa"] = rc == yaksa::kErrNotSupported
                       ? "not supported by Yaksa on the GPU"
                       : "FAILED: yaksa pack: " + rcText(rc);
    return;
  }
  got.resize(n);
  CHECK_CUDA(cudaMemcpy(got.data(), l.dst, n, cudaMemcpyDeviceToHost));
  std::string diff = (int64_t)actual != n
                         ? "packed " + std::to_string(actual) + " bytes, not " +
                               std::to_string(n)
                         : firstDifference(got.data(), oursPacked.data(), n);
  if (!diff.empty()) {
    f.s["yaksa"] = "FAILED: pack to device differs from ddtc at " + diff;
    return;
  }

  // Unpack into the poisoned origin, from ddtc's packed bytes.
  CHECK_CUDA(cudaMemset(l.back, 0x5A, span));
  rc = watchdog.run(limitSeconds, "yaksa unpack from device", [&] {
    int r = calls.unpack(actual);
    CHECK_CUDA(cudaDeviceSynchronize());
    return r;
  });
  if (rc != yaksa::kSuccess) {
    f.s["yaksa"] = "FAILED: yaksa unpack: " + rcText(rc);
    return;
  }
  got.resize(span);
  CHECK_CUDA(cudaMemcpy(got.data(), l.back, span, cudaMemcpyDeviceToHost));
  diff = firstDifference(got.data(), oursUnpacked.data(), span);
  if (!diff.empty()) {
    f.s["yaksa"] = "FAILED: unpack differs from ddtc at " + diff;
    return;
  }

  f.s["yaksa"] = "passed";

  // Timed like ddtc's figures (BenchCuda.h: events on the default stream,
  // warm-up, median); the limit covers the whole series.
  f.v["yaksa_pack_us"] = watchdog.run(limitSeconds, "yaksa pack timing", [&] {
    return timeUs([&] { calls.pack(l.dst, actual); }, reps);
  });
  f.v["yaksa_unpack_us"] =
      watchdog.run(limitSeconds, "yaksa unpack timing",
                   [&] { return timeUs([&] { calls.unpack(actual); }, reps); });
  // ddtc against Yaksa (> 1: ddtc is faster), and Yaksa against the memory
  // limit the same way ddtc is held to it.
  auto get = [&](const char *key) {
    auto it = ours.find(key);
    return it == ours.end() ? 0.0 : it->second;
  };
  auto ratio = [&](const char *name, double num, double den) {
    if (num > 0 && den > 0)
      f.v[name] = num / den;
  };
  ratio("ddtc_vs_yaksa_pack", f.v["yaksa_pack_us"], get("pack_us"));
  ratio("ddtc_vs_yaksa_unpack", f.v["yaksa_unpack_us"], get("unpack_us"));
  ratio("yaksa_pack_vs_traffic", get("memcpy_pack_traffic_us"),
        f.v["yaksa_pack_us"]);
  ratio("yaksa_unpack_vs_traffic", get("memcpy_unpack_traffic_us"),
        f.v["yaksa_unpack_us"]);

  // Pack into mapped pinned host memory, poisoned, last: Yaksa has been seen
  // not to return there, and the watchdog's record keeps what f holds.
  if (!tryHost) {
    f.s["yaksa_host"] = "not run: an earlier Yaksa pack to mapped host did "
                        "not return";
    return;
  }
  std::memset(l.hostPacked, 0xA5, n);
  rc = watchdog.run(limitSeconds, "yaksa pack to mapped host", [&] {
    int r = calls.pack(l.hostPacked, actual);
    CHECK_CUDA(cudaDeviceSynchronize());
    return r;
  });
  bool hostOk = false;
  if (rc != yaksa::kSuccess) {
    f.s["yaksa_host"] = rc == yaksa::kErrNotSupported ? "not supported by Yaksa"
                                                      : "FAILED: " + rcText(rc);
  } else {
    diff = (int64_t)actual != n
               ? "packed " + std::to_string(actual) + " bytes"
               : firstDifference(l.hostPacked, oursPacked.data(), n);
    hostOk = diff.empty();
    f.s["yaksa_host"] = hostOk ? "passed" : "FAILED: differs at " + diff;
  }
  if (hostOk)
    f.v["yaksa_pack_to_host_us"] =
        watchdog.run(limitSeconds, "yaksa pack to mapped host timing", [&] {
          return timeUs([&] { calls.pack(l.hostPacked, actual); },
                        std::max(3, reps / 2));
        });

  if (hostOk) {
    ratio("ddtc_vs_yaksa_host", f.v["yaksa_pack_to_host_us"],
          get("pack_to_host_us"));
    ratio("yaksa_host_vs_traffic",
          std::max(get("memcpy_host_traffic_us"), get("memcpy_d2h_us")),
          f.v["yaksa_pack_to_host_us"]);
  }
}

} // namespace ddtc
