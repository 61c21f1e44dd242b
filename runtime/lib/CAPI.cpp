//===- CAPI.cpp - The functions of ddtc.h ---------------------------------===//
//
// Each function checks its arguments, calls the runtime and turns failures
// (exceptions included) into a status and a thread-local message.
//===----------------------------------------------------------------------===//

#include "ddtc/ddtc.h"

#include "CUDADriver.h"
#include "Config.h"
#include "KernelCache.h"
#include "TypeObject.h"

#include "ddtc/Core/PackRange.h"
#include "ddtc/Core/SpecParser.h"

#include <cstring>
#include <new>

using namespace ddtc;
using namespace ddtc::rt;

namespace {

thread_local std::string lastError;

ddtc_status fail(const Status &s) {
  lastError = s.message;
  return s.code;
}
ddtc_status fail(ddtc_status code, std::string message) {
  return fail(Status::error(code, std::move(message)));
}

/// Runs `body` (returning a Status), turning exceptions into statuses.
template <typename F> ddtc_status guarded(const char *fn, F body) {
  try {
    Status s = body();
    return s.ok() ? DDTC_SUCCESS : fail(s);
  } catch (const std::bad_alloc &) {
    return fail(DDTC_ERROR_OUT_OF_MEMORY,
                std::string(fn) + ": out of host memory");
  } catch (const std::exception &e) {
    return fail(DDTC_ERROR_INTERNAL,
                std::string(fn) + ": internal error: " + e.what());
  } catch (...) {
    return fail(DDTC_ERROR_INTERNAL,
                std::string(fn) + ": internal error: unknown exception");
  }
}

Status nullArgument(const char *fn, const char *what) {
  return Status::error(DDTC_ERROR_INVALID_ARGUMENT,
                       std::string(fn) + ": " + what + " is null");
}

} // namespace

extern "C" {

const char *ddtc_status_name(ddtc_status status) {
  switch (status) {
  case DDTC_SUCCESS:
    return "DDTC_SUCCESS";
  case DDTC_ERROR_INVALID_ARGUMENT:
    return "DDTC_ERROR_INVALID_ARGUMENT";
  case DDTC_ERROR_INVALID_SPEC:
    return "DDTC_ERROR_INVALID_SPEC";
  case DDTC_ERROR_UNSUPPORTED_TYPE:
    return "DDTC_ERROR_UNSUPPORTED_TYPE";
  case DDTC_ERROR_NOT_COMMITTED:
    return "DDTC_ERROR_NOT_COMMITTED";
  case DDTC_ERROR_NO_DEVICE:
    return "DDTC_ERROR_NO_DEVICE";
  case DDTC_ERROR_NO_COMPILER:
    return "DDTC_ERROR_NO_COMPILER";
  case DDTC_ERROR_COMPILE:
    return "DDTC_ERROR_COMPILE";
  case DDTC_ERROR_CUDA:
    return "DDTC_ERROR_CUDA";
  case DDTC_ERROR_INVALID_POINTER:
    return "DDTC_ERROR_INVALID_POINTER";
  case DDTC_ERROR_OUT_OF_MEMORY:
    return "DDTC_ERROR_OUT_OF_MEMORY";
  case DDTC_ERROR_INTERNAL:
    return "DDTC_ERROR_INTERNAL";
  }
  return "DDTC_ERROR_UNKNOWN";
}

const char *ddtc_last_error(void) { return lastError.c_str(); }

ddtc_status ddtc_report_error(ddtc_status status, const char *message) {
  try {
    lastError = message ? message : "";
  } catch (...) {
  }
  return status;
}

const char *ddtc_version(void) { return DDTC_VERSION; }

ddtc_status ddtc_init(void) {
  return guarded("ddtc_init", [] {
    config();
    KernelCache::get().loadCompiler();
    std::string error;
    cu::getDriver(error); // starts the driver where there is one
    return Status::success();
  });
}

ddtc_status ddtc_finalize(void) {
  return guarded("ddtc_finalize", [] {
    KernelCache::get().drain();
    return Status::success();
  });
}

ddtc_status ddtc_type_from_spec(const char *spec_text, const char *name,
                                ddtc_type *out) {
  const char *fn = "ddtc_type_from_spec";
  return guarded(fn, [&] {
    if (!out)
      return nullArgument(fn, "out");
    *out = nullptr;
    if (!spec_text)
      return nullArgument(fn, "spec_text");
    SpecFile file;
    std::string error;
    if (!parseSpec(spec_text, "<spec>", file, error))
      return Status::error(DDTC_ERROR_INVALID_SPEC, error);
    const SpecBinding *b = nullptr;
    if (name) {
      b = file.find(name);
      if (!b) {
        std::string names;
        for (const SpecBinding &x : file.bindings)
          names += (names.empty() ? "" : ", ") + x.name;
        return Status::error(
            DDTC_ERROR_INVALID_SPEC,
            std::string(fn) + ": the spec defines no type '" + name +
                "' (it defines: " + (names.empty() ? "nothing" : names) + ")");
      }
    } else if (!file.bindings.empty()) {
      b = &file.bindings.back();
    } else {
      return Status::error(DDTC_ERROR_INVALID_SPEC,
                           std::string(fn) + ": the spec defines no type");
    }
    *out = newTypeHandle(b->type, b->name).release();
    return Status::success();
  });
}

ddtc_status ddtc_type_commit(ddtc_type type) {
  const char *fn = "ddtc_type_commit";
  return guarded(
      fn, [&] { return type ? commitType(*type) : nullArgument(fn, "type"); });
}

ddtc_status ddtc_type_wait(ddtc_type type) {
  const char *fn = "ddtc_type_wait";
  return guarded(
      fn, [&] { return type ? waitType(*type) : nullArgument(fn, "type"); });
}

ddtc_status ddtc_type_free(ddtc_type *type) {
  const char *fn = "ddtc_type_free";
  return guarded(fn, [&] {
    if (!type)
      return nullArgument(fn, "type");
    if (*type) {
      releaseType(**type);
      delete *type;
      *type = nullptr;
    }
    return Status::success();
  });
}

#define DDTC_LAYOUT_QUERY(NAME, EXPR)                                          \
  ddtc_status NAME(ddtc_type type, int64_t *out) {                             \
    return guarded(#NAME, [&] {                                                \
      if (!type)                                                               \
        return nullArgument(#NAME, "type");                                    \
      if (!out)                                                                \
        return nullArgument(#NAME, "the result pointer");                      \
      const LayoutInfo &l = type->type->layout();                              \
      *out = (EXPR);                                                           \
      return Status::success();                                                \
    });                                                                        \
  }

DDTC_LAYOUT_QUERY(ddtc_type_size, l.size)
DDTC_LAYOUT_QUERY(ddtc_type_extent, l.extent)
DDTC_LAYOUT_QUERY(ddtc_type_lb, l.lb)
#undef DDTC_LAYOUT_QUERY

ddtc_status ddtc_type_true_extent(ddtc_type type, int64_t *true_lb,
                                  int64_t *true_extent) {
  const char *fn = "ddtc_type_true_extent";
  return guarded(fn, [&] {
    if (!type)
      return nullArgument(fn, "type");
    if (!true_lb || !true_extent)
      return nullArgument(fn, "a result pointer");
    *true_lb = type->type->layout().trueLb;
    *true_extent = type->type->layout().trueExtent;
    return Status::success();
  });
}

ddtc_status ddtc_type_packed_size(ddtc_type type, int64_t count,
                                  int64_t *bytes) {
  const char *fn = "ddtc_type_packed_size";
  return guarded(fn, [&] {
    if (!type)
      return nullArgument(fn, "type");
    if (!bytes)
      return nullArgument(fn, "bytes");
    int64_t total = 0;
    std::string error;
    if (!checkPackedBytes(type->type->layout().size, count, total, error))
      return Status::error(DDTC_ERROR_INVALID_ARGUMENT,
                           std::string(fn) + ": " + error);
    *bytes = total;
    return Status::success();
  });
}

ddtc_status ddtc_type_kernel_info(ddtc_type type, ddtc_kernel_info *info) {
  const char *fn = "ddtc_type_kernel_info";
  return guarded(fn, [&] {
    if (!type)
      return nullArgument(fn, "type");
    if (!info)
      return nullArgument(fn, "info");
    return typeKernelInfo(*type, *info);
  });
}

ddtc_status ddtc_pack(ddtc_type type, const void *origin, int64_t count,
                      int64_t lo, int64_t hi, void *packed, void *stream,
                      int max_ctas) {
  return guarded("ddtc_pack", [&] {
    return type ? runKernel(true, *type, origin, count, lo, hi, packed, stream,
                            max_ctas)
                : nullArgument("ddtc_pack", "type");
  });
}

ddtc_status ddtc_unpack(ddtc_type type, void *origin, int64_t count, int64_t lo,
                        int64_t hi, const void *packed, void *stream,
                        int max_ctas) {
  return guarded("ddtc_unpack", [&] {
    return type ? runKernel(false, *type, origin, count, lo, hi, packed, stream,
                            max_ctas)
                : nullArgument("ddtc_unpack", "type");
  });
}

ddtc_status ddtc_copy_supported(ddtc_type src_type, ddtc_type dst_type) {
  const char *fn = "ddtc_copy_supported";
  return guarded(fn, [&] {
    if (!src_type)
      return nullArgument(fn, "src_type");
    if (!dst_type)
      return nullArgument(fn, "dst_type");
    return copySupported(*src_type, *dst_type);
  });
}

ddtc_status ddtc_copy(ddtc_type src_type, const void *src, int64_t src_count,
                      ddtc_type dst_type, void *dst, int64_t dst_count,
                      int64_t lo, int64_t hi, void *stream, int max_ctas) {
  const char *fn = "ddtc_copy";
  return guarded(fn, [&] {
    if (!src_type)
      return nullArgument(fn, "src_type");
    if (!dst_type)
      return nullArgument(fn, "dst_type");
    return runCopy(*src_type, src, src_count, *dst_type, dst, dst_count, lo, hi,
                   stream, max_ctas);
  });
}

ddtc_status ddtc_get_stats(ddtc_stats *out) {
  return guarded("ddtc_get_stats", [&] {
    if (!out)
      return nullArgument("ddtc_get_stats", "stats");
    const Stats &s = stats();
    out->nvrtc_compiles = s.nvrtcCompiles;
    out->compile_failures = s.compileFailures;
    out->memory_hits = s.memoryHits;
    out->disk_hits = s.diskHits;
    out->disk_writes = s.diskWrites;
    out->disk_rejected = s.diskRejected;
    out->builtin_hits = s.builtinHits;
    out->generic_launches = s.genericLaunches;
    out->specialized_launches = s.specializedLaunches;
    out->module_loads = s.moduleLoads;
    out->table_uploads = s.tableUploads;
    out->compile_ms_total = static_cast<double>(s.compileMicros) / 1000.0;
    out->copy_engine_copies = s.copyEngineCopies;
    return Status::success();
  });
}

} // extern "C"
