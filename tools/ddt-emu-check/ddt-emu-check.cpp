//===- ddt-emu-check.cpp - Differential test of the emitted kernels -------===//
//
// Plans and emits the CUDA kernels of many datatypes, compiles them all at
// once for the CPU (CPUEmulation.h), and checks every kernel against the
// reference pack and unpack, for whole and partial packed ranges, several
// grid sizes and aligned and misaligned buffers.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/KernelPlan.h"
#include "ddtc/Core/SpecParser.h"
#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/RecordPeriodKernel.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"
#include "ddtc/Testing/CheckerOptions.h"
#include "ddtc/Testing/KernelCheck.h"
#include "ddtc/Testing/RandomDatatype.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace ddtc;

namespace {

/// The text of CPUEmulation.h, embedded at build time.
const char *kEmulationHeader =
#include "EmulationHeader.inc"
    ;

const char *kHelp = R"(usage:
  ddt-emu-check --random N [--seed S] [--first I] [--max-depth D] [options]
  ddt-emu-check FILE.ddt [--count N] [-t NAME] [options]

Checks the CUDA kernels ddtc emits, run on the CPU. For each datatype it
plans the kernels (planKernel), emits them (emitCUDA) with a unique symbol
prefix, writes all of them into one C++ file with the CPU emulation header,
compiles that file once into a shared library with the system C++ compiler
and loads it. Then, at 1 instance and at a count > 1:
  - for the whole packed range and three random ranges [lo, hi), with an
    unlimited grid, a one-block grid and a cap of 1-5 blocks of 32-128
    threads (grid-stride loops), with buffers aligned for the wide accesses
    (the instances' first byte aligned, or for one random range their
    displacement 0, as in a buffer from cudaMalloc) and, for the last
    range, misaligned ones:
  - packs into a poisoned buffer and compares with the reference pack's
    bytes [lo, hi), guard bytes included;
  - checks that pack left its source alone;
  - unpacks into a poisoned origin buffer and compares the whole buffer
    (guard bytes included) with the reference unpack of the same range
    applied to an identically poisoned buffer (types whose runs overlap are
    fed their own packed image, so every write of a byte agrees), and checks
    that unpack left its packed input alone;
  - checks that no wide (vector) load read a byte of the source outside
    the bytes the call may read: for pack, the instances' bytes from the
    first they touch to the last; for unpack, packed bytes [lo, hi);
  - runs the whole range (unlimited grid) twice more with those bytes
    ending right before an inaccessible page and starting right after one,
    so that a load of any width past them crashes the case.
The kernels are compiled with -fsanitize=alignment: a wide access at an
address a GPU would fault on stops the run and fails the case, as does a
crash.
A mismatch prints the type as a spec expression, the plan, the failing call
and a command line that replays the case. The last line is
"P passed, F failed"; the exit status is 0 only when nothing failed.

options:
  --random N       check N random datatypes (cases FIRST .. FIRST+N-1)
  --seed S         seed of the random cases (default: drawn; printed first)
  --first I        index of the first random case (default 0)
  --max-depth D    constructor nesting of random types, 0-5 (default 5)
  --max-packed B   largest packed size of a random case (default: the
                   random generator's, 4 MiB)
  --count N        the count > 1 checked for spec bindings (default 3)
  -t NAME          check only the binding NAME of the spec file
  --max-span B     refuse types whose buffers exceed B bytes
                   (default 1073741824)
  --keep DIR       keep the generated C++ file and library in DIR
  --no-sanitize    compile without -fsanitize=alignment (by default the
                   kernels stop at the first wide access to an address a GPU
                   would fault on, which then counts as a failure)
  -O LEVEL         optimization level of the kernels' compile (default 1)
  -v               print every case
  --help           this text
  --version        the ddtc version

environment:
  DDTC_CXX         the C++ compiler (default: c++)
)";

struct Options : CheckerOptions {
  int64_t maxPacked = 0; ///< 0: the generator's default
  std::string keep;
  bool sanitize = true;
  std::string optLevel = "1";
};

using Seconds = std::chrono::duration<double>;
double since(std::chrono::steady_clock::time_point t) {
  return Seconds(std::chrono::steady_clock::now() - t).count();
}

/// One datatype to check, with what was emitted for it.
struct Case {
  std::string label;  ///< "case 12" or the binding name
  std::string replay; ///< command line that checks this case alone
  TypeRef type;
  int64_t count = 1;
  uint64_t rangeSeed = 0;
  KernelPlan plan;
  EmittedKernels kernels;
  std::vector<int64_t> units;
  std::string skip; ///< why it cannot be checked (reported as a failure)
};

/// The entry points of the compiled library.
using EmuFn = void (*)(void *origin, void *packed, const long long *params,
                       const long long *units, unsigned grid, unsigned block);
using WatchReadsFn = void (*)(const void *watchLo, const void *watchHi,
                              const void *readLo, const void *readHi);
using StrayReadFn = bool (*)(const void **at, unsigned long long *bytes);
struct Library {
  void *handle = nullptr;
  const EmuFn *table = nullptr;
  const long long *paramBytes = nullptr;
  WatchReadsFn watchReads = nullptr;
  StrayReadFn strayRead = nullptr;
};

/// What the sanitizer's death callback reports: the case being checked and
/// the totals so far.
struct Progress {
  const Case *current = nullptr;
  std::string call; ///< the call being run, "" between calls
  int64_t passed = 0, failed = 0;
};
Progress progress;

/// Reports the case being checked as failed, then the totals.
void reportDeath(const char *why) {
  if (progress.current) {
    const Case &c = *progress.current;
    std::printf("FAIL %s (counts 1 and %lld): %s\n    %s%s\n  replay: %s\n",
                c.label.c_str(), static_cast<long long>(c.count),
                printSpecExpr(*c.type).c_str(), progress.call.c_str(), why,
                c.replay.c_str());
    ++progress.failed;
  }
  std::printf("%lld passed, %lld failed\n",
              static_cast<long long>(progress.passed),
              static_cast<long long>(progress.failed));
  std::fflush(stdout);
}

void reportSanitizerDeath() {
  reportDeath("a kernel made a wide access at a misaligned address (see the "
              "report above;\n    --keep DIR keeps the kernels' source)");
}

/// A kernel that crashes the process still gets its case reported.
void onCrash(int sig) {
  reportDeath(sig == SIGSEGV ? "a kernel crashed (SIGSEGV: an access outside "
                               "its buffers, or a load past the bytes it may "
                               "read into the inaccessible page next to them)"
                             : "a kernel crashed (SIGBUS)");
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

/// The generated file's prelude after the emulation header: wrappers that
/// copy the parameter words into each kernel's struct and run the grid.
const char *kPrelude = R"(
template <class P, void (*K)(const unsigned char *, unsigned char *, P)>
void ddtc_emu_pack(void *o, void *k, const long long *ps, const long long *,
                   unsigned g, unsigned b) {
  P p;
  __builtin_memcpy(&p, ps, sizeof p);
  ddtcEmulateLaunch(K, g, b, (const unsigned char *)o, (unsigned char *)k, p);
}
template <class P, void (*K)(unsigned char *, const unsigned char *, P)>
void ddtc_emu_unpack(void *o, void *k, const long long *ps, const long long *,
                     unsigned g, unsigned b) {
  P p;
  __builtin_memcpy(&p, ps, sizeof p);
  ddtcEmulateLaunch(K, g, b, (unsigned char *)o, (const unsigned char *)k, p);
}
template <class P, void (*K)(const unsigned char *, unsigned char *, P,
                             const long long *)>
void ddtc_emu_pack_units(void *o, void *k, const long long *ps,
                         const long long *u, unsigned g, unsigned b) {
  P p;
  __builtin_memcpy(&p, ps, sizeof p);
  ddtcEmulateLaunch(K, g, b, (const unsigned char *)o, (unsigned char *)k, p,
                    u);
}
template <class P, void (*K)(unsigned char *, const unsigned char *, P,
                             const long long *)>
void ddtc_emu_unpack_units(void *o, void *k, const long long *ps,
                           const long long *u, unsigned g, unsigned b) {
  P p;
  __builtin_memcpy(&p, ps, sizeof p);
  ddtcEmulateLaunch(K, g, b, (unsigned char *)o, (const unsigned char *)k, p,
                    u);
}
typedef void (*ddtc_emu_fn)(void *, void *, const long long *,
                            const long long *, unsigned, unsigned);
extern "C" void ddtc_emu_watch_reads(const void *wlo, const void *whi,
                                     const void *rlo, const void *rhi) {
  ddtcEmuWatchReads(wlo, whi, rlo, rhi);
}
extern "C" bool ddtc_emu_stray_read(const void **at,
                                    unsigned long long *bytes) {
  return ddtcEmuStrayRead(*at, *bytes);
}
)";

std::string generateSource(const std::vector<Case> &cases) {
  std::string out = "// Generated by ddt-emu-check.\n"
                    "#define DDTC_EMU_WATCH_READS 1\n";
  out += kEmulationHeader;
  out += kPrelude;
  for (const Case &c : cases)
    if (c.skip.empty())
      out += "\n" + c.kernels.text();
  out += "\nextern \"C\" const ddtc_emu_fn ddtc_emu_table[] = {\n";
  for (const Case &c : cases) {
    if (!c.skip.empty())
      continue;
    const EmittedKernels &k = c.kernels;
    const char *suffix = k.takesUnits ? "_units" : "";
    out += "  ddtc_emu_pack" + std::string(suffix) + "<" + k.paramsName + ", " +
           k.packName + ">,\n  ddtc_emu_unpack" + suffix + "<" + k.paramsName +
           ", " + k.unpackName + ">,\n";
  }
  out += "  0};\nextern \"C\" const long long ddtc_emu_param_bytes[] = {\n";
  for (const Case &c : cases)
    if (c.skip.empty())
      out += "  sizeof(" + c.kernels.paramsName + "),\n";
  out += "  0};\n";
  return out;
}

/// Runs a command line through the shell, capturing its output.
int runCommand(const std::string &cmd, std::string &output) {
  output.clear();
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p)
    return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    output.append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string shellQuote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Writes, compiles and loads the kernels of `cases`.
bool buildLibrary(const Options &o, const std::vector<Case> &cases,
                  Library &lib, double &writeSeconds, double &compileSeconds) {
  auto t0 = std::chrono::steady_clock::now();
  std::string dir = o.keep;
  if (dir.empty()) {
    const char *tmp = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/ddt-emu-check.XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      std::fprintf(stderr, "ddt-emu-check: cannot create a folder in %s: %s\n",
                   tmpl.c_str(), std::strerror(errno));
      return false;
    }
    dir = buf.data();
  } else {
    std::string out;
    runCommand("mkdir -p " + shellQuote(dir), out);
  }
  std::string src = dir + "/kernels.cpp", so = dir + "/kernels.so";
  {
    std::ofstream f(src, std::ios::binary);
    f << generateSource(cases);
    if (!f) {
      std::fprintf(stderr, "ddt-emu-check: cannot write %s\n", src.c_str());
      return false;
    }
  }
  writeSeconds = since(t0);
  t0 = std::chrono::steady_clock::now();
  const char *cxx = std::getenv("DDTC_CXX");
  std::string cmd = std::string(cxx && *cxx ? cxx : "c++") + " -std=c++17 -O" +
                    o.optLevel + " -shared -fPIC -fno-strict-aliasing -w";
  const std::string base = cmd;
  if (o.sanitize)
    cmd += " -fsanitize=alignment -fno-sanitize-recover=alignment";
  std::string output;
  cmd += " -o " + shellQuote(so) + " " + shellQuote(src);
  int rc = runCommand(cmd, output);
  if (rc != 0 && o.sanitize) {
    // A compiler without the sanitizer's run-time library still checks the
    // bytes; say that alignment goes unchecked.
    std::string plain = base + " -o " + shellQuote(so) + " " + shellQuote(src);
    std::string second;
    if (runCommand(plain, second) == 0) {
      std::fprintf(stderr,
                   "ddt-emu-check: note: the kernels compile only without "
                   "-fsanitize=alignment, so misaligned wide accesses go "
                   "unnoticed:\n%s\n",
                   output.substr(0, 2000).c_str());
      rc = 0;
      cmd = plain;
    }
  }
  compileSeconds = since(t0);
  if (rc != 0) {
    std::fprintf(stderr,
                 "ddt-emu-check: compiling the kernels failed (exit %d):\n%s\n"
                 "%s\n",
                 rc, cmd.c_str(), output.substr(0, 20000).c_str());
    if (o.keep.empty()) {
      std::fprintf(stderr, "(run with --keep DIR to keep the source)\n");
      std::remove(src.c_str());
      std::remove(so.c_str());
      rmdir(dir.c_str());
    }
    return false;
  }
  lib.handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    std::fprintf(stderr, "ddt-emu-check: cannot load %s: %s\n", so.c_str(),
                 dlerror());
    return false;
  }
  lib.table = static_cast<const EmuFn *>(dlsym(lib.handle, "ddtc_emu_table"));
  lib.paramBytes =
      static_cast<const long long *>(dlsym(lib.handle, "ddtc_emu_param_bytes"));
  lib.watchReads = reinterpret_cast<WatchReadsFn>(
      dlsym(lib.handle, "ddtc_emu_watch_reads"));
  lib.strayRead =
      reinterpret_cast<StrayReadFn>(dlsym(lib.handle, "ddtc_emu_stray_read"));
  if (!lib.table || !lib.paramBytes || !lib.watchReads || !lib.strayRead) {
    std::fprintf(stderr, "ddt-emu-check: %s lacks its entry table\n",
                 so.c_str());
    return false;
  }
  using SetCallback = void (*)(void (*)());
  if (auto set = reinterpret_cast<SetCallback>(
          dlsym(lib.handle, "__sanitizer_set_death_callback")))
    set(reportSanitizerDeath);
  if (o.keep.empty()) {
    std::remove(src.c_str());
    std::remove(so.c_str()); // stays mapped while loaded
    rmdir(dir.c_str());
  }
  return true;
}

std::string describePlan(const KernelPlan &plan) {
  std::ostringstream os;
  os << kernelShapeKey(plan) << ", width " << plan.width << ", "
     << (plan.family == KernelFamily::Units
             ? std::to_string(plan.units.size()) + " unit(s)" +
                   (plan.unpackUnits.empty()
                        ? std::string()
                        : std::string(", unpacked in destination order"))
             : std::string(plan.needsBytePath ? "byte path" : "no byte path"));
  return os.str();
}

class Checker {
public:
  Checker(const Library &lib, int64_t maxSpan) : lib_(lib), maxSpan_(maxSpan) {}

  /// Checks one case whose kernels are entry `index` of the library.
  std::string check(const Case &c, size_t index);

private:
  std::string checkCount(const Case &c, size_t index, int64_t count,
                         std::mt19937_64 &rng);
  const Library &lib_;
  int64_t maxSpan_;
};

std::string Checker::check(const Case &c, size_t index) {
  if (lib_.paramBytes[index] !=
      static_cast<long long>(8 *
                             computeLaunch(c.plan, 1, 0, 0, 0).params.size()))
    return "the parameter struct has " +
           std::to_string(lib_.paramBytes[index]) +
           " bytes, computeLaunch fills " +
           std::to_string(8 * computeLaunch(c.plan, 1, 0, 0, 0).params.size());
  std::mt19937_64 rng(c.rangeSeed);
  std::string r = checkCount(c, index, 1, rng);
  if (r.empty() && c.count != 1)
    r = checkCount(c, index, c.count, rng);
  return r;
}

std::string Checker::checkCount(const Case &c, size_t index, int64_t count,
                                std::mt19937_64 &rng) {
  std::string prefix = "count " + std::to_string(count) + ": ";
  KernelCheckOptions options;
  options.maxSpan = maxSpan_;
  KernelChecker checker(*c.type, count, options);
  if (!checker.error().empty())
    return prefix + checker.error() + " (--max-span)";
  const int64_t total = checker.packedBytes();

  struct Range {
    int64_t lo, hi;
  };
  std::vector<Range> ranges = {{0, total}};
  // Whole instances but not all of them: the unpack's table in destination
  // order serves these too.
  if (!c.plan.unpackUnits.empty() && count >= 2)
    ranges.push_back({total / count, total});
  for (int i = 0; i < 3; ++i) {
    int64_t a = total ? static_cast<int64_t>(rng() % (total + 1)) : 0;
    int64_t b = total ? static_cast<int64_t>(rng() % (total + 1)) : 0;
    ranges.push_back({std::min(a, b), std::max(a, b)});
  }
  const int64_t randomCap = 1 + static_cast<int64_t>(rng() % 5);
  // The capped launches also use another block size: the kernels must be
  // right for any multiple of 32 threads.
  KernelPlan otherBlock = c.plan;
  otherBlock.threadsPerBlock = 32 * (1 + static_cast<int>(rng() % 4));
  const long long *units =
      c.units.empty() ? nullptr
                      : reinterpret_cast<const long long *>(c.units.data());

  for (size_t ri = 0; ri < ranges.size(); ++ri) {
    const int64_t lo = ranges[ri].lo, hi = ranges[ri].hi;
    // The last range runs with misaligned buffers; the others with the
    // instances' first touched byte (the first two ranges) or displacement 0
    // (the third, as in a buffer from cudaMalloc) 64-byte aligned, and
    // packed byte 0 aligned likewise, so that packed[0] (byte lo) sits at
    // lo's alignment.
    const bool misaligned = ri + 1 == ranges.size();
    const bool alignOrigin = ri == 2;
    const int64_t originMis =
        misaligned ? 1 + static_cast<int64_t>(rng() % 15) : 0;
    const int64_t packedMis =
        misaligned ? static_cast<int64_t>(rng() % 16) : ((lo % 64) + 64) % 64;
    for (int64_t cap : {int64_t(0), int64_t(1), randomCap}) {
      // Each direction has its launch (their grids may differ).
      const KernelPlan &launched = cap > 1 ? otherBlock : c.plan;
      const LaunchConfig cfgs[2] = {
          computeLaunch(launched, count, lo, hi, cap, true),
          computeLaunch(launched, count, lo, hi, cap, false)};
      const LaunchConfig &cfg = cfgs[0];
      std::ostringstream call;
      call << "range [" << lo << ", " << hi << ") of " << total << ", grid "
           << cfg.grid << " x " << cfg.block
           << (cfgs[1].grid != cfg.grid
                   ? " (unpack " + std::to_string(cfgs[1].grid) + ")"
                   : std::string())
           << (cap ? " (cap " + std::to_string(cap) + ")" : std::string())
           << (misaligned
                   ? ", origin misaligned by " + std::to_string(originMis) +
                         ", packed by " + std::to_string(packedMis)
               : alignOrigin ? std::string(", displacement 0 aligned")
                             : std::string())
           << ": ";
      for (const LaunchConfig &d : cfgs) {
        if (!d.error.empty())
          return prefix + call.str() + "computeLaunch: " + d.error;
        if (hi > lo && d.grid == 0)
          return prefix + call.str() + "computeLaunch gives an empty grid";
        if (d.params != cfg.params)
          return prefix + call.str() +
                 "computeLaunch gives the pack and the unpack other parameters";
      }
      auto runKernel = [&](const KernelCall &k, KernelBuffers &b) {
        lib_.watchReads(b.sourceBuffer, b.sourceBuffer + b.sourceBytes,
                        b.readBegin, b.readEnd);
        const LaunchConfig &cfg = cfgs[k.pack ? 0 : 1];
        if (cfg.grid > 0)
          lib_.table[2 * index + (k.pack ? 0 : 1)](
              b.origin(), b.packed(),
              reinterpret_cast<const long long *>(cfg.params.data()), units,
              static_cast<unsigned>(cfg.grid),
              static_cast<unsigned>(cfg.block));
        const void *at = nullptr;
        unsigned long long bytes = 0;
        if (lib_.strayRead(&at, &bytes))
          return b.describeStrayRead(k, at, static_cast<int64_t>(bytes));
        return std::string();
      };
      // The whole range also runs with the bytes the kernel may read
      // against an inaccessible page, at their end and at their start.
      std::vector<SourceEdge> edges = {SourceEdge::Shifted};
      if (ri == 0 && cap == 0)
        edges = {SourceEdge::Shifted, SourceEdge::EndsAtPage,
                 SourceEdge::StartsAtPage};
      for (SourceEdge edge : edges) {
        const char *where = edge == SourceEdge::EndsAtPage
                                ? "source ending at a page: "
                            : edge == SourceEdge::StartsAtPage
                                ? "source starting at a page: "
                                : "";
        for (bool pack : {true, false}) {
          KernelCall k;
          k.pack = pack;
          k.lo = lo;
          k.hi = hi;
          k.originShift = originMis;
          k.alignOrigin = alignOrigin;
          k.packedShift = packedMis;
          k.sourceEdge = edge;
          progress.call = prefix + call.str() + where;
          std::string r = checker.check(k, runKernel);
          progress.call.clear();
          if (!r.empty())
            return prefix + call.str() + where + r;
        }
      }
    }
  }
  return "";
}

/// Plans and emits the kernels of a case.
void prepare(Case &c, size_t index) {
  std::string error;
  if (!planKernel(*c.type, c.plan, error)) {
    c.skip = "cannot be planned: " + error;
    return;
  }
  // As the runtime plans: the unpack's table in destination order where it
  // pays (the kernels take it for whole instances).
  orderUnpackUnits(c.plan);
  c.kernels = emitCUDA(c.plan, "k" + std::to_string(index));
  if (c.plan.family == KernelFamily::Units)
    c.units = encodeUnitTable(c.plan);
}

bool parseArgs(int argc, char **argv, Options &o, std::string &error) {
  auto value = [&](int &i, const char *flag) -> const char * {
    if (i + 1 >= argc) {
      error = std::string(flag) + " needs a value";
      return nullptr;
    }
    return argv[++i];
  };
  auto own = [&](int &i) {
    std::string a = argv[i];
    int64_t n = 0;
    const char *v = nullptr;
    if (a == "--no-sanitize") {
      o.sanitize = false;
    } else if (a == "--max-packed") {
      if (!(v = value(i, "--max-packed")) || !parseInt64(v, n) || n < 1) {
        error = "--max-packed needs a positive byte count";
        return OptionResult::Error;
      }
      o.maxPacked = n;
    } else if (a == "--keep") {
      if (!(v = value(i, "--keep")))
        return OptionResult::Error;
      o.keep = v;
    } else if (a == "-O" || (a.size() == 3 && a.compare(0, 2, "-O") == 0)) {
      if (a.size() == 3)
        o.optLevel = a.substr(2);
      else if ((v = value(i, "-O")))
        o.optLevel = v;
      else
        return OptionResult::Error;
      if (o.optLevel.size() != 1 || !std::strchr("0123s", o.optLevel[0])) {
        error = "-O needs one of 0, 1, 2, 3, s";
        return OptionResult::Error;
      }
    } else {
      return OptionResult::NotTaken;
    }
    return OptionResult::Taken;
  };
  return parseCheckerArgs(argc, argv, o, kHelp,
                          "ddt-emu-check (ddtc) " DDTC_VERSION "\n", own,
                          error);
}

/// Emits, compiles and checks `cases`; prints failures and the totals.
int checkCases(const Options &o, std::vector<Case> &cases) {
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < cases.size(); ++i)
    if (cases[i].skip.empty())
      prepare(cases[i], i);
  double emitSeconds = since(t0), writeSeconds = 0, compileSeconds = 0;
  Library lib;
  if (!buildLibrary(o, cases, lib, writeSeconds, compileSeconds))
    return 2;
  t0 = std::chrono::steady_clock::now();
  Checker checker(lib, o.maxSpan);
  std::signal(SIGSEGV, onCrash);
  std::signal(SIGBUS, onCrash);
  int64_t &passed = progress.passed, &failed = progress.failed;
  size_t entry = 0;
  for (Case &c : cases) {
    progress.current = &c;
    std::fflush(stdout);
    std::string result = c.skip;
    if (result.empty())
      result = checker.check(c, entry++);
    progress.current = nullptr;
    if (result.empty()) {
      ++passed;
      if (o.verbose)
        std::printf("%s: ok (count %lld; %s): %s\n", c.label.c_str(),
                    static_cast<long long>(c.count),
                    describePlan(c.plan).c_str(),
                    printSpecExpr(*c.type).c_str());
      continue;
    }
    ++failed;
    std::printf("FAIL %s (counts 1 and %lld): %s\n    plan: %s\n    %s\n"
                "  replay: %s\n",
                c.label.c_str(), static_cast<long long>(c.count),
                printSpecExpr(*c.type).c_str(), describePlan(c.plan).c_str(),
                result.c_str(), c.replay.c_str());
    std::fflush(stdout);
  }
  double runSeconds = since(t0);
  // Which kernel designs the cases exercised.
  int64_t tile = 0, strided = 0, window = 0, runAligned = 0, batched = 0,
          fills = 0, records = 0, units = 0, recordWindow = 0,
          recordAligned = 0, unitChunks = 0, recordPeriod = 0, periodRows = 0,
          unitsByOrigin = 0;
  for (const Case &c : cases) {
    if (!c.skip.empty())
      continue;
    if (c.plan.family == KernelFamily::Units) {
      ++units;
      unitChunks += unitsByChunks(c.plan);
      unitsByOrigin += !c.plan.unpackUnits.empty();
    } else if (c.plan.tileDim >= 0) {
      ++tile;
    } else {
      ++strided;
      if (stridedVariant(c.plan, true) == StridedVariant::Window) {
        ++window;
        recordWindow += hasRecords(c.plan.layout);
        recordPeriod += isRecordPeriodPlan(c.plan);
        periodRows += isRecordPeriodPlan(c.plan) && periodRestartsRows(c.plan);
      }
      if (stridedVariant(c.plan, false) == StridedVariant::RunAligned &&
          !isRecordPeriodPlan(c.plan)) {
        ++runAligned;
        recordAligned += hasRecords(c.plan.layout);
      }
      if (stridedBatch(c.plan, true) > 1 &&
          stridedVariant(c.plan, true) == StridedVariant::Gather)
        ++batched;
      if (unpackFillsSectors(c.plan))
        ++fills;
      if (hasRecords(c.plan.layout))
        ++records;
    }
  }
  std::printf(
      "kernels: %lld strided (%lld window pack (%lld of records, "
      "%lld packed and unpacked by their period, %lld of them in rows that "
      "restart), "
      "%lld run-aligned unpack (%lld of records), %lld batched "
      "gather, %lld unpack filling sectors, %lld with records), %lld "
      "units (%lld a chunk a thread, %lld unpacked in destination order), "
      "%lld tile\n",
      static_cast<long long>(strided), static_cast<long long>(window),
      static_cast<long long>(recordWindow),
      static_cast<long long>(recordPeriod), static_cast<long long>(periodRows),
      static_cast<long long>(runAligned), static_cast<long long>(recordAligned),
      static_cast<long long>(batched), static_cast<long long>(fills),
      static_cast<long long>(records), static_cast<long long>(units),
      static_cast<long long>(unitChunks),
      static_cast<long long>(unitsByOrigin), static_cast<long long>(tile));
  std::printf("time: emit %.2f s, write %.2f s, compile %.2f s, run %.2f s\n",
              emitSeconds, writeSeconds, compileSeconds, runSeconds);
  std::printf("%lld passed, %lld failed\n", static_cast<long long>(passed),
              static_cast<long long>(failed));
  return failed == 0 ? 0 : 1;
}

int runRandom(Options &o) {
  chooseRandomSeed(o);
  RandomDatatypeOptions gen;
  gen.maxDepth = o.maxDepth;
  if (o.maxPacked > 0) {
    gen.maxPackedSize = o.maxPacked;
    gen.maxSpan = std::max(gen.maxSpan, o.maxPacked);
  }
  std::vector<Case> cases;
  for (int64_t n = 0; n < o.numRandom; ++n) {
    uint64_t index = o.first + static_cast<uint64_t>(n);
    uint64_t caseSeed = randomCaseSeed(o.seed, index);
    std::mt19937_64 rng(caseSeed);
    RandomDatatypeCase rc = generateRandomDatatype(rng, gen);
    Case c;
    c.label = "case " + std::to_string(index);
    c.type = rc.type;
    c.count = rc.count;
    c.rangeSeed = caseSeed ^ 0x5DEECE66DULL;
    char replay[256];
    std::snprintf(replay, sizeof replay,
                  "ddt-emu-check --random 1 --seed %llu --first %llu "
                  "--max-depth %u",
                  static_cast<unsigned long long>(o.seed),
                  static_cast<unsigned long long>(index), o.maxDepth);
    c.replay = replay;
    if (o.maxPacked > 0)
      c.replay += " --max-packed " + std::to_string(o.maxPacked);
    cases.push_back(std::move(c));
  }
  return checkCases(o, cases);
}

int runFile(Options &o) {
  SpecFile spec;
  std::vector<const SpecBinding *> bindings;
  if (!loadCheckedBindings(o, "ddt-emu-check", spec, bindings))
    return 2;
  std::vector<Case> cases;
  for (const SpecBinding *binding : bindings) {
    const SpecBinding &b = *binding;
    Case c;
    c.label = b.name + " (" + o.file + ":" + std::to_string(b.line) + ")";
    c.type = b.type;
    c.count = o.fileCount;
    c.rangeSeed = o.seed ^ std::hash<std::string>{}(b.name);
    c.replay = "ddt-emu-check " + o.file + " -t " + b.name + " --count " +
               std::to_string(o.fileCount) +
               (o.seedGiven ? " --seed " + std::to_string(o.seed) : "");
    cases.push_back(std::move(c));
  }
  return checkCases(o, cases);
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  std::string error;
  if (!parseArgs(argc, argv, opts, error)) {
    std::fprintf(stderr, "ddt-emu-check: %s (see --help)\n", error.c_str());
    return 2;
  }
  return opts.random ? runRandom(opts) : runFile(opts);
}
