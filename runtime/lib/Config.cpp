//===- Config.cpp - The runtime's settings, from the environment ----------===//

#include "Config.h"

#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace ddtc::rt {

namespace {

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

/// Unset, empty, "0", "false", "no" and "off" are false.
bool envFlag(const char *name, bool unset) {
  const char *v = std::getenv(name);
  if (!v)
    return unset;
  std::string s(v);
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return !(s.empty() || s == "0" || s == "false" || s == "no" || s == "off");
}

bool parsePositive(const std::string &s, int64_t &out) {
  if (s.empty() || s.size() > 18)
    return false;
  int64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
    v = v * 10 + (c - '0');
  }
  if (v <= 0)
    return false;
  out = v;
  return true;
}

/// Digits with an optional K, M or G (powers of 1024); false when it is not
/// that or exceeds 2^40.
bool parseBytes(const std::string &text, int64_t &out) {
  std::string s = text;
  int shift = 0;
  if (!s.empty()) {
    switch (std::toupper(static_cast<unsigned char>(s.back()))) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    }
    if (shift)
      s.pop_back();
  }
  int64_t v = 0;
  if (s == "0")
    v = 0;
  else if (!parsePositive(s, v))
    return false;
  if (v > (int64_t(1) << (40 - shift)))
    return false;
  out = v << shift;
  return true;
}

/// Sets `field` from the variable `name` where it is set and `accept`
/// takes it; a value it refuses keeps the default, and a warning says that
/// it is not `what`.
template <typename T, typename Accept>
void readNumber(Config &c, const char *name, const char *what, T &field,
                Accept accept) {
  std::string s = env(name);
  if (s.empty())
    return;
  int64_t v = 0;
  if (accept(s, v))
    field = static_cast<T>(v);
  else
    c.warnings += std::string(name) + "='" + s + "' is not " + what +
                  "; using " + std::to_string(field) + "\n";
}

std::string defaultCacheDir() {
  std::string xdg = env("XDG_CACHE_HOME");
  // The XDG spec ignores relative paths.
  if (!xdg.empty() && xdg[0] == '/')
    return xdg + "/ddtc";
  std::string home = env("HOME");
  if (home.empty()) {
    if (const passwd *pw = getpwuid(geteuid()); pw && pw->pw_dir)
      home = pw->pw_dir;
  }
  if (home.empty())
    return "";
  return home + "/.cache/ddtc";
}

Config readConfig() {
  Config c;
  c.cacheDir = env("DDTC_CACHE_DIR");
  if (c.cacheDir.empty())
    c.cacheDir = defaultCacheDir();
  c.cacheDisabled = envFlag("DDTC_DISABLE_CACHE", false);
  c.verbose = envFlag("DDTC_VERBOSE", false);
  c.checkPointers = envFlag("DDTC_CHECK_POINTERS", true);
  c.tiles = envFlag("DDTC_TILES", true);
  c.mappedChunks = envFlag("DDTC_MAPPED_CHUNKS", true);
  c.alignVariants = envFlag("DDTC_ALIGN_VARIANTS", true);
  c.unpackOrder = envFlag("DDTC_UNPACK_ORDER", true);
  c.builtinStrided = envFlag("DDTC_BUILTIN_STRIDED", true);

  std::istringstream options(env("DDTC_NVRTC_OPTIONS"));
  for (std::string word; options >> word;)
    c.nvrtcOptions.push_back(word);

  std::string jit = env("DDTC_JIT");
  if (jit.empty() || jit == "async")
    c.jit = JitMode::Async;
  else if (jit == "sync")
    c.jit = JitMode::Sync;
  else if (jit == "generic")
    c.jit = JitMode::Generic;
  else
    c.warnings +=
        "DDTC_JIT='" + jit + "' is not async, sync or generic; using async\n";

  std::string arch = env("DDTC_DEFAULT_ARCH");
  if (!arch.empty()) {
    std::string digits = arch;
    for (const char *p : {"sm_", "compute_"})
      if (digits.rfind(p, 0) == 0)
        digits = digits.substr(std::string(p).size());
    int64_t v = 0;
    if (parsePositive(digits, v) && v >= 10 && v < 1000)
      c.defaultArch = digits;
    else
      c.warnings += "DDTC_DEFAULT_ARCH='" + arch +
                    "' is not an architecture like 90 or sm_90; using 90\n";
  }
  readNumber(c, "DDTC_GENERIC_MAX_UNITS", "a positive number",
             c.genericMaxUnits, parsePositive);
  readNumber(c, "DDTC_JIT_THREADS", "a number from 1 to 64", c.jitThreads,
             [](const std::string &s, int64_t &v) {
               return parsePositive(s, v) && v <= 64;
             });
  readNumber(c, "DDTC_HOST_STAGING_MIN",
             "a byte count (digits, optionally K, M or G)", c.hostStagingMin,
             parseBytes);
  readNumber(c, "DDTC_COPY_ENGINE_ROWS",
             "a byte count (digits, optionally K, M or G; 0: never)",
             c.copyEngineRows, parseBytes);
  readNumber(c, "DDTC_HOST_STAGING_CHUNK", "a byte count from 256 to 1G",
             c.hostStagingChunk, [](const std::string &s, int64_t &v) {
               return parseBytes(s, v) && v >= 256 && v <= (int64_t(1) << 30);
             });
  return c;
}

/// Reads the settings and reports the ones not understood.
Config readAndReport() {
  Config c = readConfig();
  if (!c.warnings.empty())
    std::fprintf(stderr, "ddtc: warning: %s", c.warnings.c_str());
  return c;
}

Config &storage() {
  static Config c = readAndReport();
  return c;
}

} // namespace

const Config &config() { return storage(); }

void reloadConfig() { storage() = readAndReport(); }

void logVerbose(const std::string &message) {
  if (config().verbose)
    std::fprintf(stderr, "ddtc: %s\n", message.c_str());
}

} // namespace ddtc::rt
