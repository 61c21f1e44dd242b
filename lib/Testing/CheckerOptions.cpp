//===- CheckerOptions.cpp - Options shared by the differential checkers ---===//

#include "ddtc/Testing/CheckerOptions.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace ddtc {

bool parseInt64(const char *text, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0')
    return false;
  out = v;
  return true;
}

OptionResult parseCheckerOption(int argc, char **argv, int &i,
                                CheckerOptions &o, std::string &error) {
  std::string a = argv[i];
  auto value = [&](const char *flag) -> const char * {
    if (i + 1 >= argc) {
      error = std::string(flag) + " needs a value";
      return nullptr;
    }
    return argv[++i];
  };
  // Reads the value of `flag` as an integer in [min, max].
  auto integer = [&](const char *flag, int64_t min, int64_t max,
                     const char *rule, int64_t &out) {
    const char *v = value(flag);
    if (!v)
      return false;
    if (!parseInt64(v, out) || out < min || out > max) {
      error = std::string(flag) + " needs " + rule;
      return false;
    }
    return true;
  };
  int64_t n = 0;
  if (a == "-v" || a == "--verbose") {
    o.verbose = true;
  } else if (a == "--random") {
    if (!integer("--random", 0, INT64_MAX, "a non-negative count", n))
      return OptionResult::Error;
    o.random = true;
    o.numRandom = n;
  } else if (a == "--seed") {
    const char *v = value("--seed");
    if (!v)
      return OptionResult::Error;
    char *end = nullptr;
    errno = 0;
    unsigned long long s = std::strtoull(v, &end, 0);
    if (errno != 0 || end == v || *end != '\0') {
      error = "--seed needs an unsigned integer";
      return OptionResult::Error;
    }
    o.seed = s;
    o.seedGiven = true;
  } else if (a == "--first") {
    if (!integer("--first", 0, INT64_MAX, "a non-negative index", n))
      return OptionResult::Error;
    o.first = static_cast<uint64_t>(n);
  } else if (a == "--max-depth") {
    if (!integer("--max-depth", 0, 5, "a value in 0..5", n))
      return OptionResult::Error;
    o.maxDepth = static_cast<unsigned>(n);
  } else if (a == "--count") {
    if (!integer("--count", 1, INT64_MAX, "a positive count", n))
      return OptionResult::Error;
    o.fileCount = n;
  } else if (a == "--max-span") {
    if (!integer("--max-span", 1, INT64_MAX, "a positive byte count", n))
      return OptionResult::Error;
    o.maxSpan = n;
  } else if (a == "-t") {
    const char *v = value("-t");
    if (!v)
      return OptionResult::Error;
    o.only = v;
  } else if (!a.empty() && a[0] != '-') {
    if (!o.file.empty()) {
      error = "more than one input file";
      return OptionResult::Error;
    }
    o.file = a;
  } else {
    return OptionResult::NotTaken;
  }
  return OptionResult::Taken;
}

bool finishCheckerOptions(const CheckerOptions &o, std::string &error) {
  if (o.random == !o.file.empty()) {
    error = "give either --random N or one spec file";
    return false;
  }
  return true;
}

bool parseCheckerArgs(int argc, char **argv, CheckerOptions &o,
                      const char *help, const char *version,
                      const std::function<OptionResult(int &i)> &own,
                      std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(help, stdout);
      std::exit(0);
    }
    if (a == "--version") {
      std::fputs(version, stdout);
      std::exit(0);
    }
    OptionResult r = parseCheckerOption(argc, argv, i, o, error);
    if (r == OptionResult::NotTaken)
      r = own(i);
    if (r == OptionResult::Error)
      return false;
    if (r == OptionResult::NotTaken) {
      error = "unknown option " + a;
      return false;
    }
  }
  return finishCheckerOptions(o, error);
}

void chooseRandomSeed(CheckerOptions &o) {
  if (!o.seedGiven)
    o.seed = std::random_device{}() ^
             (static_cast<uint64_t>(
                  std::chrono::steady_clock::now().time_since_epoch().count())
              << 1);
  std::printf("seed: %llu\n", static_cast<unsigned long long>(o.seed));
  std::fflush(stdout);
}

bool loadCheckedBindings(const CheckerOptions &o, const char *tool,
                         SpecFile &spec, std::vector<const SpecBinding *> &out) {
  std::ifstream in(o.file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read %s\n", tool, o.file.c_str());
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  if (!parseSpec(text.str(), o.file, spec, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return false;
  }
  if (!o.only.empty() && !spec.find(o.only)) {
    std::fprintf(stderr, "%s: %s has no binding named %s\n", tool,
                 o.file.c_str(), o.only.c_str());
    return false;
  }
  for (const SpecBinding &b : spec.bindings)
    if (o.only.empty() || b.name == o.only)
      out.push_back(&b);
  return true;
}

uint8_t patternByte(int64_t i, uint8_t mul, uint8_t salt) {
  uint64_t u = static_cast<uint64_t>(i);
  return static_cast<uint8_t>((u & 0xFF) ^
                              (((u >> 8) * mul + (u >> 16) * 0x3B) & 0xFF) ^
                              salt);
}

} // namespace ddtc
