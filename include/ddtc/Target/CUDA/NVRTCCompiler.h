//===- NVRTCCompiler.h - CUDA C++ to PTX or cubin with NVRTC ----*- C++ -*-===//
//
// Compiles CUDA C++ with NVRTC, loaded at run time with dlopen: ddtc has no
// link-time dependency on CUDA and runs (without this feature) where NVRTC is
// missing. NVRTC needs no GPU and no driver.
//
// The library is searched for as $DDTC_NVRTC_PATH (a library file, or a
// folder holding one), then libnvrtc.so.13, libnvrtc.so.12 and libnvrtc.so
// through the dynamic loader's search path, then the same names under
// $CUDA_HOME/lib64 and /usr/local/cuda/lib64.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_NVRTCCOMPILER_H
#define DDTC_TARGET_CUDA_NVRTCCOMPILER_H

#include <string>
#include <vector>

namespace ddtc {

enum class NVRTCOutput {
  PTX,   ///< PTX text for a virtual architecture (compute_XX)
  Cubin, ///< an ELF cubin for a real architecture (sm_XX)
};

struct NVRTCResult {
  bool ok = false;
  /// The PTX text or the cubin's bytes.
  std::string binary;
  /// NVRTC's log (warnings, or errors when it failed).
  std::string log;
  /// The options NVRTC was called with.
  std::vector<std::string> options;
  /// Why it failed, with the log; with DDTC_DUMP_SOURCE set in the
  /// environment also the source with line numbers.
  std::string error;
};

class NVRTCCompiler {
public:
  /// The process's compiler, loaded on first use. Returns null and sets
  /// `error` (naming the places searched) when NVRTC cannot be loaded.
  static const NVRTCCompiler *get(std::string &error);

  /// NVRTC's version, e.g. 13 and 0.
  int major() const { return major_; }
  int minor() const { return minor_; }
  std::string versionString() const;
  /// Whether compiles leave out the CUDA runtime's device API (`--minimal`,
  /// NVRTC 12.4 and later; a source that needs it compiles again with it).
  bool minimalDeclarations() const {
    return major_ > 12 || (major_ == 12 && minor_ >= 4);
  }
  /// The file that was loaded, as given to dlopen.
  const std::string &libraryPath() const { return path_; }

  /// Compiles `source` (named `name` in diagnostics) for `arch`, a compute
  /// capability such as "90", "sm_90" or "compute_90" (only its digits and
  /// an optional trailing letter, as in "90a", are used). Thread-safe.
  NVRTCResult compile(const std::string &source, const std::string &name,
                      NVRTCOutput output, const std::string &arch = "90",
                      const std::vector<std::string> &extraOptions = {}) const;

  struct API;

private:
  NVRTCCompiler() = default;
  /// One NVRTC compile with exactly `options`.
  NVRTCResult compileWith(const std::string &source, const std::string &name,
                          NVRTCOutput output,
                          const std::vector<std::string> &options) const;
  std::string path_;
  int major_ = 0, minor_ = 0;
  const API *api_ = nullptr;
};

/// `source` with each line prefixed by its number, for error messages.
std::string numberLines(const std::string &source);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_NVRTCCOMPILER_H
