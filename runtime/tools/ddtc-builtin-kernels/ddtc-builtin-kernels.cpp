//===- ddtc-builtin-kernels.cpp - The generic kernels, built with NVRTC ---===//
//
// ddtc-builtin-kernels -o FILE [--ptx-arch N] [--cubin-archs N,N,...]
// Emits the work-unit and the nest kernels of every access width, compiles
// each with NVRTC to PTX and to cubins, and the specialized kernels of the
// strided shapes of vectors and subarrays (stridedSources) to cubins, and
// writes a C++ file holding them as byte arrays (the table of
// BuiltinKernels.h). Without NVRTC it writes an empty table and says so:
// the library then compiles every kernel at run time.
//
// ddtc-builtin-kernels --list-shapes
// Prints those strided shapes, each with the first spec that plans to it.
//
// ddtc-builtin-kernels --emit-sources FILE
// Writes the CUDA C++ of the same kernels, one after the other, for the tests
// that run them on the CPU (after CPUEmulation.h).
//===----------------------------------------------------------------------===//

#include "BuiltinKernels.h"
#include "GenericPlan.h"

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/NVRTCCompiler.h"
#include "ddtc/Target/CUDA/NestKernel.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace ddtc;
using namespace ddtc::rt;

namespace {

struct Compiled {
  std::string shape;
  int width;
  bool ptx;
  int arch;
  std::string data;
};

std::string cString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// The generic kernels: the work-unit kernels (a warp a unit, and a chunk a
/// thread for short units) and the nest kernels of every width.
struct GenericSource {
  std::string shape;
  int width;
  EmittedKernels kernels;
};
std::vector<GenericSource> genericSources() {
  std::vector<GenericSource> out;
  for (bool chunks : {false, true})
    for (int width : kGenericWidths) {
      KernelPlan plan = makeUnitsShapePlan(width, chunks);
      std::string shape = kernelShapeKey(plan);
      out.push_back({shape, width, emitCUDA(plan, kernelSymbolPrefix(shape))});
    }
  for (int width : kGenericWidths)
    out.push_back({nestShapeKey(width), width, emitNestKernels(width)});
  return out;
}

/// The specialized kernels of the strided shapes that vectors and
/// subarrays of the basic types plan to: blocks of every length up to 16
/// bytes and of powers of two up to 64 KiB, gaps of 1 to 16 bytes and of a
/// block and of a block and more, few and many blocks; 2-d and 3-d
/// subarrays of 1-, 2-, 4- and 8-byte elements (faces, interiors, slabs)
/// and transposes of their matrices. Their first commit then finds
/// its kernel built in instead of waiting for NVRTC. Left out: shapes the
/// generic table holds, plans that are not strided, and the period kernels,
/// whose shape names the stride and runs of one type (any other stride is
/// another shape).
std::vector<GenericSource>
stridedSources(const std::vector<GenericSource> &genericKernels,
               bool listOnly) {
  std::vector<std::string> specs;
  const int64_t blocks[] = {1,  2,  3,   4,   5,   6,    7,    8,    9,  10,
                            11, 12, 13,  14,  15,  16,   20,   24,   32, 48,
                            64, 96, 128, 256, 512, 1024, 4096, 65536};
  for (int64_t count : {int64_t(64), int64_t(1) << 20})
    for (int64_t b : blocks)
      for (int64_t gap : {int64_t(1), int64_t(2), int64_t(4), int64_t(8),
                          int64_t(12), int64_t(16), b, b + 4, b + 8, 3 * b + 4})
        if (count * (b + gap) <= (int64_t(1) << 32))
          specs.push_back("t = hvector(" + std::to_string(count) + ", " +
                          std::to_string(b) + ", " + std::to_string(b + gap) +
                          ", char)\n");
  const struct {
    const char *name, *bytes;
  } elems[] = {{"char", "1"}, {"short", "2"}, {"float", "4"}, {"double", "8"}};
  for (const auto &e : elems) {
    const std::string el = e.name, bytes = e.bytes;
    for (int n : {64, 512}) {
      const std::string N = std::to_string(n), M = std::to_string(n - 2);
      const std::string full = "[" + N + ", " + N + ", " + N + "]";
      for (const std::string &sub :
           {"[1, " + M + ", " + M + "]", "[" + M + ", 1, " + M + "]",
            "[" + M + ", " + M + ", 1]", "[" + M + ", " + M + ", " + M + "]",
            "[8, " + M + ", " + M + "]"})
        specs.push_back("t = subarray(" + full + ", " + sub +
                        ", [1, 1, 1], C, " + el + ")\n");
      specs.push_back("t = subarray([" + N + ", " + N + "], [" + M + ", " + M +
                      "], [1, 1], C, " + el + ")\n");
      specs.push_back("t = subarray([" + N + ", " + N + "], [" + M +
                      ", 1], [1, 1], C, " + el + ")\n");
      specs.push_back("t = vector(" + N + ", 1, " + N + ", " + el + ")\n");
      // A transpose: the columns of a row-major matrix, one after another.
      specs.push_back("c = resized(0, " + bytes + ", vector(" + N + ", 1, " +
                      N + ", " + el + "))\nt = contiguous(" + N + ", c)\n");
    }
  }
  std::set<std::string> generic;
  for (const GenericSource &g : genericKernels)
    generic.insert(g.shape);
  std::vector<GenericSource> out;
  // Every type of a shape must emit the same source: the runtime serves a
  // built-in kernel by the shape alone. Checked here for every type listed.
  std::map<std::string, std::pair<std::string, std::string>> firstOf;
  for (const std::string &spec : specs) {
    SpecFile file;
    std::string error;
    if (!parseSpec(spec, "builtin.ddt", file, error) || file.bindings.empty()) {
      std::fprintf(stderr, "ddtc-builtin-kernels: error: %s: %s\n",
                   spec.c_str(), error.c_str());
      std::exit(1);
    }
    KernelPlan plan;
    if (!planKernel(*file.bindings.back().type, plan, error) ||
        plan.family != KernelFamily::Strided)
      continue;
    const std::string shape = kernelShapeKey(plan);
    if (generic.count(shape) || shape.find(".period") != std::string::npos)
      continue;
    EmittedKernels kernels = emitCUDA(plan, kernelSymbolPrefix(shape));
    auto [it, first] =
        firstOf.emplace(shape, std::make_pair(spec, kernels.source));
    if (!first && it->second.second != kernels.source) {
      std::fprintf(stderr,
                   "ddtc-builtin-kernels: error: two types of shape %s emit "
                   "different kernels:\n%s%s",
                   shape.c_str(), it->second.first.c_str(), spec.c_str());
      std::exit(1);
    }
    if (!first)
      continue;
    if (listOnly) {
      std::printf("%s\t%s", shape.c_str(), spec.c_str());
      continue;
    }
    out.push_back({shape, static_cast<int>(plan.width), std::move(kernels)});
  }
  return out;
}

std::string render(const std::vector<Compiled> &kernels,
                   const std::string &note) {
  std::ostringstream os;
  os << "// Generated by ddtc-builtin-kernels when the library was built: the\n"
        "// generic work-unit and nest kernels, compiled by NVRTC. Do not "
        "edit.\n\n"
        "#include \"BuiltinKernels.h\"\n\n"
        "namespace ddtc::rt {\n\nnamespace {\n";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string &d = kernels[i].data;
    os << "// " << kernels[i].shape
       << (kernels[i].ptx ? " PTX compute_" : " cubin sm_") << kernels[i].arch
       << "\n"
       << "const unsigned char kKernel" << i << "[] = {";
    for (size_t j = 0; j < d.size(); ++j) {
      if (j % 16 == 0)
        os << "\n";
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02x,",
                    static_cast<unsigned>(static_cast<unsigned char>(d[j])));
      os << buf;
    }
    os << "\n};\n";
  }
  os << "} // namespace\n\n"
     << "const BuiltinKernel kBuiltinKernels[] = {\n";
  for (size_t i = 0; i < kernels.size(); ++i)
    os << "    {\"" << kernels[i].shape << "\", " << kernels[i].width << ", "
       << (kernels[i].ptx ? "true" : "false") << ", " << kernels[i].arch
       << ", kKernel" << i << ", sizeof kKernel" << i << "},\n";
  os << "    {nullptr, 0, false, 0, nullptr, 0}, // never empty\n};\n"
     << "const size_t kNumBuiltinKernels = " << kernels.size() << ";\n"
     << "const char *const kBuiltinKernelsNote =\n    " << cString(note)
     << ";\n\n} // namespace ddtc::rt\n";
  return os.str();
}

bool parseArchs(const std::string &list, std::vector<int> &out) {
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty())
      continue;
    char *end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (*end || v < 10 || v > 999)
      return false;
    out.push_back(static_cast<int>(v));
  }
  return true;
}

int usage() {
  std::fprintf(stderr, "usage: ddtc-builtin-kernels -o FILE [--ptx-arch N] "
                       "[--cubin-archs N,N,...]\n"
                       "       ddtc-builtin-kernels --emit-sources FILE\n"
                       "       ddtc-builtin-kernels --list-shapes\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string output, sourcesOutput;
  int ptxArch = 75;
  std::vector<int> cubinArchs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" && i + 1 < argc) {
      output = argv[++i];
    } else if (a == "--list-shapes") {
      stridedSources(genericSources(), /*listOnly=*/true);
      return 0;
    } else if (a == "--emit-sources" && i + 1 < argc) {
      sourcesOutput = argv[++i];
    } else if (a == "--ptx-arch" && i + 1 < argc) {
      std::vector<int> v;
      if (!parseArchs(argv[++i], v) || v.size() != 1)
        return usage();
      ptxArch = v[0];
    } else if (a == "--cubin-archs" && i + 1 < argc) {
      if (!parseArchs(argv[++i], cubinArchs))
        return usage();
    } else {
      return usage();
    }
  }
  if (!sourcesOutput.empty()) {
    std::ofstream out(sourcesOutput, std::ios::binary | std::ios::trunc);
    out << "// Generated by ddtc-builtin-kernels: the generic kernels' CUDA "
           "C++.\n";
    for (const GenericSource &g : genericSources())
      out << g.kernels.source;
    out.close();
    if (!out) {
      std::fprintf(stderr, "ddtc-builtin-kernels: error: cannot write %s\n",
                   sourcesOutput.c_str());
      return 1;
    }
    if (output.empty())
      return 0;
  }
  if (output.empty())
    return usage();

  std::vector<Compiled> kernels;
  std::string note, error;
  const NVRTCCompiler *nvrtc = NVRTCCompiler::get(error);
  if (!nvrtc) {
    note = "built without NVRTC, so without generic kernels: " + error;
    std::fprintf(stderr,
                 "ddtc-builtin-kernels: warning: NVRTC is not available; "
                 "libddtc is built without precompiled generic kernels "
                 "(every kernel is compiled at run time):\n%s\n",
                 error.c_str());
  } else {
    note = "compiled by NVRTC " + nvrtc->versionString() + " (" +
           nvrtc->libraryPath() + ")";
    // The generic kernels as PTX and cubins; the strided shapes as cubins
    // only (a kernel the runtime would compile is looked up for its exact
    // architecture). Compiled on every core, stored in the order listed.
    struct Job {
      const GenericSource *source;
      bool ptx;
      int arch;
    };
    const std::vector<GenericSource> generic = genericSources();
    const std::vector<GenericSource> strided =
        stridedSources(generic, /*listOnly=*/false);
    std::vector<Job> jobs;
    for (const GenericSource &g : generic) {
      jobs.push_back({&g, true, ptxArch});
      for (int a : cubinArchs)
        jobs.push_back({&g, false, a});
    }
    for (const GenericSource &g : strided)
      for (int a : cubinArchs)
        jobs.push_back({&g, false, a});
    std::vector<NVRTCResult> results(jobs.size());
    std::mutex nextMutex;
    size_t next = 0;
    auto work = [&] {
      for (;;) {
        size_t i;
        {
          std::lock_guard<std::mutex> lock(nextMutex);
          if (next == jobs.size())
            return;
          i = next++;
        }
        const Job &j = jobs[i];
        results[i] =
            nvrtc->compile(j.source->kernels.source,
                           kernelSymbolPrefix(j.source->shape) + ".cu",
                           j.ptx ? NVRTCOutput::PTX : NVRTCOutput::Cubin,
                           std::to_string(j.arch));
      }
    };
    std::vector<std::thread> pool;
    const unsigned threads = std::max(2u, std::thread::hardware_concurrency());
    for (unsigned t = 1; t < threads; ++t)
      pool.emplace_back(work);
    work();
    for (std::thread &t : pool)
      t.join();
    for (size_t i = 0; i < jobs.size(); ++i) {
      NVRTCResult &r = results[i];
      if (!r.ok) {
        std::fprintf(stderr, "ddtc-builtin-kernels: error: %s\n",
                     r.error.c_str());
        return 1;
      }
      if (jobs[i].ptx)
        r.binary.push_back('\0'); // cuModuleLoadData reads PTX up to a NUL
      kernels.push_back({jobs[i].source->shape, jobs[i].source->width,
                         jobs[i].ptx, jobs[i].arch, std::move(r.binary)});
    }
    note += "; " + std::to_string(strided.size()) + " strided shapes as cubins";
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << render(kernels, note);
  out.close();
  if (!out) {
    std::fprintf(stderr, "ddtc-builtin-kernels: error: cannot write %s\n",
                 output.c_str());
    return 1;
  }
  return 0;
}
