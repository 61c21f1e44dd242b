//===- EmulatedKernels.cpp - The generic kernels, run on the CPU ----------===//

#include "EmulatedKernels.h"

#include "GenericPlan.h"

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/Typemap.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"

#include <vector>

#include "ddtc/Target/CUDA/CPUEmulation.h"

// The generic kernels, as libddtc's build compiles them with NVRTC (after
// the emulation header, which defines what CUDA C++ needs).
#include "GenericKernelSources.inc"
#include "ddtc/Testing/EmulatedGenericKernels.h"

namespace ddtc::fuzz {

namespace {

constexpr int64_t kMaxBuffer = int64_t(1) << 20;
constexpr unsigned char kPoison = 0xA5;

} // namespace

std::string checkGenericKernels(const Datatype &type, int64_t count,
                                std::mt19937_64 &rng) {
  const int64_t size = type.layout().size;
  int64_t total = 0, lo = 0, hi = 0, span = 0;
  std::string error;
  if (size <= 0 || count <= 0 || __builtin_mul_overflow(size, count, &total) ||
      total > kMaxBuffer || !touchedSpan(type, count, lo, hi, error) ||
      __builtin_sub_overflow(hi, lo, &span) || span > kMaxBuffer)
    return "";
  KernelPlan spec, g;
  if (!planKernel(type, spec, error) ||
      !rt::makeUnitsPlan(spec.layout, kMaxBuffer, g))
    return "";
  std::vector<int64_t> words = encodeUnitTable(g);
  std::vector<long long> table(words.begin(), words.end());
  // The origin buffer, 16-byte aligned at the first touched byte.
  std::vector<unsigned char> source(static_cast<size_t>(span) + 32);
  for (unsigned char &c : source)
    c = static_cast<unsigned char>(rng());
  uintptr_t first =
      (reinterpret_cast<uintptr_t>(source.data()) + 15) & ~uintptr_t(15);
  unsigned char *origin = reinterpret_cast<unsigned char *>(first) - lo;
  std::vector<unsigned char> ref(static_cast<size_t>(total));
  referencePack(type, count, origin, ref.data());
  int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(total + 1));
  int64_t b = static_cast<int64_t>(rng() % static_cast<uint64_t>(total + 1));
  const std::pair<int64_t, int64_t> ranges[] = {
      {0, total}, {std::min(a, b), std::max(a, b)}};
  for (auto [from, to] : ranges) {
    LaunchConfig cfg =
        computeLaunch(g, count, from, to, static_cast<int64_t>(rng() % 3));
    if (!cfg.error.empty())
      return "computeLaunch: " + cfg.error;
    const std::string where = " (range [" + std::to_string(from) + ", " +
                              std::to_string(to) + "), width " +
                              std::to_string(g.width) + ")";
    std::vector<unsigned char> packed(static_cast<size_t>(to - from) + 32,
                                      kPoison);
    unsigned char *p = reinterpret_cast<unsigned char *>(
        (reinterpret_cast<uintptr_t>(packed.data()) + 15) & ~uintptr_t(15));
    if (cfg.grid > 0 &&
        !launchUnitsKernel(true, g.width, unitsByChunks(g), cfg, origin, p,
                           table.data()))
      return "no generic kernel of width " + std::to_string(g.width);
    for (int64_t k = from; k < to; ++k)
      if (p[k - from] != ref[static_cast<size_t>(k)])
        return "generic pack differs at packed byte " + std::to_string(k) +
               where;
    std::vector<unsigned char> dst(source.size(), kPoison),
        expect(source.size(), kPoison);
    unsigned char *dstOrigin = dst.data() + (origin - source.data());
    referenceUnpackRange(type, count, ref.data(), from, to,
                         expect.data() + (origin - source.data()));
    if (cfg.grid > 0)
      launchUnitsKernel(false, g.width, unitsByChunks(g), cfg, dstOrigin, p,
                        table.data());
    if (dst != expect)
      return "generic unpack differs from the reference" + where;
  }
  return "";
}

} // namespace ddtc::fuzz
