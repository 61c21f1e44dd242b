//===- ddtc-fuzz.cpp - Mutation fuzzer of specs, IR and the C API ---------===//
//
// Mutates seed inputs (spec files, ddt IR, C API calls) and runs each
// mutant in a sandboxed child process; reports every crash, abort, hang,
// exhausted memory or wrong result with the input saved. See docs/Fuzzing.md.
//===----------------------------------------------------------------------===//

#include "Mutator.h"
#include "Sandbox.h"
#include "Targets.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ddtc::fuzz;
namespace fs = std::filesystem;

namespace {

const char *kHelp = R"(usage:
  ddtc-fuzz --corpus DIR [--corpus DIR ...] [options]
  ddtc-fuzz --replay FILE [FILE ...] [options]

Mutates the seed inputs found in the corpus folders (recursively: *.ddt are
specs, also used as C API inputs; *.mlir are ddt IR, split at "// -----")
and runs each mutant in a child process with a time and a memory limit:
  spec  parse, print back and parse again, plan, emit CUDA, compute a launch,
        compare the planned runs with the reference and pack and unpack with
        the generic kernels on the CPU (small types), build the IR and run
        the planning passes;
  ir    parse and verify, read each definition back into a tree and plan it,
        run the planning passes (together, then each alone), print;
  capi  the calls of ddtc.h with a random count, byte range and CTA cap
        (no GPU or compiler is used: the calls stop after their checks).
A child that crashes, aborts, runs out of memory, passes the time limit or
finds a wrong result is a finding: it is printed, and the input is saved in
the output folder once per kind of failure (replay it with --replay).
The exit status is 1 when anything was found, 0 otherwise, 2 on bad usage.

options:
  --corpus DIR        a folder of seeds (repeatable)
  --seed N            seed of the mutations (default 1)
  --seconds S         stop after S seconds (default 60)
  --iterations N      stop after N mutants (default: no limit)
  --kinds LIST        comma-separated kinds to fuzz: spec,ir,capi (default all)
  --out DIR           where findings are saved (default ddtc-fuzz-findings)
  --timeout-ms MS     time limit of one input (default 5000)
  --memory-mb MB      memory limit of one input (default 2048)
  --skip-self-references
                      do not run IR mutants that use a value on or before the
                      line that defines it (the dialect verifier recurses on
                      an op that is its own operand)
  --replay FILE...    run these inputs once each (kind from the extension:
                      .ddt, .mlir, .capi) and report
  --in-process        with --replay: run in this process, without a sandbox
                      (for a debugger)
  -v                  print every finding's stderr in full
  --help              this text
)";

struct Seed {
  InputKind kind;
  std::string text;
};

struct Options {
  std::vector<std::string> corpus, replay;
  uint64_t seed = 1;
  double seconds = 60;
  int64_t iterations = -1;
  std::vector<InputKind> kinds = {InputKind::Spec, InputKind::IR,
                                  InputKind::CAPI};
  std::string out = "ddtc-fuzz-findings";
  SandboxLimits limits;
  bool skipSelfReferences = false;
  bool verbose = false;
  bool inProcess = false;
};

bool parseKinds(const std::string &list, std::vector<InputKind> &kinds) {
  kinds.clear();
  std::stringstream in(list);
  std::string k;
  while (std::getline(in, k, ',')) {
    if (k == "spec")
      kinds.push_back(InputKind::Spec);
    else if (k == "ir")
      kinds.push_back(InputKind::IR);
    else if (k == "capi")
      kinds.push_back(InputKind::CAPI);
    else
      return false;
  }
  return !kinds.empty();
}

bool parseArgs(int argc, char **argv, Options &o, std::string &error) {
  auto number = [&](int &i, const char *flag, double &v) {
    if (i + 1 >= argc) {
      error = std::string(flag) + " needs a value";
      return false;
    }
    char *end = nullptr;
    v = std::strtod(argv[++i], &end);
    if (*argv[i] == '\0' || *end != '\0' || v < 0) {
      error = std::string(flag) + " needs a non-negative number, not '" +
              argv[i] + "'";
      return false;
    }
    return true;
  };
  bool replaying = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    double v = 0;
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (a == "--corpus" || a == "--out" || a == "--kinds") {
      if (i + 1 >= argc) {
        error = a + " needs a value";
        return false;
      }
      std::string value = argv[++i];
      if (a == "--corpus")
        o.corpus.push_back(value);
      else if (a == "--out")
        o.out = value;
      else if (!parseKinds(value, o.kinds)) {
        error = "--kinds takes spec, ir and capi, comma-separated, not '" +
                value + "'";
        return false;
      }
    } else if (a == "--seed") {
      if (!number(i, "--seed", v))
        return false;
      o.seed = static_cast<uint64_t>(v);
    } else if (a == "--seconds") {
      if (!number(i, "--seconds", v))
        return false;
      o.seconds = v;
    } else if (a == "--iterations") {
      if (!number(i, "--iterations", v))
        return false;
      o.iterations = static_cast<int64_t>(v);
    } else if (a == "--timeout-ms") {
      if (!number(i, "--timeout-ms", v) || v < 1)
        return error.empty()
                   ? (error = "--timeout-ms must be at least 1", false)
                   : false;
      o.limits.timeoutMs = static_cast<int64_t>(v);
    } else if (a == "--memory-mb") {
      if (!number(i, "--memory-mb", v) || v < 64)
        return error.empty()
                   ? (error = "--memory-mb must be at least 64", false)
                   : false;
      o.limits.memoryMb = static_cast<int64_t>(v);
    } else if (a == "--skip-self-references") {
      o.skipSelfReferences = true;
    } else if (a == "--in-process") {
      o.inProcess = true;
    } else if (a == "-v") {
      o.verbose = true;
    } else if (a == "--replay") {
      replaying = true;
    } else if (replaying && a[0] != '-') {
      o.replay.push_back(a);
    } else {
      error = "unknown option " + a;
      return false;
    }
  }
  if (replaying && o.replay.empty()) {
    error = "--replay needs at least one file";
    return false;
  }
  if (!replaying && o.corpus.empty()) {
    error = "give at least one --corpus folder (or --replay files)";
    return false;
  }
  return true;
}

std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The seeds of the corpus folders, each IR file split at "// -----".
std::vector<Seed> loadSeeds(const Options &o, std::string &error) {
  std::vector<Seed> seeds;
  for (const std::string &dir : o.corpus) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      error = "--corpus " + dir + ": not a folder";
      return {};
    }
    std::vector<fs::path> files;
    for (const auto &e : fs::recursive_directory_iterator(dir, ec))
      if (e.is_regular_file(ec))
        files.push_back(e.path());
    std::sort(files.begin(), files.end()); // the same order on every run
    for (const fs::path &p : files) {
      std::string text = readFile(p);
      if (p.extension() == ".ddt") {
        seeds.push_back({InputKind::Spec, text});
      } else if (p.extension() == ".mlir") {
        const std::string split = "// -----";
        size_t at = 0;
        while (at <= text.size()) {
          size_t next = text.find(split, at);
          std::string part = text.substr(
              at, next == std::string::npos ? std::string::npos : next - at);
          seeds.push_back({InputKind::IR, part});
          if (next == std::string::npos)
            break;
          at = next + split.size();
        }
      }
    }
  }
  if (seeds.empty())
    error = "the corpus folders hold no .ddt or .mlir file";
  return seeds;
}

InputKind kindOfFile(const std::string &path) {
  std::string ext = fs::path(path).extension().string();
  if (ext == ".mlir")
    return InputKind::IR;
  if (ext == ".capi")
    return InputKind::CAPI;
  return InputKind::Spec;
}

/// A finding's kind of failure: its outcome and input kind, whether it is
/// IR with a self-reference, and the last line of its stderr with the
/// digits dropped (so one bug saves one file).
std::string signatureOf(InputKind kind, const std::string &text,
                        const SandboxResult &r) {
  std::string tail = r.stderrTail;
  while (!tail.empty() && tail.back() == '\n')
    tail.pop_back();
  size_t nl = tail.rfind('\n');
  std::string last = nl == std::string::npos ? tail : tail.substr(nl + 1);
  std::string sig =
      std::string(outcomeName(r.outcome)) + ":" + kindName(kind) + ":" +
      std::to_string(r.code) + ":" +
      (kind == InputKind::IR && hasSelfReference(text) ? "self-reference:"
                                                       : "");
  for (char c : last)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      sig += c;
  return sig;
}

std::string describe(const SandboxResult &r) {
  std::string d = outcomeName(r.outcome);
  if (r.outcome == Outcome::Crash || r.outcome == Outcome::Abort)
    d += std::string(" (") + strsignal(r.code) + ")";
  else if (r.outcome == Outcome::Exit)
    d += " (status " + std::to_string(r.code) + ")";
  else if (r.outcome == Outcome::Hang)
    d += " (killed after " + std::to_string(r.seconds) + " s)";
  return d;
}

/// The last line of `s`, for a one-line report.
std::string lastLine(std::string s) {
  while (!s.empty() && s.back() == '\n')
    s.pop_back();
  size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

/// Runs one input in the sandbox. An input its parser rejected is fine
/// (`accepted` false).
SandboxResult runOne(InputKind kind, const std::string &text,
                     const SandboxLimits &limits, bool &accepted) {
  SandboxResult r =
      runSandboxed([&] { _exit(runInput(kind, text) ? 0 : 4); }, limits);
  accepted = r.outcome == Outcome::Ok;
  if (r.outcome == Outcome::Exit && r.code == 4)
    r.outcome = Outcome::Ok;
  return r;
}

int replay(const Options &o) {
  int found = 0;
  for (const std::string &path : o.replay) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      std::fprintf(stderr, "ddtc-fuzz: %s: no such file\n", path.c_str());
      return 2;
    }
    std::string text = readFile(path);
    InputKind kind = kindOfFile(path);
    if (o.inProcess) {
      bool accepted = runInput(kind, text);
      std::printf("%s: %s ok (%s)\n", path.c_str(), kindName(kind),
                  accepted ? "accepted" : "rejected by its parser");
      continue;
    }
    bool accepted = false;
    SandboxResult r = runOne(kind, text, o.limits, accepted);
    bool bad = r.outcome != Outcome::Ok;
    found += bad;
    std::printf("%s: %s %s%s%s\n", path.c_str(), kindName(kind),
                bad        ? describe(r).c_str()
                : accepted ? "ok"
                           : "ok (rejected by its parser)",
                bad ? ": " : "", bad ? lastLine(r.stderrTail).c_str() : "");
  }
  std::printf("%zu input(s) replayed, %d failed\n", o.replay.size(), found);
  return found ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  std::string error;
  if (!parseArgs(argc, argv, o, error)) {
    std::fprintf(stderr, "ddtc-fuzz: %s (see --help)\n", error.c_str());
    return 2;
  }
  if (!o.replay.empty())
    return replay(o);
  std::vector<Seed> seeds = loadSeeds(o, error);
  if (seeds.empty()) {
    std::fprintf(stderr, "ddtc-fuzz: %s\n", error.c_str());
    return 2;
  }
  // Seeds by kind (C API inputs start from specs); mutants the parsers
  // accepted join their kind's pool, so edits pile up past the parser.
  std::map<InputKind, std::vector<std::string>> pool;
  for (const Seed &s : seeds) {
    pool[s.kind].push_back(s.text);
    if (s.kind == InputKind::Spec)
      pool[InputKind::CAPI].push_back(s.text);
  }
  std::vector<InputKind> kinds;
  for (InputKind k : o.kinds)
    if (!pool[k].empty())
      kinds.push_back(k);
  if (kinds.empty()) {
    std::fprintf(stderr, "ddtc-fuzz: no seed of the kinds asked for\n");
    return 2;
  }
  constexpr size_t kMaxPool = 4000;
  std::printf("ddtc-fuzz: seed %llu, %zu seed input(s), limits %lld ms and "
              "%lld MiB per input\n",
              static_cast<unsigned long long>(o.seed), seeds.size(),
              static_cast<long long>(o.limits.timeoutMs),
              static_cast<long long>(o.limits.memoryMb));
  std::fflush(stdout);

  Mutator m(o.seed);
  std::map<std::string, int> seen; // signature -> times found
  std::map<InputKind, int64_t> runs, acceptedBy;
  int64_t skipped = 0, findings = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
        .count();
  };
  for (int64_t it = 0; o.iterations < 0 || it < o.iterations; ++it) {
    if (elapsed() >= o.seconds)
      break;
    InputKind kind = kinds[m.below(kinds.size())];
    std::vector<std::string> &texts = pool[kind];
    std::vector<const std::string *> donors;
    for (int d = 0; d < 3; ++d)
      donors.push_back(&texts[m.below(texts.size())]);
    std::string base = texts[m.below(texts.size())];
    if (kind == InputKind::CAPI && base.rfind("# ddtc-fuzz capi ", 0) == 0)
      base = base.substr(base.find('\n') + 1);
    std::string text = m.mutate(base, donors);
    if (kind == InputKind::CAPI) {
      int64_t count = m.interestingInt(3);
      int64_t hi = m.interestingInt(64), lo = m.interestingInt(hi);
      text = capiHeader(count, lo, hi, m.interestingInt(2)) + text;
    }
    if (kind == InputKind::IR && o.skipSelfReferences &&
        hasSelfReference(text)) {
      ++skipped;
      continue;
    }
    ++runs[kind];
    bool accepted = false;
    SandboxResult r = runOne(kind, text, o.limits, accepted);
    if (accepted) {
      ++acceptedBy[kind];
      if (texts.size() < kMaxPool)
        texts.push_back(text);
      else
        texts[m.below(texts.size())] = text;
    }
    if (r.outcome == Outcome::Ok)
      continue;
    ++findings;
    std::string sig = signatureOf(kind, text, r);
    if (seen[sig]++ > 0)
      continue;
    std::error_code ec;
    fs::create_directories(o.out, ec);
    std::string file = o.out + "/" + outcomeName(r.outcome) + "-" +
                       kindName(kind) + "-" + std::to_string(seen.size()) +
                       "." + kindExtension(kind);
    std::ofstream(file, std::ios::binary) << text;
    std::printf("FOUND %s in %s input after %.1f s: %s\n  saved: %s\n  "
                "replay: ddtc-fuzz --replay %s\n",
                describe(r).c_str(), kindName(kind), elapsed(),
                lastLine(r.stderrTail).c_str(), file.c_str(), file.c_str());
    if (o.verbose)
      std::printf("%s\n", r.stderrTail.c_str());
    std::fflush(stdout);
  }
  for (InputKind k : kinds)
    std::printf("%s: %lld input(s) run, %lld accepted by the parser\n",
                kindName(k), static_cast<long long>(runs[k]),
                static_cast<long long>(acceptedBy[k]));
  if (skipped)
    std::printf("ir: %lld self-referencing mutant(s) skipped "
                "(--skip-self-references)\n",
                static_cast<long long>(skipped));
  std::printf("%lld finding(s), %zu distinct, in %.1f s\n",
              static_cast<long long>(findings), seen.size(), elapsed());
  return findings ? 1 : 0;
}
