//===- NVRTCCompiler.cpp - CUDA C++ to PTX or cubin with NVRTC ------------===//
//
// The few NVRTC entry points ddtc uses are declared here with the C ABI of
// nvrtc.h (stable across CUDA 11-13) and resolved with dlsym.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/NVRTCCompiler.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

namespace ddtc {

namespace {
using nvrtcResult = int; // the enum of nvrtc.h; 0 is NVRTC_SUCCESS
using nvrtcProgram = struct _nvrtcProgram *;
} // namespace

struct NVRTCCompiler::API {
  const char *(*getErrorString)(nvrtcResult);
  nvrtcResult (*version)(int *, int *);
  nvrtcResult (*createProgram)(nvrtcProgram *, const char *, const char *, int,
                               const char *const *, const char *const *);
  nvrtcResult (*destroyProgram)(nvrtcProgram *);
  nvrtcResult (*compileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*getPTXSize)(nvrtcProgram, size_t *);
  nvrtcResult (*getPTX)(nvrtcProgram, char *);
  nvrtcResult (*getCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*getCUBIN)(nvrtcProgram, char *);
  nvrtcResult (*getProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*getProgramLog)(nvrtcProgram, char *);
};

namespace {

const char *kNames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

bool isDirectory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// Opens the first loadable candidate; records every attempt in `tried`.
void *openLibrary(std::string &path, std::string &tried) {
  std::vector<std::string> candidates;
  const char *env = std::getenv("DDTC_NVRTC_PATH");
  bool explicitPath = env && *env;
  if (explicitPath) {
    std::string p = env;
    if (isDirectory(p))
      for (const char *n : kNames)
        candidates.push_back(p + "/" + n);
    else
      candidates.push_back(p);
  } else {
    for (const char *n : kNames)
      candidates.push_back(n);
    std::vector<std::string> dirs;
    if (const char *home = std::getenv("CUDA_HOME"); home && *home)
      dirs.push_back(std::string(home) + "/lib64");
    dirs.push_back("/usr/local/cuda/lib64");
    for (const std::string &d : dirs)
      for (const char *n : kNames)
        candidates.push_back(d + "/" + n);
  }
  for (const std::string &c : candidates) {
    if (void *h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = c;
      return h;
    }
    const char *why = dlerror();
    tried += "\n  " + c + (why ? std::string(": ") + why : std::string());
  }
  if (explicitPath)
    tried += "\n(DDTC_NVRTC_PATH is set, so no other place was searched)";
  return nullptr;
}

struct Loaded {
  NVRTCCompiler::API api{};
  bool ok = false;
  std::string error, path;
  int major = 0, minor = 0;
};

template <typename F> bool resolve(void *lib, const char *name, F &fn,
                                   std::string &missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn)
    missing += std::string(missing.empty() ? "" : ", ") + name;
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  std::string tried;
  void *lib = openLibrary(l.path, tried);
  if (!lib) {
    l.error = "cannot load NVRTC, the CUDA runtime compiler (install the CUDA "
              "toolkit or set DDTC_NVRTC_PATH to libnvrtc.so); tried:" +
              tried;
    return l;
  }
  std::string missing;
  NVRTCCompiler::API &a = l.api;
  resolve(lib, "nvrtcGetErrorString", a.getErrorString, missing);
  resolve(lib, "nvrtcVersion", a.version, missing);
  resolve(lib, "nvrtcCreateProgram", a.createProgram, missing);
  resolve(lib, "nvrtcDestroyProgram", a.destroyProgram, missing);
  resolve(lib, "nvrtcCompileProgram", a.compileProgram, missing);
  resolve(lib, "nvrtcGetPTXSize", a.getPTXSize, missing);
  resolve(lib, "nvrtcGetPTX", a.getPTX, missing);
  resolve(lib, "nvrtcGetCUBINSize", a.getCUBINSize, missing);
  resolve(lib, "nvrtcGetCUBIN", a.getCUBIN, missing);
  resolve(lib, "nvrtcGetProgramLogSize", a.getProgramLogSize, missing);
  resolve(lib, "nvrtcGetProgramLog", a.getProgramLog, missing);
  if (!missing.empty()) {
    l.error = l.path + " is not a usable NVRTC (it lacks " + missing +
              "; cubin output needs CUDA 11.1 or later)";
    return l;
  }
  if (a.version(&l.major, &l.minor) != 0) {
    l.error = l.path + ": nvrtcVersion failed";
    return l;
  }
  l.ok = true;
  return l;
}

/// "sm_90a" -> "90a"; empty when `arch` names no compute capability.
std::string archDigits(const std::string &arch) {
  std::string s = arch;
  for (const char *p : {"sm_", "compute_"})
    if (s.compare(0, std::strlen(p), p) == 0)
      s = s.substr(std::strlen(p));
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
    ++i;
  if (i == 0 || (s.size() - i > 1) ||
      (i < s.size() && !std::isalpha(static_cast<unsigned char>(s[i]))))
    return "";
  return s;
}

} // namespace

std::string numberLines(const std::string &source) {
  std::ostringstream os;
  std::istringstream in(source);
  std::string line;
  for (unsigned n = 1; std::getline(in, line); ++n) {
    os.width(5);
    os << n << "  " << line << "\n";
  }
  return os.str();
}

const NVRTCCompiler *NVRTCCompiler::get(std::string &error) {
  static Loaded loaded = load();
  static NVRTCCompiler compiler;
  static std::once_flag once;
  if (!loaded.ok) {
    error = loaded.error;
    return nullptr;
  }
  std::call_once(once, [] {
    compiler.api_ = &loaded.api;
    compiler.path_ = loaded.path;
    compiler.major_ = loaded.major;
    compiler.minor_ = loaded.minor;
  });
  return &compiler;
}

std::string NVRTCCompiler::versionString() const {
  return std::to_string(major_) + "." + std::to_string(minor_);
}

NVRTCResult NVRTCCompiler::compile(const std::string &source,
                                   const std::string &name, NVRTCOutput output,
                                   const std::string &arch,
                                   const std::vector<std::string> &extra) const {
  std::string digits = archDigits(arch);
  if (digits.empty()) {
    NVRTCResult r;
    r.error = "'" + arch + "' is not a GPU architecture (expected e.g. 90, "
              "sm_90 or compute_90)";
    return r;
  }
  std::vector<std::string> options;
  options.push_back(std::string("--gpu-architecture=") +
                    (output == NVRTCOutput::PTX ? "compute_" : "sm_") + digits);
  options.push_back("--std=c++17");
  for (const std::string &o : extra)
    options.push_back(o);
  // The kernels use nothing of the CUDA runtime's device API (textures,
  // launches from the device, cudaMalloc and its types), so NVRTC 12.4 and
  // later may leave those declarations out: the same machine code, without
  // parsing them (a third of an empty kernel's compile). Should a source
  // need them after all, it compiles again with them.
  if (minimalDeclarations()) {
    std::vector<std::string> minimal = options;
    minimal.push_back("--minimal");
    NVRTCResult r = compileWith(source, name, output, minimal);
    if (r.ok)
      return r;
  }
  return compileWith(source, name, output, options);
}

NVRTCResult
NVRTCCompiler::compileWith(const std::string &source, const std::string &name,
                           NVRTCOutput output,
                           const std::vector<std::string> &options) const {
  NVRTCResult r;
  r.options = options;
  std::vector<const char *> opts;
  for (const std::string &o : r.options)
    opts.push_back(o.c_str());

  const API &a = *api_;
  auto fail = [&](const char *what, nvrtcResult rc) {
    r.error = std::string(what) + " failed: " + a.getErrorString(rc);
  };
  nvrtcProgram prog = nullptr;
  nvrtcResult rc =
      a.createProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (rc != 0) {
    fail("nvrtcCreateProgram", rc);
    return r;
  }
  nvrtcResult compiled =
      a.compileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t logSize = 0;
  if (a.getProgramLogSize(prog, &logSize) == 0 && logSize > 1) {
    r.log.resize(logSize);
    if (a.getProgramLog(prog, &r.log[0]) == 0)
      r.log.resize(logSize - 1); // drop the terminating NUL
    else
      r.log.clear();
  }
  if (compiled != 0) {
    std::string opt;
    for (const std::string &o : r.options)
      opt += " " + o;
    r.error = "NVRTC " + versionString() + " could not compile " + name +
              " (options:" + opt + "): " + a.getErrorString(compiled) +
              (r.log.empty() ? std::string() : "\n" + r.log);
    const char *dump = std::getenv("DDTC_DUMP_SOURCE");
    if (dump && *dump)
      r.error += "\nsource of " + name + ":\n" + numberLines(source);
    else
      r.error += "\n(set DDTC_DUMP_SOURCE=1 to see the source)";
  } else {
    size_t size = 0;
    bool ptx = output == NVRTCOutput::PTX;
    rc = ptx ? a.getPTXSize(prog, &size) : a.getCUBINSize(prog, &size);
    if (rc != 0) {
      fail(ptx ? "nvrtcGetPTXSize" : "nvrtcGetCUBINSize", rc);
    } else {
      r.binary.resize(size);
      rc = size == 0 ? 0
                     : (ptx ? a.getPTX(prog, &r.binary[0])
                            : a.getCUBIN(prog, &r.binary[0]));
      if (rc != 0) {
        fail(ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN", rc);
      } else {
        // The PTX size counts its terminating NUL.
        if (ptx && !r.binary.empty() && r.binary.back() == '\0')
          r.binary.pop_back();
        r.ok = true;
      }
    }
  }
  a.destroyProgram(&prog);
  return r;
}

} // namespace ddtc
