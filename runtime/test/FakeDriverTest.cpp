//===- FakeDriverTest.cpp - The GPU path of the runtime, on a fake driver -===//
//
// Run with DDTC_CUDA_DRIVER naming the fake driver (FakeCUDADriver.cpp) and
// DDTC_FAKE_ARCH=80, so that no built-in cubin fits and the specialized
// kernel of a work-unit type is compiled in the background: calls run the
// generic kernel (from PTX) first, then the specialized one. Checks the
// results against the reference, the launch counters, the single upload of
// the unit table, calls from a thread without a current context, and the
// pointer check. A second test checks the fake's asynchronous streams,
// events and pointer attributes, then runs the first on those streams.
//===----------------------------------------------------------------------===//

#include "TestHarness.h"
#include "TestUtil.h"

#include "CUDADriver.h"
#include "TypeObject.h"

#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <thread>
#include <vector>

using namespace ddtc;
using namespace ddtc::test;

namespace {

struct DeviceBuffer {
  const cu::DriverAPI &api;
  cu::CUdeviceptr p = 0;
  DeviceBuffer(const cu::DriverAPI &api, size_t n) : api(api) {
    api.cuMemAlloc(&p, n);
  }
  ~DeviceBuffer() { api.cuMemFree(p); }
  void *get() const { return reinterpret_cast<void *>(p); }
};

/// Pinned host memory from the driver.
struct PinnedBuffer {
  const cu::DriverAPI &api;
  unsigned char *p = nullptr;
  PinnedBuffer(const cu::DriverAPI &api, size_t n) : api(api) {
    void *q = nullptr;
    if (api.cuMemAllocHost(&q, n) == cu::CUDA_SUCCESS)
      p = static_cast<unsigned char *>(q);
  }
  ~PinnedBuffer() {
    if (p)
      api.cuMemFreeHost(p);
  }
};

/// Runs `body` with stderr sent to a file, and puts what it wrote there
/// (the runtime's DDTC_VERBOSE lines) in `logged`. False, without running
/// `body`, when stderr could not be redirected.
bool stderrOf(const std::function<void()> &body, std::string &logged) {
  TempDir dir;
  const std::string path = dir.path() + "/stderr";
  std::fflush(stderr);
  const int saved = dup(2);
  FILE *log = std::fopen(path.c_str(), "w");
  if (!log || saved < 0) {
    if (log)
      std::fclose(log);
    if (saved >= 0)
      close(saved);
    return false;
  }
  dup2(fileno(log), 2);
  body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::fclose(log);
  std::ifstream in(path);
  logged.assign(std::istreambuf_iterator<char>(in),
                std::istreambuf_iterator<char>());
  return true;
}

/// `count` instances of the type `t` of a spec, in device memory filled
/// with random bytes from `seed`, and their packed bytes by the reference.
struct PackSource {
  SpecFile parsed;
  int64_t total = 0;
  size_t span = 0;
  std::unique_ptr<DeviceBuffer> origin;
  std::vector<unsigned char> ref;

  bool make(const cu::DriverAPI &api, const char *spec, int64_t count,
            uint64_t seed) {
    std::string error;
    if (!parseSpec(spec, "t", parsed, error))
      return false;
    const Datatype &type = *parsed.bindings.back().type;
    const LayoutInfo &l = type.layout();
    total = l.size * count;
    // The instances' bytes end past count extents when the first run does
    // not start at 0.
    span =
        static_cast<size_t>(l.trueLb + l.trueExtent + l.extent * (count - 1));
    origin = std::make_unique<DeviceBuffer>(api, span);
    std::vector<unsigned char> in(span);
    std::mt19937_64 rng(seed);
    for (unsigned char &c : in)
      c = static_cast<unsigned char>(rng());
    ref.resize(static_cast<size_t>(total));
    referencePack(type, count, in.data(), ref.data());
    return api.cuMemcpyHtoD(origin->p, in.data(), span) == 0;
  }
};

} // namespace

namespace {

/// Packs of a type of long work units (a warp a unit) into mapped pinned
/// host memory run the generic chunk kernel (counted as a generic launch,
/// though the type's specialized kernel is ready), unless
/// DDTC_MAPPED_CHUNKS=0; into device memory, the specialized kernel. Every
/// pack's bytes are checked. Returns whether all held (CHECK prints which
/// did not).
bool mappedHostPacksByChunks(const cu::DriverAPI &api) {
  auto body = [&]() -> int {
    // 18 runs (more than a strided nest point takes) of 320-560 bytes at
    // width 8, 3 doubles apart.
    const char *spec =
        "t = indexed([40, 70, 50, 45, 60, 41, 55, 48, 66, 43, 52, 47, 61, 44, "
        "58, 49, 63, 42], [1, 44, 117, 170, 218, 281, 325, 383, 434, 503, 549, "
        "604, 654, 718, 765, 826, 878, 944], double)\n";
    const int64_t count = 7;
    // The first run is one double in.
    PackSource src;
    CHECK(src.make(api, spec, count, 11));
    const int64_t total = src.total;
    const DeviceBuffer &origin = *src.origin;
    const std::vector<unsigned char> &ref = src.ref;
    DeviceBuffer packed(api, static_cast<size_t>(total));
    // Packed bytes and a poisoned guard after them.
    const size_t hostBytes = static_cast<size_t>(total) + 16;
    PinnedBuffer hostMem(api, hostBytes);
    CHECK(hostMem.p);
    unsigned char *host = hostMem.p;
    std::vector<unsigned char> got(static_cast<size_t>(total));
    for (bool chunks : {true, false}) {
      setenv("DDTC_MAPPED_CHUNKS", chunks ? "1" : "0", 1);
      resetRuntime();
      ddtc_type t = makeType(spec);
      CHECK(t && ddtc_type_commit(t) == DDTC_SUCCESS &&
            ddtc_type_wait(t) == DDTC_SUCCESS);
      ddtc_kernel_info info;
      CHECK(ddtc_type_kernel_info(t, &info) == DDTC_SUCCESS &&
            info.uses_work_units == 1 &&
            std::strstr(info.shape, "chunks") == nullptr);
      for (int64_t lo : {int64_t(0), int64_t(13)}) {
        const int64_t hi = total - lo;
        std::memset(host, 0xA5, hostBytes);
        ddtc_stats before = statsNow();
        CHECK(ddtc_pack(t, origin.get(), count, lo, hi, host, nullptr, 0) ==
              DDTC_SUCCESS);
        CHECK(api.cuCtxSynchronize() == 0);
        int64_t bad = 0;
        while (bad < hi - lo && host[bad] == ref[lo + bad])
          ++bad;
        CHECK_MSG(bad == hi - lo,
                  "mapped pack of [%lld, %lld), DDTC_MAPPED_CHUNKS=%d: "
                  "byte %lld wrong",
                  (long long)lo, (long long)hi, chunks, (long long)(lo + bad));
        CHECK(host[hi - lo] == 0xA5);
        ddtc_stats after = statsNow();
        CHECK_MSG(after.generic_launches == before.generic_launches + chunks &&
                      after.specialized_launches ==
                          before.specialized_launches + !chunks,
                  "DDTC_MAPPED_CHUNKS=%d: %lld generic, %lld specialized",
                  chunks,
                  (long long)(after.generic_launches - before.generic_launches),
                  (long long)(after.specialized_launches -
                              before.specialized_launches));
        // Into device memory: the type's own kernel.
        CHECK(ddtc_pack(t, origin.get(), count, lo, hi, packed.get(), nullptr,
                        0) == DDTC_SUCCESS);
        CHECK(api.cuMemcpyDtoH(got.data(), packed.p, hi - lo) == 0);
        CHECK(std::memcmp(got.data(), ref.data() + lo, hi - lo) == 0);
        CHECK(statsNow().specialized_launches ==
              after.specialized_launches + 1);
      }
      ddtc_type_free(&t);
    }
    unsetenv("DDTC_MAPPED_CHUNKS");
    resetRuntime();
    return kPass;
  };
  return body() == kPass;
}

/// A type whose kernels move 16-byte chunks (blocks of 48 bytes 64 apart),
/// called with an origin 8 bytes past a 16-byte boundary (an array's second
/// double): its variant for that offset serves the calls (DDTC_VERBOSE says
/// so), pack and unpack move the right bytes and no other, and with
/// DDTC_ALIGN_VARIANTS=0 the type's own kernels serve them, as right.
bool alignmentVariantsServe(const cu::DriverAPI &api) {
  auto body = [&]() -> int {
    const char *spec = "t = hvector(50, 48, 64, char)\n";
    SpecFile parsed;
    std::string error;
    CHECK(parseSpec(spec, "t", parsed, error));
    const Datatype &type = *parsed.bindings.back().type;
    const int64_t count = 3, total = type.layout().size * count;
    const size_t span = static_cast<size_t>(type.layout().extent * count) + 32;
    std::vector<unsigned char> host(span), ref(static_cast<size_t>(total));
    std::mt19937_64 rng(5);
    for (unsigned char &c : host)
      c = static_cast<unsigned char>(rng());
    referencePack(type, count, host.data() + 8, ref.data());
    std::vector<unsigned char> expect(span, 0xA5);
    referenceUnpack(type, count, ref.data(), expect.data() + 8);
    DeviceBuffer buf(api, span), back(api, span),
        packed(api, static_cast<size_t>(total));
    CHECK((reinterpret_cast<uintptr_t>(buf.get()) & 15) == 0 &&
          (reinterpret_cast<uintptr_t>(back.get()) & 15) == 0);
    CHECK(api.cuMemcpyHtoD(buf.p, host.data(), span) == 0);
    for (bool variants : {true, false}) {
      setenv("DDTC_ALIGN_VARIANTS", variants ? "1" : "0", 1);
      setenv("DDTC_VERBOSE", "1", 1);
      setenv("DDTC_JIT", "sync", 1);
      resetRuntime();
      ddtc_type t = makeType(spec);
      CHECK(t && ddtc_type_commit(t) == DDTC_SUCCESS);
      ddtc_kernel_info info;
      CHECK(ddtc_type_kernel_info(t, &info) == DDTC_SUCCESS &&
            info.width == 16);
      std::vector<unsigned char> poison(span, 0xA5);
      CHECK(api.cuMemcpyHtoD(back.p, poison.data(), span) == 0);
      ddtc_status packedOk = DDTC_ERROR_INTERNAL,
                  unpackedOk = DDTC_ERROR_INTERNAL;
      std::string logged;
      CHECK(stderrOf(
          [&] {
            packedOk = ddtc_pack(t, static_cast<unsigned char *>(buf.get()) + 8,
                                 count, 0, total, packed.get(), nullptr, 0);
            unpackedOk =
                ddtc_unpack(t, static_cast<unsigned char *>(back.get()) + 8,
                            count, 0, total, packed.get(), nullptr, 0);
          },
          logged));
      CHECK(packedOk == DDTC_SUCCESS && unpackedOk == DDTC_SUCCESS);
      CHECK(api.cuCtxSynchronize() == 0);
      std::vector<unsigned char> got(static_cast<size_t>(total)), whole(span);
      CHECK(api.cuMemcpyDtoH(got.data(), packed.p, got.size()) == 0);
      CHECK_MSG(got == ref, "pack at an 8-byte offset, DDTC_ALIGN_VARIANTS=%d",
                variants);
      CHECK(api.cuMemcpyDtoH(whole.data(), back.p, span) == 0);
      CHECK_MSG(whole == expect,
                "unpack at an 8-byte offset, DDTC_ALIGN_VARIANTS=%d", variants);
      const bool said =
          logged.find("its variant for that offset") != std::string::npos;
      CHECK_MSG(said == variants,
                "DDTC_ALIGN_VARIANTS=%d; the runtime said: %s", variants,
                logged.c_str());
      ddtc_type_free(&t);
    }
    unsetenv("DDTC_ALIGN_VARIANTS");
    unsetenv("DDTC_VERBOSE");
    unsetenv("DDTC_JIT");
    resetRuntime();
    return kPass;
  };
  return body() == kPass;
}

/// ddtc_copy: a vector straight into contiguous memory and into another
/// vector, whole and in part, every byte the reference's and no other
/// touched; the pairs it does not serve and bad ranges refused by name.
int copiesBetweenLayouts(const cu::DriverAPI &api) {
  struct Side {
    const char *spec;
    int64_t count;
  };
  const Side pairs[][2] = {
      {{"a = vector(500, 3, 7, double)\n", 2}, {"b = double\n", 3000}},
      {{"a = vector(500, 3, 7, double)\n", 2},
       {"b = hvector(1000, 3, 41, char)\n", 8}},
      {{"a = subarray([9, 40], [9, 13], [0, 5], C, int)\n", 3},
       {"b = vector(351, 1, 3, int)\n", 1}},
      // Rows of 512 bytes on both sides: a copy engine moves them.
      {{"a = vector(128, 64, 80, double)\n", 1},
       {"b = hvector(128, 512, 700, char)\n", 1}},
  };
  std::mt19937_64 rng(11);
  for (const auto &pair : pairs) {
    const Side &s = pair[0], &d = pair[1];
    SpecFile ps, pd;
    std::string error;
    CHECK(parseSpec(s.spec, "a", ps, error));
    CHECK(parseSpec(d.spec, "b", pd, error));
    const Datatype &st = *ps.bindings.back().type,
                   &dt = *pd.bindings.back().type;
    const int64_t total = st.layout().size * s.count;
    CHECK(total == dt.layout().size * d.count);
    const size_t sspan = static_cast<size_t>(st.layout().extent * s.count),
                 dspan = static_cast<size_t>(dt.layout().extent * d.count);
    std::vector<unsigned char> in(sspan), packed(static_cast<size_t>(total));
    for (unsigned char &c : in)
      c = static_cast<unsigned char>(rng());
    referencePack(st, s.count, in.data(), packed.data());
    DeviceBuffer src(api, sspan), dst(api, dspan);
    api.cuMemcpyHtoD(src.p, in.data(), sspan);
    ddtc_type a = makeType(s.spec), b = makeType(d.spec);
    CHECK(a && b);
    CHECK(ddtc_copy_supported(a, b) == DDTC_ERROR_NOT_COMMITTED);
    CHECK(std::strstr(ddtc_last_error(), "not committed"));
    CHECK(ddtc_type_commit(a) == DDTC_SUCCESS &&
          ddtc_type_commit(b) == DDTC_SUCCESS);
    CHECK_MSG(ddtc_copy_supported(a, b) == DDTC_SUCCESS, "%s",
              ddtc_last_error());
    const std::pair<int64_t, int64_t> ranges[] = {
        {0, total}, {5, total - 3}, {total / 3, total / 3 + 1}, {9, 9}};
    const bool longRows = std::strstr(d.spec, "512");
    const int64_t engineCopies = statsNow().copy_engine_copies;
    for (auto [lo, hi] : ranges) {
      std::vector<unsigned char> want(dspan, 0xA5), got(dspan);
      api.cuMemcpyHtoD(dst.p, want.data(), dspan);
      referenceUnpackRange(dt, d.count, packed.data(), lo, hi, want.data());
      CHECK_MSG(ddtc_copy(a, src.get(), s.count, b, dst.get(), d.count, lo, hi,
                          nullptr, lo == 5 ? 1 : 0) == DDTC_SUCCESS,
                "%s", ddtc_last_error());
      api.cuCtxSynchronize();
      api.cuMemcpyDtoH(got.data(), dst.p, dspan);
      CHECK_MSG(got == want, "%s x %lld -> %s x %lld, range [%lld, %lld)",
                s.spec, (long long)s.count, d.spec, (long long)d.count,
                (long long)lo, (long long)hi);
    }
    // Two of the ranges hold whole rows.
    CHECK_MSG((statsNow().copy_engine_copies - engineCopies >= 2) == longRows,
              "%s: %lld blocks of rows by a copy engine", d.spec,
              (long long)(statsNow().copy_engine_copies - engineCopies));
    // One handle on both sides: the source's layout into a second buffer.
    {
      DeviceBuffer twin(api, sspan);
      std::vector<unsigned char> want(sspan, 0xA5), got(sspan);
      api.cuMemcpyHtoD(twin.p, want.data(), sspan);
      referenceUnpack(st, s.count, packed.data(), want.data());
      CHECK_MSG(ddtc_copy(a, src.get(), s.count, a, twin.get(), s.count, 0,
                          total, nullptr, 0) == DDTC_SUCCESS,
                "%s", ddtc_last_error());
      api.cuCtxSynchronize();
      api.cuMemcpyDtoH(got.data(), twin.p, sspan);
      CHECK(got == want);
    }
    // Past the end of the source's stream.
    CHECK(ddtc_copy(a, src.get(), s.count - 1, b, dst.get(), d.count, 0, total,
                    nullptr, 0) == DDTC_ERROR_INVALID_ARGUMENT);
    std::printf("range past the source: %s\n", ddtc_last_error());
    ddtc_type_free(&a);
    ddtc_type_free(&b);
  }
  // A type of several runs per point is not one stream nest: refused, named.
  ddtc_type r = makeType("r = indexed([1, 2], [0, 5], double)\n");
  ddtc_type v = makeType("v = vector(4, 1, 2, double)\n");
  CHECK(ddtc_type_commit(r) == DDTC_SUCCESS &&
        ddtc_type_commit(v) == DDTC_SUCCESS);
  CHECK(ddtc_copy_supported(v, r) == DDTC_ERROR_UNSUPPORTED_TYPE);
  std::printf("unsupported pair: %s\n", ddtc_last_error());
  CHECK(std::strstr(ddtc_last_error(), "type r"));
  DeviceBuffer x(api, 64), y(api, 64);
  CHECK(ddtc_copy(v, x.get(), 1, r, y.get(), 1, 0, 24, nullptr, 0) ==
        DDTC_ERROR_UNSUPPORTED_TYPE);
  CHECK(ddtc_copy(nullptr, x.get(), 1, r, y.get(), 1, 0, 24, nullptr, 0) ==
        DDTC_ERROR_INVALID_ARGUMENT);
  // What a copy to the type's own map moves in words (the MPI layer pulls
  // only those across GPUs): doubles, records that 16 does not divide
  // (loaded as whole vectors), a triangle's columns; not blocks of 16
  // bytes at odd places nor the short runs refused below.
  const std::pair<const char *, bool> words[] = {
      {"w = vector(100, 2, 3, double)\n", true},
      {"w = hvector(100, 1, 48, contiguous(41, char))\n", true},
      {"w = indexed([400, 300, 200], [0, 500, 1000], double)\n", true},
      {"w = hvector(100, 1, 35, contiguous(16, char))\n", false},
      {"w = indexed([1, 2], [0, 5], double)\n", false}};
  for (auto [spec, want] : words) {
    ddtc_type w = makeType(spec);
    CHECK(ddtc_type_commit(w) == DDTC_SUCCESS);
    CHECK_MSG(rt::copiesInWords(*w) == want, "%s: copies in words %d", spec,
              (int)!want);
    ddtc_type_free(&w);
  }
  // Short runs of one type map: the units copy kernel would leave most
  // lanes idle, so refused too.
  CHECK(ddtc_copy_supported(r, r) == DDTC_ERROR_UNSUPPORTED_TYPE);
  CHECK(std::strstr(ddtc_last_error(), "type map"));
  ddtc_type_free(&r);
  ddtc_type_free(&v);
  // Two handles of one type map that is no stream nest (the columns of a
  // lower triangle, records of two runs a point): the units copy kernel,
  // each buffer at its own offset.
  const char *sameMaps[] = {
      "t = indexed([90, 80, 70, 60, 50, 40, 30, 20, 10], [0, 100, 200, 300, "
      "400, 500, 600, 700, 800], double)\n",
      "t = hvector(40, 1, 800, struct([60, 40], [0, 400], [int, double]))\n"};
  for (const char *spec : sameMaps) {
    SpecFile parsed;
    std::string error;
    CHECK(parseSpec(spec, "t", parsed, error));
    const Datatype &tt = *parsed.bindings.back().type;
    const int64_t count = 3, total = tt.layout().size * count;
    const size_t span = static_cast<size_t>(tt.layout().extent * count + 64);
    std::vector<unsigned char> in(span), packed(static_cast<size_t>(total));
    for (unsigned char &c : in)
      c = static_cast<unsigned char>(rng());
    DeviceBuffer src(api, span), dst(api, span);
    api.cuMemcpyHtoD(src.p, in.data(), span);
    ddtc_type a = makeType(spec), b = makeType(spec);
    CHECK(ddtc_type_commit(a) == DDTC_SUCCESS &&
          ddtc_type_commit(b) == DDTC_SUCCESS);
    CHECK_MSG(ddtc_copy_supported(a, b) == DDTC_SUCCESS, "%s",
              ddtc_last_error());
    const int64_t launches = statsNow().generic_launches;
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, total},
                          {7, total - 5},
                          {total / 2, total / 2 + 3}}) {
      // The source 8 bytes in, the destination 4.
      referencePack(tt, count, in.data() + 8, packed.data());
      std::vector<unsigned char> want(span, 0xA5), got(span);
      api.cuMemcpyHtoD(dst.p, want.data(), span);
      referenceUnpackRange(tt, count, packed.data(), lo, hi, want.data() + 4);
      CHECK_MSG(ddtc_copy(a, static_cast<unsigned char *>(src.get()) + 8, count,
                          b, static_cast<unsigned char *>(dst.get()) + 4, count,
                          lo, hi, nullptr, lo == 7 ? 1 : 0) == DDTC_SUCCESS,
                "%s", ddtc_last_error());
      api.cuCtxSynchronize();
      api.cuMemcpyDtoH(got.data(), dst.p, span);
      CHECK_MSG(got == want, "%s range [%lld, %lld)", spec, (long long)lo,
                (long long)hi);
    }
    CHECK(statsNow().generic_launches - launches == 3);
    ddtc_type_free(&a);
    ddtc_type_free(&b);
  }
  return kPass;
}

/// A shuffled gather of doubles: whole instances unpack by the units in
/// origin order (the type's kernel info says so); a range that cuts an
/// instance, and every pack, keep packed order; DDTC_UNPACK_ORDER=0 keeps
/// it everywhere. Every way moves the reference's bytes and touches no
/// other.
bool unpackOrderServes(const cu::DriverAPI &api) {
  auto body = [&]() -> int {
    std::mt19937_64 rng(9);
    std::vector<int> slots(256);
    for (int i = 0; i < 256; ++i)
      slots[i] = i;
    std::shuffle(slots.begin(), slots.end(), rng);
    std::string displs;
    for (int i = 0; i < 128; ++i)
      displs += (i ? ", " : "") + std::to_string(slots[i]);
    const std::string spec =
        "t = resized(0, 2048, indexed_block(1, [" + displs + "], double))\n";
    const int64_t count = 3;
    PackSource src;
    CHECK(src.make(api, spec.c_str(), count, 9));
    const Datatype &type = *src.parsed.bindings.back().type;
    const int64_t size = type.layout().size, total = src.total;
    const size_t span = src.span;
    const std::vector<unsigned char> &ref = src.ref;
    const DeviceBuffer &buf = *src.origin;
    DeviceBuffer back(api, span), packed(api, static_cast<size_t>(total));
    PinnedBuffer pinned(api, static_cast<size_t>(total));
    CHECK(pinned.p);
    // Bytes [from, to) unpacked into a poisoned buffer: the reference's
    // bytes there, the poison elsewhere.
    auto unpackChecks = [&](ddtc_type t, int64_t from, int64_t to) -> bool {
      std::vector<unsigned char> poison(span, 0xA5), whole(span);
      std::vector<unsigned char> expect = poison;
      referenceUnpackRange(type, count, ref.data(), from, to, expect.data());
      if (api.cuMemcpyHtoD(back.p, poison.data(), span) != 0 ||
          ddtc_unpack(t, back.get(), count, from, to,
                      static_cast<unsigned char *>(packed.get()) + from,
                      nullptr, 0) != DDTC_SUCCESS ||
          api.cuCtxSynchronize() != 0 ||
          api.cuMemcpyDtoH(whole.data(), back.p, span) != 0)
        return false;
      return whole == expect;
    };
    for (bool ordered : {true, false}) {
      setenv("DDTC_UNPACK_ORDER", ordered ? "1" : "0", 1);
      setenv("DDTC_JIT", "sync", 1);
      resetRuntime();
      ddtc_type t = makeType(spec.c_str());
      CHECK(t && ddtc_type_commit(t) == DDTC_SUCCESS);
      ddtc_kernel_info info;
      CHECK(ddtc_type_kernel_info(t, &info) == DDTC_SUCCESS);
      CHECK_MSG(info.unpack_in_origin_order == (ordered ? 1 : 0),
                "DDTC_UNPACK_ORDER=%d: unpack_in_origin_order %d", ordered,
                info.unpack_in_origin_order);
      std::vector<unsigned char> got(static_cast<size_t>(total), 0);
      CHECK(api.cuMemsetD8(packed.p, 0x5A, got.size()) == 0);
      CHECK(ddtc_pack(t, buf.get(), count, 0, total, packed.get(), nullptr,
                      0) == DDTC_SUCCESS);
      CHECK(api.cuCtxSynchronize() == 0);
      CHECK(api.cuMemcpyDtoH(got.data(), packed.p, got.size()) == 0);
      CHECK_MSG(got == ref, "pack into device memory, DDTC_UNPACK_ORDER=%d",
                ordered);
      std::memset(pinned.p, 0x5A, got.size());
      CHECK(ddtc_pack(t, buf.get(), count, 0, total, pinned.p, nullptr, 0) ==
            DDTC_SUCCESS);
      CHECK(api.cuCtxSynchronize() == 0);
      CHECK_MSG(std::memcmp(pinned.p, ref.data(), ref.size()) == 0,
                "pack into pinned host memory, DDTC_UNPACK_ORDER=%d", ordered);
      CHECK_MSG(unpackChecks(t, 0, total), "whole unpack, DDTC_UNPACK_ORDER=%d",
                ordered);
      CHECK_MSG(unpackChecks(t, size, total),
                "unpack of the last two instances, DDTC_UNPACK_ORDER=%d",
                ordered);
      CHECK_MSG(unpackChecks(t, 24, total - 40),
                "unpack of a range that cuts instances, DDTC_UNPACK_ORDER=%d",
                ordered);
      ddtc_type_free(&t);
    }
    unsetenv("DDTC_UNPACK_ORDER");
    unsetenv("DDTC_JIT");
    resetRuntime();
    return kPass;
  };
  return body() == kPass;
}

/// Packs into pinned host memory of at least DDTC_HOST_STAGING_MIN bytes go
/// through the device: one launch per DDTC_HOST_STAGING_CHUNK bytes into a
/// ring of two device slots, each copied to the host by a copy engine
/// (HostStaging.h). With chunks of 256 bytes the ring is reused many times,
/// so a copy that overtook the next pack into its slot, or a caller's
/// stream that did not wait for the last copy, shows in the bytes (the
/// asynchronous fake delays every operation). Ranges start and end inside
/// chunks; the packs run on the legacy stream, on a stream of the test's,
/// and from four threads at once; below the threshold one launch writes
/// the host memory. Returns whether all held.
bool hostPacksThroughDevice(const cu::DriverAPI &api) {
  auto body = [&]() -> int {
    const char *spec =
        "t = indexed([5, 9, 2, 7, 11, 3, 6, 8, 4, 10, 1, 12, 5, 7, 9, 2, 6, "
        "3], [0, 6, 17, 20, 29, 41, 45, 53, 62, 67, 78, 80, 93, 99, 107, 117, "
        "120, 127], double)\n";
    const int64_t count = 9;
    PackSource src;
    CHECK(src.make(api, spec, count, 23));
    const int64_t total = src.total;
    const DeviceBuffer &origin = *src.origin;
    const std::vector<unsigned char> &ref = src.ref;
    setenv("DDTC_HOST_STAGING_MIN", "1000", 1);
    setenv("DDTC_HOST_STAGING_CHUNK", "256", 1);
    resetRuntime();
    ddtc_type t = makeType(spec);
    CHECK(t && ddtc_type_commit(t) == DDTC_SUCCESS &&
          ddtc_type_wait(t) == DDTC_SUCCESS);
    cu::CUstream own = nullptr;
    CHECK(api.cuStreamCreate(&own, cu::CU_STREAM_NON_BLOCKING) == 0);
    // Packs [lo, hi) into fresh pinned memory on `stream`, waits for the
    // stream alone, and compares; returns the launches it took.
    auto packOnce = [&](int64_t lo, int64_t hi, cu::CUstream stream,
                        int64_t &launches) -> bool {
      const size_t n = static_cast<size_t>(hi - lo) + 16;
      void *mem = nullptr;
      if (api.cuMemAllocHost(&mem, n) != 0)
        return false;
      auto *host = static_cast<unsigned char *>(mem);
      std::memset(host, 0xA5, n);
      ddtc_stats before = statsNow();
      bool ok = ddtc_pack(t, origin.get(), count, lo, hi, host, stream, 0) ==
                    DDTC_SUCCESS &&
                api.cuStreamSynchronize(stream) == 0;
      launches = statsNow().specialized_launches - before.specialized_launches;
      int64_t bad = 0;
      while (ok && bad < hi - lo && host[bad] == ref[lo + bad])
        ++bad;
      ok = ok && bad == hi - lo && host[hi - lo] == 0xA5;
      api.cuMemFreeHost(mem);
      return ok;
    };
    for (cu::CUstream stream : {cu::CUstream(nullptr), own})
      for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, total},
                            {13, total - 7},
                            {300, 1301},
                            {total - 1000, total}}) {
        int64_t launches = 0;
        CHECK_MSG(packOnce(lo, hi, stream, launches),
                  "pack of [%lld, %lld) into host memory through the device "
                  "(stream %p): wrong bytes",
                  (long long)lo, (long long)hi, (void *)stream);
        // One launch per chunk of 256 stream bytes the range touches.
        int64_t chunks = (hi - lo + 255) / 256;
        CHECK_MSG(launches == chunks, "[%lld, %lld): %lld launches, not %lld",
                  (long long)lo, (long long)hi, (long long)launches,
                  (long long)chunks);
      }
    // Below the threshold: one launch writes the host memory.
    int64_t launches = 0;
    CHECK(packOnce(5, 900, own, launches) && launches == 1);
    // Four threads, each with its stream, share the context's ring.
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
      threads.emplace_back([&, i] {
        cu::CUcontext ctx = nullptr;
        cu::CUdevice dev = 0;
        cu::CUstream s = nullptr;
        if (api.cuDeviceGet(&dev, 0) != 0 ||
            api.cuDevicePrimaryCtxRetain(&ctx, dev) != 0 ||
            api.cuCtxSetCurrent(ctx) != 0 ||
            api.cuStreamCreate(&s, cu::CU_STREAM_NON_BLOCKING) != 0) {
          ++failures;
          return;
        }
        for (int k = 0; k < 3; ++k) {
          int64_t n = 0, lo = 17 * i + k;
          if (!packOnce(lo, total - 3 * k, s, n))
            ++failures;
        }
        api.cuStreamDestroy(s);
        api.cuDevicePrimaryCtxRelease(dev);
      });
    for (std::thread &th : threads)
      th.join();
    CHECK_MSG(failures == 0, "%d packs from threads failed", failures.load());
    api.cuStreamDestroy(own);
    ddtc_type_free(&t);
    unsetenv("DDTC_HOST_STAGING_MIN");
    unsetenv("DDTC_HOST_STAGING_CHUNK");
    resetRuntime();
    return kPass;
  };
  return body() == kPass;
}

} // namespace

DDTC_TEST("fake-driver", fakeDriver) {
  std::string why;
  const cu::DriverAPI *api = cu::getDriver(why);
  char name[128] = "";
  if (!api || api->cuDeviceGetName(name, sizeof name, 0) != 0 ||
      !std::strstr(name, "fake"))
    SKIP("run with DDTC_CUDA_DRIVER naming the fake driver (%s)",
         api ? name : why.c_str());
  std::string nvrtcWhy;
  if (!haveNVRTC(nvrtcWhy) || !haveBuiltinKernels())
    SKIP("needs NVRTC and the built-in kernels");
  TempDir dir;
  useCacheDir(dir.path());

  // A table of 17 runs, one more than a strided nest point may have: the
  // work-unit kernels and their table.
  const char *spec =
      "t = indexed([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2], [0, "
      "3, 8, 16, 24, 28, 34, 40, 49, 54, 58, 65, 75, 78, 83, 91, 99], "
      "double)\n";
  SpecFile parsed;
  std::string error;
  CHECK(parseSpec(spec, "t", parsed, error));
  const Datatype &type = *parsed.bindings.back().type;
  const int64_t count = 5, size = type.layout().size;
  const int64_t total = size * count, extent = type.layout().extent;
  const size_t span = static_cast<size_t>(extent * count);

  DeviceBuffer origin(*api, span), packed(*api, static_cast<size_t>(total));
  std::vector<unsigned char> host(span), ref(static_cast<size_t>(total)),
      got(static_cast<size_t>(total));
  std::mt19937_64 rng(7);
  for (unsigned char &c : host)
    c = static_cast<unsigned char>(rng());
  CHECK(api->cuMemcpyHtoD(origin.p, host.data(), span) == 0);
  referencePack(type, count, host.data(), ref.data());

  ddtc_type t = makeType(spec);
  CHECK(t);
  ddtc_stats s0 = statsNow();
  CHECK(ddtc_type_commit(t) == DDTC_SUCCESS);
  ddtc_kernel_info info;
  CHECK(ddtc_type_kernel_info(t, &info) == DDTC_SUCCESS);
  CHECK_MSG(info.arch == 80, "arch %d", info.arch);
  CHECK(info.generic_available == 1);

  // The first call: the generic kernel (no current context yet: the
  // primary one is made current).
  CHECK_MSG(ddtc_pack(t, origin.get(), count, 0, total, packed.get(), nullptr,
                      0) == DDTC_SUCCESS,
            "%s", ddtc_last_error());
  api->cuMemcpyDtoH(got.data(), packed.p, got.size());
  CHECK(got == ref);
  ddtc_stats s1 = statsNow();
  // The specialized kernel may already be ready; the first call may have used
  // either.
  CHECK(s1.generic_launches + s1.specialized_launches ==
        s0.generic_launches + s0.specialized_launches + 1);

  // After the compile: the specialized kernel.
  CHECK(ddtc_type_wait(t) == DDTC_SUCCESS);
  CHECK(ddtc_type_kernel_info(t, &info) == DDTC_SUCCESS &&
        info.origin == DDTC_KERNEL_COMPILED);
  std::vector<unsigned char> poison(static_cast<size_t>(total), 0xA5);
  api->cuMemcpyHtoD(packed.p, poison.data(), poison.size());
  // A partial range with a one-block grid.
  const int64_t lo = 7, hi = total - 5;
  CHECK(ddtc_pack(t, origin.get(), count, lo, hi,
                  static_cast<unsigned char *>(packed.get()), nullptr,
                  1) == DDTC_SUCCESS);
  api->cuMemcpyDtoH(got.data(), packed.p, got.size());
  CHECK(std::memcmp(got.data(), ref.data() + lo, hi - lo) == 0);
  CHECK(got[hi - lo] == 0xA5);
  ddtc_stats s2 = statsNow();
  CHECK(s2.specialized_launches == s1.specialized_launches + 1);
  // One table upload serves both kernels (they share the plan).
  CHECK_MSG(s2.table_uploads == s0.table_uploads + 1, "%lld uploads",
            (long long)(s2.table_uploads - s0.table_uploads));

  // Unpack from another thread, which has no current context.
  DeviceBuffer back(*api, span);
  api->cuMemcpyHtoD(back.p, std::vector<unsigned char>(span, 0xA5).data(),
                    span);
  CHECK(api->cuMemcpyHtoD(packed.p, ref.data(), ref.size()) == 0);
  ddtc_status st = DDTC_ERROR_INTERNAL;
  std::thread([&] {
    st = ddtc_unpack(t, back.get(), count, 0, total, packed.get(), nullptr, 0);
  }).join();
  CHECK(st == DDTC_SUCCESS);
  std::vector<unsigned char> unpacked(span), expect(span, 0xA5);
  api->cuMemcpyDtoH(unpacked.data(), back.p, span);
  referenceUnpack(type, count, ref.data(), expect.data());
  CHECK(unpacked == expect);

  // Pageable host memory is refused before any launch.
  std::vector<unsigned char> pageable(span);
  CHECK(ddtc_pack(t, pageable.data(), count, 0, total, packed.get(), nullptr,
                  0) == DDTC_ERROR_INVALID_POINTER);
  std::printf("pageable origin: %s\n", ddtc_last_error());
  CHECK(std::strstr(ddtc_last_error(), "origin buffer"));
  CHECK(ddtc_unpack(t, origin.get(), count, 0, total, pageable.data(), nullptr,
                    0) == DDTC_ERROR_INVALID_POINTER);
  CHECK(std::strstr(ddtc_last_error(), "packed buffer"));
  // A caller that knows its buffers (libddtc-mpi) skips the checks within a
  // KnownPointers scope, and only there: the fake's kernels run on the CPU,
  // so the unpack from pageable memory then goes through.
  {
    rt::KnownPointers known;
    CHECK(rt::pointersKnown());
    CHECK(ddtc_unpack(t, origin.get(), count, 0, total, pageable.data(),
                      nullptr, 0) == DDTC_SUCCESS);
    api->cuCtxSynchronize();
  }
  CHECK(!rt::pointersKnown());
  CHECK(ddtc_unpack(t, origin.get(), count, 0, total, pageable.data(), nullptr,
                    0) == DDTC_ERROR_INVALID_POINTER);

  // A strided type in generic mode runs its work-unit plan.
  setenv("DDTC_JIT", "generic", 1);
  resetRuntime();
  ddtc_type v = makeType("v = vector(100, 3, 7, float)\n");
  CHECK(ddtc_type_commit(v) == DDTC_SUCCESS);
  SpecFile pv;
  CHECK(parseSpec("v = vector(100, 3, 7, float)\n", "v", pv, error));
  const Datatype &vt = *pv.bindings.back().type;
  std::vector<unsigned char> vref(static_cast<size_t>(vt.layout().size));
  DeviceBuffer vo(*api, static_cast<size_t>(vt.layout().extent)),
      vp(*api, vref.size());
  std::vector<unsigned char> vhost(static_cast<size_t>(vt.layout().extent));
  for (unsigned char &c : vhost)
    c = static_cast<unsigned char>(rng());
  api->cuMemcpyHtoD(vo.p, vhost.data(), vhost.size());
  referencePack(vt, 1, vhost.data(), vref.data());
  ddtc_stats s3 = statsNow();
  CHECK(ddtc_pack(v, vo.get(), 1, 0, vt.layout().size, vp.get(), nullptr, 3) ==
        DDTC_SUCCESS);
  std::vector<unsigned char> vgot(vref.size());
  api->cuMemcpyDtoH(vgot.data(), vp.p, vgot.size());
  CHECK(vgot == vref);
  CHECK(statsNow().generic_launches == s3.generic_launches + 1);
  CHECK(statsNow().nvrtc_compiles == s2.nvrtc_compiles); // nothing compiled
  ddtc_type_free(&v);

  // Three floats of every five: its own kernels would be record period
  // kernels, but the nest kernels serve it (nestsBeatPlan), which the
  // runtime says once with DDTC_VERBOSE (its stderr read back here: on this
  // driver a type's own kernels cannot run, so the launches alone would not
  // tell the two apart).
  setenv("DDTC_JIT", "sync", 1);
  setenv("DDTC_VERBOSE", "1", 1);
  resetRuntime();
  const char *fiveSpec = "f = vector(300, 3, 5, float)\n";
  ddtc_type f = makeType(fiveSpec);
  CHECK(ddtc_type_commit(f) == DDTC_SUCCESS);
  SpecFile pf;
  CHECK(parseSpec(fiveSpec, "f", pf, error));
  const Datatype &ft = *pf.bindings.back().type;
  std::vector<unsigned char> fref(static_cast<size_t>(ft.layout().size));
  std::vector<unsigned char> fhost(static_cast<size_t>(ft.layout().extent));
  for (unsigned char &c : fhost)
    c = static_cast<unsigned char>(rng());
  DeviceBuffer fo(*api, fhost.size()), fp(*api, fref.size());
  api->cuMemcpyHtoD(fo.p, fhost.data(), fhost.size());
  referencePack(ft, 1, fhost.data(), fref.data());
  ddtc_status fivePacked = DDTC_ERROR_INTERNAL;
  std::string logged;
  CHECK(stderrOf(
      [&] {
        fivePacked = ddtc_pack(f, fo.get(), 1, 0, ft.layout().size, fp.get(),
                               nullptr, 0);
      },
      logged));
  CHECK(fivePacked == DDTC_SUCCESS);
  std::vector<unsigned char> fgot(fref.size());
  api->cuMemcpyDtoH(fgot.data(), fp.p, fgot.size());
  CHECK(fgot == fref);
  CHECK_MSG(logged.find("the nest kernels serve it") != std::string::npos,
            "the runtime did not choose the nest kernels; it said: %s",
            logged.c_str());
  ddtc_type_free(&f);
  unsetenv("DDTC_VERBOSE");
  unsetenv("DDTC_JIT");
  resetRuntime();

  CHECK(mappedHostPacksByChunks(*api));
  CHECK(hostPacksThroughDevice(*api));
  CHECK(alignmentVariantsServe(*api));
  CHECK(unpackOrderServes(*api));
  CHECK(copiesBetweenLayouts(*api) == kPass);

  CHECK(ddtc_type_free(&t) == DDTC_SUCCESS);
  return kPass;
}

namespace {

cu::CUdeviceptr address(const void *p) {
  return reinterpret_cast<cu::CUdeviceptr>(p);
}

} // namespace

// The fake driver's streams run on worker threads, each operation after a
// random delay, so that what a missing synchronization gets wrong shows:
// checks the order within a stream, the independence of streams and their
// ordering through events, the pointer attributes of registered, managed
// and pageable memory, and calls from several threads; then runs the
// runtime's own path (the test above) on these streams.
DDTC_TEST("fake-driver-async", fakeDriverAsync) {
  // The fake reads it at its first stream operation, after this (the ctest
  // entry sets it too).
  setenv("DDTC_FAKE_DELAY_US", "200", 0);
  std::string why;
  const cu::DriverAPI *api = cu::getDriver(why);
  char name[128] = "";
  if (!api || api->cuDeviceGetName(name, sizeof name, 0) != 0 ||
      !std::strstr(name, "fake"))
    SKIP("run with DDTC_CUDA_DRIVER naming the fake driver (%s)",
         api ? name : why.c_str());
  const cu::DriverAPI &a = *api;
  constexpr int kNotReady = cu::CUDA_ERROR_NOT_READY;
  cu::CUdevice dev = 0;
  cu::CUcontext ctx = nullptr;
  CHECK(a.cuDeviceGet(&dev, 0) == 0 &&
        a.cuDevicePrimaryCtxRetain(&ctx, dev) == 0 &&
        a.cuCtxSetCurrent(ctx) == 0);

  // Long enough a queue (some 25 ms of delays) that its end cannot have run
  // when the host looks right after queueing it.
  constexpr size_t n = 4096;
  constexpr int chain = 256;
  cu::CUstream s1 = nullptr, s2 = nullptr;
  CHECK(a.cuStreamCreate(&s1, cu::CU_STREAM_NON_BLOCKING) == 0);
  CHECK(a.cuStreamCreate(&s2, cu::CU_STREAM_NON_BLOCKING) == 0);
  cu::CUevent start = nullptr, done = nullptr, never = nullptr;
  CHECK(a.cuEventCreate(&start, cu::CU_EVENT_DEFAULT) == 0);
  CHECK(a.cuEventCreate(&done, cu::CU_EVENT_DEFAULT) == 0);
  CHECK(a.cuEventCreate(&never, cu::CU_EVENT_DEFAULT) == 0);
  DeviceBuffer d1(a, n), d2(a, n), d3(a, n), d4(a, n);
  PinnedBuffer in(a, n), out(a, n);
  CHECK(in.p && out.p);
  for (size_t i = 0; i < n; ++i)
    in.p[i] = static_cast<unsigned char>(i * 7 + 1);
  std::memset(out.p, 0, n);

  // In order on one stream: the copy back sees the copies before it once
  // the stream is synchronized, and not before.
  CHECK(a.cuEventQuery(never) == 0); // never recorded: nothing to wait for
  CHECK(a.cuEventRecord(start, s1) == 0);
  CHECK(a.cuMemcpyHtoDAsync(d1.p, in.p, n, s1) == 0);
  for (int i = 0; i < chain; ++i)
    CHECK(a.cuMemcpyDtoDAsync(d2.p, d1.p, n, s1) == 0);
  CHECK(a.cuMemcpyDtoHAsync(out.p, d2.p, n, s1) == 0);
  CHECK(a.cuEventRecord(done, s1) == 0);
  CHECK(a.cuEventQuery(done) == kNotReady);
  CHECK(a.cuStreamQuery(s1) == kNotReady);
  float ms = -1;
  CHECK(a.cuEventElapsedTime(&ms, start, done) == kNotReady);
  CHECK(a.cuStreamSynchronize(s1) == 0);
  CHECK(a.cuEventQuery(done) == 0 && a.cuStreamQuery(s1) == 0);
  CHECK(std::memcmp(out.p, in.p, n) == 0);
  CHECK(a.cuEventElapsedTime(&ms, start, done) == 0);
  CHECK_MSG(ms > 0 && ms < 60000, "%g ms", ms);
  std::printf("one stream: %d copies in %.2f ms\n", chain + 2, ms);
  CHECK(a.cuEventElapsedTime(&ms, start, never) != 0);

  // Streams are independent: s2 finishes while s1 is still busy...
  for (int i = 0; i < chain; ++i)
    CHECK(a.cuMemcpyDtoDAsync(d3.p, d2.p, n, s1) == 0);
  for (size_t i = 0; i < n; ++i)
    in.p[i] = static_cast<unsigned char>(i * 13 + 5);
  CHECK(a.cuMemcpyHtoDAsync(d1.p, in.p, n, s1) == 0);
  CHECK(a.cuEventRecord(done, s1) == 0);
  CHECK(a.cuMemcpyDtoHAsync(out.p, d4.p, n, s2) == 0);
  CHECK(a.cuStreamSynchronize(s2) == 0);
  CHECK(a.cuStreamQuery(s1) == kNotReady);
  // ... and runs after s1's copy only through the event.
  CHECK(a.cuStreamWaitEvent(s2, done, 0) == 0);
  CHECK(a.cuMemcpyDtoDAsync(d2.p, d1.p, n, s2) == 0);
  CHECK(a.cuMemcpyDtoHAsync(out.p, d2.p, n, s2) == 0);
  CHECK(a.cuStreamSynchronize(s2) == 0);
  CHECK(a.cuEventQuery(done) == 0);
  CHECK(std::memcmp(out.p, in.p, n) == 0);

  // Stream memory operations: s2 holds its copy until s1 writes the word
  // (a later epoch in the upper half: the wait compares the signed
  // difference, so an older value never satisfies it).
  int memOps = 0;
  CHECK(a.cuDeviceGetAttribute(
            &memOps, cu::CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
            dev) == 0 &&
        memOps == 1);
  CHECK(a.cuStreamWaitValue64 && a.cuStreamWriteValue64);
  DeviceBuffer word(a, 64);
  CHECK(a.cuMemsetD8(word.p, 0, 64) == 0);
  const unsigned long long epoch = 7ull << 32;
  for (size_t i = 0; i < n; ++i)
    in.p[i] = static_cast<unsigned char>(i * 5 + 3);
  std::memset(out.p, 0, n);
  CHECK(a.cuStreamWaitValue64(s2, word.p, epoch | 2,
                              cu::CU_STREAM_WAIT_VALUE_GEQ) == 0);
  CHECK(a.cuMemcpyDtoHAsync(out.p, d1.p, n, s2) == 0);
  CHECK(a.cuMemcpyHtoDAsync(d1.p, in.p, n, s1) == 0);
  CHECK(a.cuStreamWriteValue64(s1, word.p, (6ull << 32) | 9,
                               cu::CU_STREAM_WRITE_VALUE_DEFAULT) == 0);
  CHECK(a.cuStreamWriteValue64(s1, word.p, epoch | 1,
                               cu::CU_STREAM_WRITE_VALUE_DEFAULT) == 0);
  CHECK(a.cuStreamSynchronize(s1) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(a.cuStreamQuery(s2) == kNotReady); // 6:9 and 7:1 are below 7:2
  CHECK(a.cuStreamWriteValue64(s1, word.p, epoch | 2,
                               cu::CU_STREAM_WRITE_VALUE_DEFAULT) == 0);
  CHECK(a.cuStreamSynchronize(s2) == 0);
  CHECK(std::memcmp(out.p, in.p, n) == 0);

  // The legacy stream is the current context's.
  CHECK(a.cuMemcpyDtoHAsync(out.p, d3.p, n, nullptr) == 0);
  CHECK(a.cuStreamSynchronize(nullptr) == 0);
  int rc = 0;
  std::thread([&] { rc = a.cuStreamSynchronize(nullptr); }).join();
  CHECK(rc != 0);

  // Async copies from and to pageable memory: the source is read, and the
  // destination written, before the call returns.
  std::vector<unsigned char> pageable(in.p, in.p + n);
  CHECK(a.cuMemcpyHtoDAsync(d1.p, pageable.data(), n, s1) == 0);
  std::fill(pageable.begin(), pageable.end(), 0);
  CHECK(a.cuMemcpyDtoHAsync(pageable.data(), d1.p, n, s1) == 0);
  CHECK(std::memcmp(pageable.data(), in.p, n) == 0);

  // Registered host memory: host memory, mapped at its own address.
  std::vector<unsigned char> host(n);
  unsigned type = 99, managed = 99;
  CHECK(a.cuPointerGetAttribute(&type, cu::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                address(host.data())) != 0);
  CHECK(a.cuMemHostRegister(host.data(), n, cu::CU_MEMHOSTREGISTER_PORTABLE) ==
        0);
  CHECK(a.cuMemHostRegister(host.data() + 8, 16, 0) != 0); // overlaps
  CHECK(a.cuPointerGetAttribute(&type, cu::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                address(host.data() + 100)) == 0 &&
        type == cu::CU_MEMORYTYPE_HOST);
  CHECK(a.cuPointerGetAttribute(&managed, cu::CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                address(host.data())) == 0 &&
        managed == 0);
  cu::CUdeviceptr mapped = 0;
  CHECK(a.cuMemHostGetDevicePointer(&mapped, host.data(), 0) == 0 &&
        mapped == address(host.data()));
  CHECK(a.cuMemHostUnregister(host.data()) == 0);
  CHECK(a.cuMemHostUnregister(host.data()) != 0);
  CHECK(a.cuPointerGetAttribute(&type, cu::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                address(host.data())) != 0);

  // Managed memory reads as device memory, and as managed.
  cu::CUdeviceptr m = 0;
  CHECK(a.cuMemAllocManaged(&m, n, cu::CU_MEM_ATTACH_GLOBAL) == 0);
  CHECK(a.cuPointerGetAttribute(&type, cu::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                m) == 0 &&
        type == cu::CU_MEMORYTYPE_DEVICE);
  CHECK(a.cuPointerGetAttribute(&managed, cu::CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                m) == 0 &&
        managed == 1);
  CHECK(a.cuPointerGetAttribute(&managed, cu::CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                d1.p) == 0 &&
        managed == 0);

  // The plural query: no error for pageable memory, null attributes.
  int attrs[] = {cu::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                 cu::CU_POINTER_ATTRIBUTE_CONTEXT,
                 cu::CU_POINTER_ATTRIBUTE_IS_MANAGED,
                 cu::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  cu::CUcontext owner = nullptr;
  int ordinal = 99;
  void *data[] = {&type, &owner, &managed, &ordinal};
  CHECK(a.cuPointerGetAttributes(4, attrs, data, m) == 0);
  CHECK(type == cu::CU_MEMORYTYPE_DEVICE && owner == ctx && managed == 1 &&
        ordinal == 0);
  CHECK(a.cuMemFree(m) == 0);
  CHECK(a.cuPointerGetAttributes(4, attrs, data, address(host.data())) == 0);
  CHECK_MSG(type == 0 && owner == nullptr && managed == 0 && ordinal == -2,
            "type %u, context %p, managed %u, ordinal %d", type,
            static_cast<void *>(owner), managed, ordinal);

  // Several threads, each with its stream, at once.
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      a.cuCtxSetCurrent(ctx);
      cu::CUstream s = nullptr;
      cu::CUevent e = nullptr;
      if (a.cuStreamCreate(&s, cu::CU_STREAM_NON_BLOCKING) != 0 ||
          a.cuEventCreate(&e, cu::CU_EVENT_DISABLE_TIMING) != 0) {
        ++failures;
        return;
      }
      {
        DeviceBuffer x(a, n), y(a, n);
        PinnedBuffer src(a, n), dst(a, n);
        for (int it = 0; it < 20; ++it) {
          std::memset(src.p, t * 32 + it, n);
          a.cuMemcpyHtoDAsync(x.p, src.p, n, s);
          a.cuMemcpyDtoDAsync(y.p, x.p, n, s);
          a.cuMemcpyDtoHAsync(dst.p, y.p, n, s);
          a.cuEventRecord(e, s);
          if (it % 2)
            a.cuEventSynchronize(e);
          else
            while (a.cuEventQuery(e) == kNotReady)
              std::this_thread::yield();
          if (std::memcmp(dst.p, src.p, n) != 0)
            ++failures;
        }
      }
      if (a.cuEventDestroy(e) != 0 || a.cuStreamDestroy(s) != 0)
        ++failures;
    });
  }
  for (std::thread &t : threads)
    t.join();
  CHECK_MSG(failures == 0, "%d failures", failures.load());

  CHECK(a.cuEventDestroy(start) == 0 && a.cuEventDestroy(done) == 0 &&
        a.cuEventDestroy(never) == 0);
  CHECK(a.cuEventDestroy(never) != 0);
  CHECK(a.cuStreamDestroy(s1) == 0 && a.cuStreamDestroy(s2) == 0);
  CHECK(a.cuDevicePrimaryCtxRelease(dev) == 0);

  // The runtime's pack and unpack on the asynchronous streams (with no
  // current context, as that test begins).
  CHECK(a.cuCtxSetCurrent(nullptr) == 0);
  return fakeDriver();
}
