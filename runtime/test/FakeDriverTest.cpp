//===- FakeDriverTest.cpp - The GPU path of the runtime, on a fake driver ---===//
//
// Run with DDTC_CUDA_DRIVER naming the fake driver (FakeCUDADriver.cpp) and
// DDTC_FAKE_ARCH=80, so that no built-in cubin fits and the specialized
// kernel of a work-unit type is compiled in the background: calls run the
// generic kernel (from PTX) first, then the specialized one. Checks the
// results against the reference, the launch counters, the single upload of
// the unit table, calls from a thread without a current context, and the
// pointer check.
//===----------------------------------------------------------------------===//

#include "TestHarness.h"
#include "TestUtil.h"

#include "CUDADriver.h"

#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"

#include <cstring>
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

  const char *spec = "t = indexed([1, 2, 3], [0, 5, 11], double)\n";
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
                  static_cast<unsigned char *>(packed.get()), nullptr, 1) ==
        DDTC_SUCCESS);
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
  api->cuMemcpyHtoD(back.p, std::vector<unsigned char>(span, 0xA5).data(), span);
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
  unsetenv("DDTC_JIT");

  CHECK(ddtc_type_free(&t) == DDTC_SUCCESS);
  return kPass;
}
