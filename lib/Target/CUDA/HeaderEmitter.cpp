//===- HeaderEmitter.cpp - A self-contained C header of GPU kernels -------===//
//
// The launch computation is computeLaunch's, written in C: only lo, hi and
// the first and last chunk (strided) or item (units) depend on the call
// (describeParams tells them apart); every other parameter word is a
// property of the plan and is written as a constant. A unit test compiles
// the header with stub driver functions and compares its launches with
// computeLaunch's for many calls.
//
// Everything in the header is `static inline` (DDTC_GENERATED_FUNCTION, which
// also marks it unused for GCC and Clang): it can be included in several
// files of one program, and a file that uses only some of the types compiles
// no code for the others. Each file that includes it has its own cache of
// loaded modules.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/HeaderEmitter.h"

#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/TileKernel.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <sstream>

namespace ddtc {

namespace {

const int64_t kMax = std::numeric_limits<int64_t>::max();

/// A C literal of type long long for `v`.
std::string lit(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min())
    return "(-9223372036854775807LL - 1)";
  return std::to_string(v) + "LL";
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

/// `text` made safe inside a C block comment, on one line, shortened to
/// about `max` characters.
std::string commentText(std::string text, size_t max = 300) {
  for (char &c : text)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '*' && i + 1 < text.size() && text[i + 1] == '/')
      out += ' ';
  }
  if (out.size() > max)
    out = out.substr(0, max) + " ...";
  return out;
}

/// Writes `bytes` as the initializer of an unsigned char array: decimal
/// numbers, lines of at most 79 characters.
void writeBytes(std::ostringstream &os, const std::string &bytes,
                bool terminate) {
  size_t n = bytes.size() + (terminate ? 1 : 0);
  std::string line;
  for (size_t i = 0; i < n; ++i) {
    unsigned b = i < bytes.size() ? static_cast<unsigned char>(bytes[i]) : 0;
    std::string item = std::to_string(b) + ",";
    if (line.size() + item.size() > 79) {
      os << line << "\n";
      line.clear();
    }
    line += item;
  }
  if (!line.empty())
    os << line << "\n";
}

const char *kCommon = R"(#ifndef DDTC_GENERATED_COMMON_V1
#define DDTC_GENERATED_COMMON_V1
/* Shared by every header ddtc generates. */

/* The CUDA contexts one type's kernels can be loaded into at a time
   (<prefix>_unload frees the slot of the current context). */
#ifndef DDTC_GENERATED_MAX_CONTEXTS
#define DDTC_GENERATED_MAX_CONTEXTS 16
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DDTC_GENERATED_FUNCTION static inline __attribute__((unused))
#define DDTC_GENERATED_DATA __attribute__((aligned(16), unused))
#define DDTC_GENERATED_LOCK(l) \
  do { \
    while (__atomic_exchange_n((l), 1, __ATOMIC_ACQUIRE)) { \
    } \
  } while (0)
#define DDTC_GENERATED_UNLOCK(l) __atomic_store_n((l), 0, __ATOMIC_RELEASE)
#else
/* Without the GNU atomic builtins the module cache is not thread safe:
   load the kernels (call <prefix>_load) on one thread first. */
#define DDTC_GENERATED_FUNCTION static inline
#define DDTC_GENERATED_DATA
#define DDTC_GENERATED_LOCK(l) ((void)(l))
#define DDTC_GENERATED_UNLOCK(l) ((void)(l))
#endif

/* The embedded kernels of one type. */
typedef struct ddtc_generated_image {
  const void *cubin;
  const void *ptx;
  const char *pack_name;
  const char *unpack_name;
  const long long *units; /* the work-unit table, or NULL */
  size_t units_bytes;
} ddtc_generated_image;

/* One type's kernels loaded into one context. */
typedef struct ddtc_generated_module {
  CUcontext context;
  CUmodule module;
  CUfunction pack;
  CUfunction unpack;
  CUdeviceptr units;
} ddtc_generated_module;

typedef struct ddtc_generated_cache {
  volatile int lock;
  int used;
  ddtc_generated_module modules[DDTC_GENERATED_MAX_CONTEXTS];
} ddtc_generated_cache;

/* Loads the cubin, or the PTX when the cubin does not load (another
   architecture: the driver compiles the PTX for the GPU), looks up the
   kernels and uploads the work-unit table. */
DDTC_GENERATED_FUNCTION CUresult
ddtc_generated_load(const ddtc_generated_image *image,
                    ddtc_generated_module *m) {
  CUresult r = cuModuleLoadData(&m->module, image->cubin);
  if (r != CUDA_SUCCESS) {
    r = cuModuleLoadData(&m->module, image->ptx);
    if (r != CUDA_SUCCESS)
      return r;
  }
  r = cuModuleGetFunction(&m->pack, m->module, image->pack_name);
  if (r == CUDA_SUCCESS)
    r = cuModuleGetFunction(&m->unpack, m->module, image->unpack_name);
  if (r == CUDA_SUCCESS && image->units_bytes > 0) {
    r = cuMemAlloc(&m->units, image->units_bytes);
    if (r == CUDA_SUCCESS) {
      r = cuMemcpyHtoD(m->units, image->units, image->units_bytes);
      if (r != CUDA_SUCCESS) {
        cuMemFree(m->units);
        m->units = 0;
      }
    }
  }
  if (r != CUDA_SUCCESS)
    cuModuleUnload(m->module);
  return r;
}

/* The kernels of `image` in the current context, loaded on first use. */
DDTC_GENERATED_FUNCTION CUresult
ddtc_generated_get(ddtc_generated_cache *cache,
                   const ddtc_generated_image *image,
                   ddtc_generated_module *out) {
  CUcontext context = NULL;
  CUresult r = cuCtxGetCurrent(&context);
  int i;
  if (r != CUDA_SUCCESS)
    return r;
  if (context == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  DDTC_GENERATED_LOCK(&cache->lock);
  for (i = 0; i < cache->used; ++i)
    if (cache->modules[i].context == context)
      break;
  if (i < cache->used) {
    *out = cache->modules[i];
  } else if (cache->used == DDTC_GENERATED_MAX_CONTEXTS) {
    r = CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    ddtc_generated_module m;
    m.context = context;
    m.module = NULL;
    m.pack = NULL;
    m.unpack = NULL;
    m.units = 0;
    r = ddtc_generated_load(image, &m);
    if (r == CUDA_SUCCESS) {
      cache->modules[cache->used++] = m;
      *out = m;
    }
  }
  DDTC_GENERATED_UNLOCK(&cache->lock);
  return r;
}

/* Unloads the kernels from the current context (if loaded there). */
DDTC_GENERATED_FUNCTION CUresult
ddtc_generated_unload(ddtc_generated_cache *cache) {
  CUcontext context = NULL;
  CUresult r = cuCtxGetCurrent(&context);
  int i;
  if (r != CUDA_SUCCESS || context == NULL)
    return r;
  DDTC_GENERATED_LOCK(&cache->lock);
  for (i = 0; i < cache->used; ++i)
    if (cache->modules[i].context == context)
      break;
  if (i < cache->used) {
    if (cache->modules[i].units != 0)
      cuMemFree(cache->modules[i].units);
    r = cuModuleUnload(cache->modules[i].module);
    cache->modules[i] = cache->modules[--cache->used];
  }
  DDTC_GENERATED_UNLOCK(&cache->lock);
  return r;
}

DDTC_GENERATED_FUNCTION CUresult ddtc_generated_launch(
    ddtc_generated_cache *cache, const ddtc_generated_image *image, int pack,
    const void *origin, const void *packed, void *params, unsigned int grid,
    unsigned int block, CUstream stream) {
  ddtc_generated_module m;
  void *args[4];
  CUresult r = ddtc_generated_get(cache, image, &m);
  if (r != CUDA_SUCCESS)
    return r;
  args[0] = (void *)&origin;
  args[1] = (void *)&packed;
  args[2] = params;
  args[3] = (void *)&m.units;
  return cuLaunchKernel(pack ? m.pack : m.unpack, grid, 1, 1, block, 1, 1, 0,
                        stream, args, NULL);
}
#endif /* DDTC_GENERATED_COMMON_V1 */
)";

/// The end of a launch computation from `blocks`: capped by max_ctas and by
/// the grid's limit, then returned.
void emitGridReturn(std::ostream &os) {
  os << "  if (max_ctas > 0 && blocks > max_ctas)\n"
     << "    blocks = max_ctas;\n"
     << "  if (blocks > 2147483647LL)\n"
     << "    blocks = 2147483647LL;\n"
     << "  *grid = (unsigned int)blocks;\n"
     << "  return CUDA_SUCCESS;\n"
     << "}\n";
}

/// `<p>_unpack_launch_config`: the pack's launch with the unpack kernel's
/// grid, which differs where the unpack takes fewer chunks a thread
/// (stridedBatch).
void emitUnpackLaunchC(const KernelPlan &plan, const std::string &p,
                       std::ostream &os) {
  const bool own = plan.family == KernelFamily::Strided &&
                   plan.tileDim < 0 &&
                   stridedBatch(plan, false) != stridedBatch(plan, true);
  os << "\n/* The same for the unpack kernel: the same parameters"
     << (own ? ", its own grid" : " and grid") << ". */\n"
     << "DDTC_GENERATED_FUNCTION CUresult " << p
     << "_unpack_launch_config(\n"
     << "    long long count, long long lo, long long hi, int max_ctas,\n"
     << "    unsigned int *grid, unsigned int *block, " << p
     << "_params *params) {\n";
  if (!own) {
    os << "  return " << p
       << "_launch_config(count, lo, hi, max_ctas, grid, block, params);\n"
       << "}\n";
    return;
  }
  const int64_t k = stridedBatch(plan, false);
  const int64_t block = plan.threadsPerBlock;
  os << "  long long threads, blocks;\n"
     << "  CUresult r =\n"
     << "      " << p
     << "_launch_config(count, lo, hi, max_ctas, grid, block, params);\n"
     << "  if (r != CUDA_SUCCESS || *grid == 0)\n"
     << "    return r;\n"
     << "  /* " << k << " chunk(s) a thread. */\n"
     << "  threads = (params->chunk_end - params->chunk_begin"
     << (k > 1 ? " + " + std::to_string(k - 1) + ") / " + std::to_string(k)
               : std::string(")"))
     << ";\n"
     << "  blocks = threads / " << block << " + (threads % " << block
     << " != 0);\n";
  emitGridReturn(os);
}

} // namespace

std::string emitHostLaunchC(const KernelPlan &plan, const std::string &p) {
  const CanonicalLayout &l = plan.layout;
  const bool units = plan.family == KernelFamily::Units;
  const int64_t block = plan.threadsPerBlock;
  const int64_t nu = static_cast<int64_t>(plan.units.size());
  std::vector<ParamMember> members = describeParams(plan);
  std::ostringstream os;

  os << "/* The kernels' parameter struct, passed by value. */\n"
     << "typedef struct " << p << "_params {\n";
  for (const ParamMember &m : members) {
    os << "  long long " << m.name << ";";
    if (!m.comment.empty())
      os << " /* " << commentText(m.comment) << " */";
    os << "\n";
  }
  os << "} " << p << "_params;\n\n";

  os << "/* The launch that moves packed bytes [lo, hi) of `count` instances "
        "with at\n"
        "   most max_ctas blocks (0: as many as the work needs): *grid (0 "
        "when\n"
        "   nothing moves), *block and the parameter struct. Needs no GPU.\n"
        "   CUDA_ERROR_INVALID_VALUE when count is negative or count * size\n"
        "   overflows, [lo, hi) is not inside the packed bytes, or max_ctas "
        "is\n"
        "   negative. */\n"
     << "DDTC_GENERATED_FUNCTION CUresult " << p << "_launch_config(\n"
     << "    long long count, long long lo, long long hi, int max_ctas,\n"
     << "    unsigned int *grid, unsigned int *block, " << p
     << "_params *params) {\n"
     << (units && nu == 0 ? "  long long total;\n"
                          : "  long long total, threads = 0, blocks;\n");
  for (const ParamMember &m : members) {
    // The per-call words other than lo and hi stay 0 unless something moves.
    std::string value = lit(m.value);
    if (m.perCall)
      value = m.name == "lo" || m.name == "hi" ? m.name : "0";
    os << "  params->" << m.name << " = " << value << ";\n";
  }
  os << "  *grid = 0;\n"
     << "  *block = " << block << ";\n";
  os << "  if (count < 0 || max_ctas < 0)\n"
     << "    return CUDA_ERROR_INVALID_VALUE;\n";
  if (l.size > 0)
    os << "  if (count > " << lit(kMax / l.size) << ")\n"
       << "    return CUDA_ERROR_INVALID_VALUE; /* count * size overflows */\n";
  os << "  total = count * " << lit(l.size) << ";\n"
     << "  if (lo < 0 || lo > hi || hi > total)\n"
     << "    return CUDA_ERROR_INVALID_VALUE;\n"
     << "  if (lo == hi)\n"
     << "    return CUDA_SUCCESS;\n";
  if (plan.tileDim >= 0) {
    // One block per tile, from the band of lo to the band of hi - 1, as
    // computeLaunch counts them (getTileBand).
    const TileGeometry g = getTileGeometry(plan);
    auto band = [&](const char *q) {
      return std::string("((") + q + " / " + lit(l.size) + ") * " +
             lit(g.outerPoints) + " + " + q + " % " + lit(l.size) + " / " +
             lit(g.rowBytes) + ") * " + lit(g.tilesA) + " + " + q + " % " +
             lit(l.size) + " % " + lit(g.rowBytes) + " / " +
             lit(g.packedStride[g.a]) + " / " + lit(kTileElems);
    };
    os << "  /* One block per " << kTileElems << "x" << kTileElems
       << " tile of elements; the tiles of a band cover\n"
          "     consecutive packed bytes. */\n"
       << "  {\n"
       << "    const long long last = hi - 1;\n"
       << "    params->chunk_begin = (" << band("lo") << ") * "
       << lit(g.tilesPerBand) << ";\n"
       << "    params->chunk_end = (" << band("last") << " + 1) * "
       << lit(g.tilesPerBand) << ";\n"
       << "  }\n"
       << "  threads = params->chunk_end - params->chunk_begin;\n";
  } else if (!units) {
    // The pack kernel's chunks, as computeLaunch counts them.
    const int64_t bytes = stridedLaunchChunkBytes(plan);
    const bool extra = stridedLaunchExtraChunk(plan);
    os << "  /* One thread per " << bytes << "-byte chunk of the packed stream"
       << (extra ? ", aligned in the packed buffer" : "") << ". */\n";
    if (bytes == 1)
      os << "  params->chunk_begin = lo;\n"
         << "  params->chunk_end = hi;\n";
    else
      os << "  params->chunk_begin = lo / " << bytes << ";\n"
         << "  params->chunk_end = hi / " << bytes << " + (hi % " << bytes
         << " != 0)" << (extra ? " + 1" : "") << ";\n";
    if (const int64_t k = stridedBatch(plan, true); k > 1)
      os << "  /* " << k << " chunks a thread. */\n"
         << "  threads = (params->chunk_end - params->chunk_begin + " << k - 1
         << ") / " << k << ";\n";
    else
      os << "  threads = params->chunk_end - params->chunk_begin;\n";
    if (extra) {
      // What computeLaunch gives (callSourceBounds), saturated alike.
      int64_t lo1 = 0, hi1 = 0;
      callSourceBounds(l, 1, lo1, hi1);
      const int64_t e = l.extent;
      os << "  /* The origin offsets the instances span: loads stay inside. "
            "*/\n"
         << "  params->src_lo = " << lit(lo1) << ";\n"
         << "  params->src_hi = " << lit(hi1) << ";\n";
      if (e > 0)
        os << "  if (count - 1 > " << lit((kMax - std::max<int64_t>(hi1, 0)) / e)
           << ")\n"
           << "    params->src_hi = " << lit(kMax) << ";\n"
           << "  else if (count > 1)\n"
           << "    params->src_hi += (count - 1) * " << lit(e) << ";\n";
      else if (e < 0)
        os << "  if (count - 1 > "
           << lit((kMax - std::max<int64_t>(-lo1, 0)) /
                  (e == std::numeric_limits<int64_t>::min() ? kMax : -e))
           << ")\n"
           << "    params->src_lo = " << lit(std::numeric_limits<int64_t>::min())
           << ";\n"
           << "  else if (count > 1)\n"
           << "    params->src_lo += (count - 1) * " << lit(e) << ";\n";
    }
  } else if (nu == 0) {
    os << "  return CUDA_ERROR_INVALID_VALUE; /* the plan has no work units "
          "*/\n";
  } else {
    os << "  {\n"
       << "    /* The (instance, unit) items: the first item ending "
          "after lo\n"
       << "       and the first starting at hi or later (binary searches). "
          "*/\n"
       << "    long long items, a = 0, b, m, u;\n"
       << "    if (count > " << lit(kMax / nu) << ")\n"
       << "      return CUDA_ERROR_INVALID_VALUE; /* too many work items */\n"
       << "    items = count * " << lit(nu) << ";\n"
       << "    b = items;\n"
       << "    while (a < b) {\n"
       << "      m = a + (b - a) / 2;\n"
       << "      u = 4 * (m % " << nu << ");\n"
       << "      if ((m / " << nu << ") * " << lit(l.size) << " + " << p
       << "_units[u] + " << p << "_units[u + 2] > lo)\n"
       << "        b = m;\n"
       << "      else\n"
       << "        a = m + 1;\n"
       << "    }\n"
       << "    params->first_item = a;\n"
       << "    b = items;\n"
       << "    while (a < b) {\n"
       << "      m = a + (b - a) / 2;\n"
       << "      u = 4 * (m % " << nu << ");\n"
       << "      if ((m / " << nu << ") * " << lit(l.size) << " + " << p
       << "_units[u] >= hi)\n"
       << "        b = m;\n"
       << "      else\n"
       << "        a = m + 1;\n"
       << "    }\n"
       << "    params->num_items = a - params->first_item;\n";
    if (unitsByChunks(plan)) {
      const int64_t g = getChunkUnitsGroup(plan);
      os << "    /* A block per " << g << " items. */\n"
         << "    threads = (params->num_items / " << g
         << " + (params->num_items % " << g << " != 0)) * " << block << ";\n";
    } else {
      os << "    threads = params->num_items > " << lit(kMax / 32) << "\n"
         << "                  ? " << lit(kMax) << "\n"
         << "                  : params->num_items * 32;\n";
    }
    os << "  }\n";
  }
  if (units && nu == 0) {
    os << "}\n";
    emitUnpackLaunchC(plan, p, os);
    return os.str();
  }
  os << "  if (threads == 0)\n"
     << "    return CUDA_SUCCESS;\n";
  if (plan.tileDim >= 0)
    os << "  blocks = threads; /* tiles */\n";
  else
    os << "  blocks = threads / " << block << " + (threads % " << block
       << " != 0);\n";
  emitGridReturn(os);
  emitUnpackLaunchC(plan, p, os);
  return os.str();
}

bool emitHeader(const std::vector<HeaderType> &types,
                const HeaderOptions &options, std::string &out,
                std::string &error) {
  if (!isIdentifier(options.guard)) {
    error =
        "the include guard must be a C identifier, not '" + options.guard + "'";
    return false;
  }
  // Every name the header defines at file scope, so that no two collide
  // (types "a" and "a_true" would both define a_true_lb).
  std::set<std::string> names = {
      "ddtc_generated_image", "ddtc_generated_module", "ddtc_generated_cache",
      "ddtc_generated_load",  "ddtc_generated_get",    "ddtc_generated_unload",
      "ddtc_generated_launch"};
  for (const HeaderType &t : types) {
    if (!isIdentifier(t.prefix)) {
      error = "the prefix of '" + t.name + "' is not a C identifier: '" +
              t.prefix + "'";
      return false;
    }
    for (const char *suffix :
         {"_size", "_extent", "_lb", "_true_lb", "_true_extent", "_cubin",
          "_ptx", "_units", "_params", "_launch_config",
          "_unpack_launch_config", "_module_cache",
          "_image", "_load", "_unload", "_pack", "_unpack"})
      if (!names.insert(t.prefix + suffix).second) {
        error = "the header would define '" + t.prefix + suffix +
                "' twice (type '" + t.name +
                "'): choose other names or "
                "another --prefix";
        return false;
      }
    int block = t.plan.threadsPerBlock;
    if (block <= 0 || block % 32 != 0 || block > 1024) {
      error = "the plan of '" + t.name +
              "' has threads per block that are not a multiple of 32 up to "
              "1024: " +
              std::to_string(block);
      return false;
    }
    if (t.cubin.empty() || t.ptx.empty()) {
      error = "no cubin or no PTX for '" + t.name + "'";
      return false;
    }
  }

  std::ostringstream os;
  os << "/* GPU pack and unpack of " << types.size()
     << " MPI datatype(s), generated by ddtc " << options.version;
  if (!options.sourceName.empty())
    os << "\n * from " << commentText(options.sourceName);
  os << ". Do not edit.\n"
     << " *\n"
     << " * The kernels are embedded as a cubin for " << options.arch
     << " and as PTX for " << options.ptxArch << ",\n"
     << " * which the driver compiles for other GPUs. Compile this header "
        "with any C99\n"
     << " * or C++11 compiler and link with -lcuda: nothing of ddtc is needed "
        "at run\n"
     << " * time.\n"
     << " *\n"
     << " * Types:\n";
  for (const HeaderType &t : types) {
    const KernelPlan &pl = t.plan;
    os << " *   " << commentText(t.name) << " = " << commentText(t.description)
       << "\n"
       << " *     size " << pl.layout.size << ", extent " << pl.layout.extent
       << ", lb " << pl.layout.lb << "; " << getKernelFamilyName(pl.family)
       << " family, width " << pl.width << ", shape " << kernelShapeKey(pl)
       << "\n"
       << " *     " << t.prefix << "_pack, " << t.prefix << "_unpack\n";
  }
  os << " *\n"
     << " * For each type, with <p> its prefix:\n"
     << " *\n"
     << " *   CUresult <p>_pack(const void *origin, long long count, long "
        "long lo,\n"
     << " *                     long long hi, void *packed, CUstream stream, "
        "int max_ctas);\n"
     << " *   CUresult <p>_unpack(void *origin, long long count, long long "
        "lo,\n"
     << " *                       long long hi, const void *packed, CUstream "
        "stream,\n"
     << " *                       int max_ctas);\n"
     << " *\n"
     << " * move the packed bytes [lo, hi) of `count` consecutive instances "
        "(instance i\n"
     << " * starts i * extent bytes after `origin`, the address of "
        "displacement 0, as\n"
     << " * in MPI) to or from `packed`, which holds packed byte lo at "
        "packed[0]. The\n"
     << " * bytes are those MPI_Pack produces; lo = 0, hi = count * size "
        "moves all.\n"
     << " * The kernel is enqueued on `stream` and the call returns without "
        "waiting.\n"
     << " * Both buffers must be device, managed or mapped pinned host "
        "memory of the\n"
     << " * current context's GPU; each destination byte is written once and "
        "never\n"
     << " * read. max_ctas caps the blocks of the launch (0: as many as the "
        "work\n"
     << " * needs). lo == hi does nothing. Errors: CUDA_ERROR_INVALID_VALUE "
        "for a\n"
     << " * negative count or max_ctas, a range outside the packed bytes or "
        "a null\n"
     << " * `packed`; CUDA_ERROR_INVALID_CONTEXT without a current context; "
        "else the\n"
     << " * error of the driver call that failed.\n"
     << " *\n"
     << " * The kernels are loaded into a context on first use (cubin, else "
        "PTX) and\n"
     << " * kept, once per file that includes this header; <p>_load() "
        "loads them\n"
     << " * ahead, <p>_unload() frees them (before destroying the context). "
        "Also:\n"
     << " * <p>_size(), _extent(), _lb(), _true_lb(), _true_extent() "
        "(MPI_Type_size,\n"
     << " * MPI_Type_get_extent, MPI_Type_get_true_extent), the images "
        "<p>_cubin and\n"
     << " * <p>_ptx (NUL-terminated), and <p>_launch_config() and\n"
     << " * <p>_unpack_launch_config(), the launch of one pack or unpack "
        "call.\n"
     << " */\n\n"
     << "#ifndef " << options.guard << "\n"
     << "#define " << options.guard << "\n\n"
     << "#include <cuda.h>\n"
     << "#include <stddef.h>\n\n"
     << "#ifdef __cplusplus\n"
     << "extern \"C\" {\n"
     << "#endif\n\n"
     << kCommon;

  for (const HeaderType &t : types) {
    const std::string &p = t.prefix;
    const KernelPlan &pl = t.plan;
    const bool hasUnits = pl.family == KernelFamily::Units && !pl.units.empty();
    os << "\n/*===--- " << commentText(t.name) << ": "
       << commentText(t.description, 200) << " ---===*/\n\n";
    auto constant = [&](const char *what, int64_t v, const char *comment) {
      os << "/* " << comment << " */\n"
         << "DDTC_GENERATED_FUNCTION long long " << p << "_" << what
         << "(void) { return " << lit(v) << "; }\n";
    };
    constant("size", pl.layout.size, "Packed bytes of one instance.");
    constant("extent", pl.layout.extent, "Distance between instances.");
    constant("lb", pl.layout.lb, "The lower bound.");
    constant("true_lb", t.trueLb, "The first byte one instance touches.");
    constant("true_extent", t.trueExtent,
             "The span of the bytes one instance touches.");
    os << "\n/* The kernels for " << options.arch << " (" << t.cubin.size()
       << " bytes). */\n"
       << "static const unsigned char " << p << "_cubin[" << t.cubin.size()
       << "] DDTC_GENERATED_DATA = {\n";
    writeBytes(os, t.cubin, false);
    os << "};\n\n/* The kernels as PTX for " << options.ptxArch
       << ", NUL-terminated. */\n"
       << "static const unsigned char " << p << "_ptx[" << t.ptx.size() + 1
       << "] DDTC_GENERATED_DATA = {\n";
    writeBytes(os, t.ptx, true);
    os << "};\n\n";
    if (hasUnits) {
      std::vector<int64_t> table = encodeUnitTable(pl);
      os << "/* The work units of one instance: {packed, src, length, wide} "
            "each. */\n"
         << "static const long long " << p << "_units[" << table.size()
         << "] DDTC_GENERATED_DATA = {\n";
      for (size_t i = 0; i < table.size(); i += 4)
        os << "  " << lit(table[i]) << ", " << lit(table[i + 1]) << ", "
           << lit(table[i + 2]) << ", " << lit(table[i + 3]) << ",\n";
      os << "};\n\n";
    }
    os << emitHostLaunchC(pl, p) << "\n";
    os << "DDTC_GENERATED_FUNCTION ddtc_generated_cache *" << p
       << "_module_cache(void) {\n"
       << "  static ddtc_generated_cache cache;\n"
       << "  return &cache;\n"
       << "}\n\n"
       << "DDTC_GENERATED_FUNCTION const ddtc_generated_image *" << p
       << "_image(void) {\n"
       << "  static const ddtc_generated_image image = {\n"
       << "      " << p << "_cubin, " << p << "_ptx, \"" << p << "_pack\", \""
       << p << "_unpack\",\n"
       << "      " << (hasUnits ? p + "_units" : "NULL") << ", "
       << (hasUnits ? "sizeof " + p + "_units" : "0") << "};\n"
       << "  return &image;\n"
       << "}\n\n"
       << "/* Loads the kernels into the current context now (the first "
          "pack or\n"
       << "   unpack does otherwise). */\n"
       << "DDTC_GENERATED_FUNCTION CUresult " << p << "_load(void) {\n"
       << "  ddtc_generated_module m;\n"
       << "  return ddtc_generated_get(" << p << "_module_cache(), " << p
       << "_image(), &m);\n"
       << "}\n\n"
       << "/* Unloads the kernels from the current context. */\n"
       << "DDTC_GENERATED_FUNCTION CUresult " << p << "_unload(void) {\n"
       << "  return ddtc_generated_unload(" << p << "_module_cache());\n"
       << "}\n\n";
    for (bool pack : {true, false}) {
      os << "DDTC_GENERATED_FUNCTION CUresult " << p
         << (pack ? "_pack" : "_unpack") << "(\n"
         << "    " << (pack ? "const void *origin" : "void *origin")
         << ", long long count, long long lo, long long hi,\n"
         << "    " << (pack ? "void *packed" : "const void *packed")
         << ", CUstream stream, int max_ctas) {\n"
         << "  " << p << "_params params;\n"
         << "  unsigned int grid, block;\n"
         << "  CUresult r =\n"
         << "      " << p
         << (pack ? "_launch_config" : "_unpack_launch_config")
         << "(count, lo, hi, max_ctas, &grid, &block,\n"
         << "                         &params);\n"
         << "  if (r != CUDA_SUCCESS || grid == 0)\n"
         << "    return r;\n"
         << "  if (packed == NULL)\n"
         << "    return CUDA_ERROR_INVALID_VALUE;\n"
         << "  return ddtc_generated_launch(" << p << "_module_cache(),\n"
         << "                               " << p << "_image(), "
         << (pack ? 1 : 0) << ", origin, packed,\n"
         << "                               &params, grid, block, stream);\n"
         << "}\n\n";
    }
  }
  os << "#ifdef __cplusplus\n"
     << "} /* extern \"C\" */\n"
     << "#endif\n\n"
     << "#endif /* " << options.guard << " */\n";
  out = os.str();
  return true;
}

} // namespace ddtc
