//===- TypeObject.cpp - Committing types and launching their kernels ------===//
//
// Which kernel a call runs: the specialized one once its cache entry is
// ready; until then a generic kernel built into the library: the nest
// kernels (one launch per nest) for a strided layout, whatever its size;
// the work-unit kernel of the type's access width for any other layout whose
// unit table is not too large. Otherwise the call waits for the compile.
//===----------------------------------------------------------------------===//

#include "TypeObject.h"

#include "BuiltinKernels.h"
#include "Config.h"
#include "GenericPlan.h"
#include "HostStaging.h"
#include "PlanCache.h"

#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/UnitsChunkKernel.h"

#include "ddtc/Core/PackRange.h"

#include <cstring>
#include <unordered_map>

namespace ddtc::rt {

using namespace cu;

namespace {

/// The architecture a commit compiles for: the current GPU's, else the
/// configured default.
int commitArchitecture() {
  if (int arch = deviceArch())
    return arch;
  return std::stoi(config().defaultArch);
}

/// Makes t.nests or t.generic on first need. Requires t.m.
void ensureGenericPlan(ddtc_type_s &t) {
  if (t.genericTried)
    return;
  t.genericTried = true;
  if (t.specialized->family == KernelFamily::Units) {
    t.generic = t.specialized; // same kernels, same table
    return;
  }
  // A strided layout: its nests describe it whatever its number of blocks,
  // with no table to build.
  std::vector<Nest> nests;
  std::string why;
  if (splitIntoNests(t.specialized->layout, nests, why)) {
    t.nests = std::make_shared<const std::vector<Nest>>(std::move(nests));
    return;
  }
  logVerbose("type " + t.name + ": no nest kernel (" + why +
             "); trying the work-unit kernels");
  KernelPlan plan;
  if (!makeUnitsPlan(t.specialized->layout, config().genericMaxUnits, plan)) {
    logVerbose("type " + t.name + ": no generic kernel (more than " +
               std::to_string(config().genericMaxUnits) +
               " work units; DDTC_GENERIC_MAX_UNITS raises the limit)");
    return;
  }
  if (config().unpackOrder)
    orderUnpackUnits(plan);
  t.generic = std::make_shared<const KernelPlan>(std::move(plan));
}

/// Index of a nest kernel's width in TypeOnContext::nest.
int widthIndex(int width) { return __builtin_ctz(static_cast<unsigned>(width)); }

/// The built-in work-unit kernel that serves `t` on sm_`arch`, or null (also
/// when the nest kernels serve it). Requires t.m.
const BuiltinKernel *unitsKernel(ddtc_type_s &t, int arch) {
  ensureGenericPlan(t);
  return t.generic ? findBuiltinGeneric(kernelShapeKey(*t.generic), arch)
                   : nullptr;
}

/// Whether a built-in generic kernel serves `t` on sm_`arch`. Requires t.m.
bool hasGeneric(ddtc_type_s &t, int arch) {
  ensureGenericPlan(t);
  if (t.nests) {
    for (const Nest &n : *t.nests)
      if (!findBuiltinGeneric(nestShapeKey(n.width), arch))
        return false;
    return true;
  }
  return unitsKernel(t, arch) != nullptr;
}

ArchKernels *findKernels(ddtc_type_s &t, int arch) {
  for (const std::unique_ptr<ArchKernels> &k : t.kernels)
    if (k->arch == arch)
      return k.get();
  return nullptr;
}

/// A new entry of t.kernels: the handle's spare first.
std::unique_ptr<ArchKernels> newArchKernels(ddtc_type_s &t) {
  if (t.spareKernels)
    return std::move(t.spareKernels);
  return std::make_unique<ArchKernels>();
}

/// Asks the cache for the specialized kernels of `t` on sm_`arch`.
/// Requires t.m.
ArchKernels *addKernels(ddtc_type_s &t, int arch, bool wait) {
  auto k = newArchKernels(t);
  k->arch = arch;
  k->entry =
      KernelCache::get().acquire(*t.specialized, arch, wait, &k->memoryHit);
  t.kernels.push_back(std::move(k));
  return t.kernels.back().get();
}

bool isUnits(const KernelPlan &p) { return p.family == KernelFamily::Units; }

/// Whether the nest kernels serve `t` better than its own kernels
/// (nestsBeatPlan). Requires t.m.
bool nestsServeBetter(ddtc_type_s &t, int arch) {
  return t.specialized && !isUnits(*t.specialized) && hasGeneric(t, arch) &&
         t.nests && nestsBeatPlan(*t.specialized, *t.nests);
}

/// Gives `t` the kernels an earlier commit of an equal tree took (a memory
/// hit of the kernel cache). Requires t.m.
ArchKernels *addKnownKernels(ddtc_type_s &t, int arch,
                             std::shared_ptr<KernelEntry> entry) {
  auto k = newArchKernels(t);
  k->arch = arch;
  k->entry = std::move(entry);
  k->memoryHit = true;
  t.kernels.push_back(std::move(k));
  return t.kernels.back().get();
}

struct Selected {
  const KernelPlan *plan = nullptr;
  const LoadedModule *module = nullptr;
  CUdeviceptr table = 0;
  bool specialized = false;
  /// Set instead of plan and module when the nest kernels serve the call.
  const std::vector<Nest> *nests = nullptr;
  const LoadedModule *const *nestModules = nullptr;
};

/// Loads built-in kernel `k`, whose kernels are `<prefix>_pack` and
/// `<prefix>_unpack` (and `<prefix>_copy` for the nest kernels), on `dc`'s
/// context (once: loadModule keeps it under the kernel's id).
Status loadBuiltinModule(const DriverAPI &api, DeviceContext &dc,
                         const BuiltinKernel &k, const std::string &prefix,
                         const LoadedModule *&out) {
  return loadModule(api, dc, static_cast<uint64_t>(&k - kBuiltinKernels) + 1,
                    k.data, nullptr, prefix + "_pack", prefix + "_unpack", out,
                    prefix + "_copy");
}

/// Loads the built-in nest kernels `t`'s nests use on `tc`'s context.
/// Requires t.m.
Status loadNestKernels(const ddtc_type_s &t, const DriverAPI &api,
                       TypeOnContext &tc) {
  for (const Nest &n : *t.nests) {
    const LoadedModule *&slot = tc.nest[widthIndex(n.width)];
    if (slot)
      continue;
    const BuiltinKernel *k = findBuiltinGeneric(nestShapeKey(n.width),
                                                tc.dc->arch);
    if (!k)
      return Status::error(DDTC_ERROR_INTERNAL,
                           "no built-in nest kernel of width " +
                               std::to_string(n.width));
    Status s =
        loadBuiltinModule(api, *tc.dc, *k, nestKernelPrefix(n.width), slot);
    if (!s.ok())
      return s;
  }
  return Status::success();
}

/// The built-in kernels of shape `key` (symbols `prefix`_*), loaded on
/// `dc`'s context once and kept in `slot`, one of the context's own slots:
/// the calls after the first find them there without a look-up of the
/// table.
Status loadIntoSlot(const DriverAPI &api, DeviceContext &dc,
                    const LoadedModule *&slot, const std::string &key,
                    const std::string &prefix, const LoadedModule *&out) {
  {
    std::lock_guard<std::mutex> lock(dc.m);
    if ((out = slot))
      return Status::success();
  }
  const BuiltinKernel *k = findBuiltinGeneric(key, dc.arch);
  if (!k)
    return Status::error(DDTC_ERROR_INTERNAL, "no built-in kernel " + key +
                                                  " for sm_" +
                                                  std::to_string(dc.arch));
  Status s = loadBuiltinModule(api, dc, *k, prefix, out);
  if (s.ok()) {
    std::lock_guard<std::mutex> lock(dc.m);
    slot = out;
  }
  return s;
}

/// The built-in units kernels of `width` that give a thread a 16-byte
/// chunk (every pack into mapped host memory of such a type takes them).
Status loadChunkKernels(const DriverAPI &api, DeviceContext &dc, int width,
                        const LoadedModule *&out) {
  const std::string key =
      kernelShapeKey(makeUnitsShapePlan(width, /*chunks=*/true));
  return loadIntoSlot(api, dc, dc.chunkUnits[widthIndex(width)], key,
                      kernelSymbolPrefix(key), out);
}

/// What `t` keeps on `dc`'s context, made on first need. Requires t.m.
TypeOnContext &onContext(ddtc_type_s &t, DeviceContext &dc) {
  for (TypeOnContext &c : t.contexts)
    if (c.dc == &dc)
      return c;
  t.contexts.push_back(TypeOnContext());
  t.contexts.back().dc = &dc;
  return t.contexts.back();
}

Status select(ddtc_type_s &t, const DriverAPI &api, DeviceContext &dc,
              Selected &sel) {
  std::unique_lock<std::mutex> lock(t.m);
  TypeOnContext *tc = &onContext(t, dc);
  const size_t tcIndex = static_cast<size_t>(tc - t.contexts.data());
  auto uploadOnce = [&](CUdeviceptr &slot, const KernelPlan &plan) {
    return slot ? Status::success() : uploadTable(api, dc, plan, slot);
  };
  // The nest kernels serve the call (loaded into this context once).
  auto selectNests = [&]() -> Status {
    Status s = loadNestKernels(t, api, *tc);
    if (!s.ok())
      return s;
    sel = Selected();
    sel.nests = t.nests.get();
    sel.nestModules = tc->nest;
    return Status::success();
  };
  for (;;) {
    tc = &t.contexts[tcIndex]; // the vector may have grown while unlocked
    if (tc->nestsBetter < 0) {
      tc->nestsBetter = nestsServeBetter(t, dc.arch) ? 1 : 0;
      if (tc->nestsBetter)
        logVerbose("type " + t.name +
                   ": the nest kernels serve it (one run per point of whole "
                   "words: faster than its record period kernels)");
    }
    if (tc->nestsBetter)
      return selectNests();
    if (tc->specialized) {
      sel = {t.specialized.get(), tc->specialized, tc->specializedTable, true};
      return Status::success();
    }
    const JitMode mode = config().jit;
    const bool generic = hasGeneric(t, dc.arch);
    const bool genericOnly = mode == JitMode::Generic && generic;
    if (!tc->kernels) {
      const ArchKernels *k = findKernels(t, dc.arch);
      if (!k && !genericOnly)
        k = addKernels(t, dc.arch, /*wait=*/false);
      tc->kernels = k;
    }
    const ArchKernels *k = tc->kernels;
    if (k && k->entry->ready() && !tc->specializedUnusable &&
        (!genericOnly || isUnits(*t.specialized))) {
      const KernelEntry &e = *k->entry;
      const LoadedModule *m = nullptr;
      Status s =
          loadModule(api, dc, e.id, e.binary.data(),
                     e.unpackBinary.empty() ? nullptr : e.unpackBinary.data(),
                     e.packName, e.unpackName, m);
      if (s.ok() && isUnits(*t.specialized))
        s = uploadOnce(tc->specializedTable, *t.specialized);
      if (s.ok()) {
        tc->specialized = m;
        continue;
      }
      if (!generic)
        return s;
      // Keep serving the type with the generic kernels.
      logVerbose("type " + t.name +
                 ": the specialized kernels cannot be "
                 "used (" +
                 s.message + "); the generic ones serve it");
      tc->specializedUnusable = true;
    }
    if (generic && t.nests)
      return selectNests();
    if (generic) {
      if (!tc->generic) {
        Status s = loadBuiltinModule(
            api, dc, *unitsKernel(t, dc.arch),
            kernelSymbolPrefix(kernelShapeKey(*t.generic)), tc->generic);
        if (!s.ok())
          return s;
      }
      const bool sameTable = t.generic == t.specialized;
      CUdeviceptr &slot = sameTable ? tc->specializedTable : tc->genericTable;
      Status s = uploadOnce(slot, *t.generic);
      if (!s.ok())
        return s;
      sel = {t.generic.get(), tc->generic, slot, false};
      return Status::success();
    }
    if (!k)
      return Status::error(DDTC_ERROR_INTERNAL, "no kernel for type " + t.name);
    if (k->entry->failed())
      return k->entry->failure;
    if (tc->specializedUnusable)
      return Status::error(DDTC_ERROR_INTERNAL,
                           "type " + t.name + ": no usable kernel");
    // Pending and nothing else can serve the call: wait for the compile.
    std::shared_ptr<KernelEntry> entry = k->entry;
    lock.unlock();
    KernelCache::get().wait(entry);
    lock.lock();
  }
}

/// What the memo keeps per tree hash: the specialized plan (with its units,
/// the unit table), shared by every handle of an equal constructor tree in
/// this process, so a new handle of a type seen before skips the planning
/// passes (the in-process cache hit); O(1) figures of the tree it planned
/// that a hit must share; and the kernels the first commit of such a tree
/// took, so that a hit asks neither the driver for the device nor the
/// kernel cache for the shape. After the application has built a large
/// type, the caches of the CPU hold little of that path, and those two
/// lookups cost most of a hit.
struct MemoEntry {
  LayoutInfo layout;
  Kind kind;
  size_t arguments;
  std::shared_ptr<const KernelPlan> plan;
  /// The DDTC_TILES and DDTC_UNPACK_ORDER settings it was planned under
  /// (tests change them).
  bool tiles;
  bool unpackOrder;
  KnownKernels kernels;
};

struct Memo {
  std::mutex m;
  std::unordered_map<Hash128, MemoEntry, Hash128Hasher> entries;
};

Memo &memo() {
  static Memo m;
  return m;
}

/// How many list entries and children the root of a tree has.
size_t rootArguments(const Datatype &t) {
  const TypeArgs &a = t.args();
  return a.blocklens.size() + a.displs.size() + a.sizes.size() +
         a.children.size();
}

bool sameFigures(const MemoEntry &e, const Datatype &t) {
  const LayoutInfo &a = e.layout, &b = t.layout();
  return a.size == b.size && a.lb == b.lb && a.extent == b.extent &&
         a.trueLb == b.trueLb && a.trueExtent == b.trueExtent &&
         e.kind == t.kind() && e.arguments == rootArguments(t) &&
         e.tiles == config().tiles && e.unpackOrder == config().unpackOrder;
}

/// Plans smaller than this (work units plus runs listed) are not written to
/// disk: planning them costs less than reading them back.
constexpr size_t kPlanStoreMinItems = 256;

size_t planItems(const KernelPlan &p) {
  size_t n = p.units.size();
  for (const Segment &s : p.layout.segments)
    n += s.runs.size();
  return n;
}

/// Fails with `error` set when the type cannot be planned (too large a
/// table): nothing is remembered, so each commit of it fails the same way.
/// On a memo hit, `known` gets the kernels an earlier commit of the tree
/// took (none when it took none).
bool planOnce(const TypeRef &type, const std::string &name,
              std::shared_ptr<const KernelPlan> &out, KnownKernels &known,
              std::string &error) {
  // Keyed by the hash each tree keeps (made as it was built: no walk here),
  // and a hit is trusted on that 128-bit hash and the tree's layout figures,
  // with no comparison of the trees: a commit costs the same whatever the
  // type's size. The disk cache trusts the same key (it also checks the
  // plan it reads against the type).
  Memo &mm = memo();
  const Hash128 &key = hashTree(*type);
  {
    std::lock_guard<std::mutex> lock(mm.m);
    if (auto it = mm.entries.find(key);
        it != mm.entries.end() && sameFigures(it->second, *type)) {
      out = it->second.plan;
      known = it->second.kernels;
      return true;
    }
  }
  auto plan = std::make_shared<KernelPlan>();
  const DiskCache *disk = nullptr;
  if (!config().cacheDisabled)
    if (const DiskCache &d = KernelCache::get().planDisk(); d.usable())
      disk = &d;
  PlanOptions options;
  options.tiles = config().tiles;
  if (disk && loadPlan(*disk, key, *type, name, *plan)) {
    ++stats().planDiskHits;
    // The stored plan leaves out the tile choice, which follows the
    // setting of this process.
    if (options.tiles)
      detectTransposeTiles(*plan);
  } else {
    if (!planKernel(*type, *plan, error, options))
      return false;
    if (disk && planItems(*plan) >= kPlanStoreMinItems &&
        storePlan(*disk, key, name, *plan))
      ++stats().planDiskWrites;
  }
  // Derived from the units, so the disk keeps none: made here either way.
  if (config().unpackOrder)
    orderUnpackUnits(*plan);
  out = std::move(plan);
  std::lock_guard<std::mutex> lock(mm.m);
  if (mm.entries.size() >= 4096) // bounded: endless types re-plan
    mm.entries.clear();
  mm.entries[key] = MemoEntry{type->layout(), type->kind(),
                              rootArguments(*type), out, options.tiles,
                              config().unpackOrder, {}};
  return true;
}

/// Keeps the kernels a commit of `type` took for the commits of equal trees
/// after it.
void rememberKernels(const Datatype &type, const KnownKernels &kernels) {
  Memo &mm = memo();
  std::lock_guard<std::mutex> lock(mm.m);
  auto it = mm.entries.find(hashTree(type));
  if (it != mm.entries.end() && sameFigures(it->second, type))
    it->second.kernels = kernels;
}

void copyShape(const std::string &shape, char (&out)[64]) {
  std::strncpy(out, shape.c_str(), sizeof out - 1);
  out[sizeof out - 1] = '\0';
}

} // namespace

Status commitType(ddtc_type_s &t) {
  if (t.committed.load(std::memory_order_acquire))
    return Status::success();
  std::lock_guard<std::mutex> lock(t.m);
  if (t.committed.load(std::memory_order_relaxed))
    return Status::success();
  if (t.type->layout().size == 0) {
    t.empty = true;
    t.committed.store(true, std::memory_order_release);
    return Status::success();
  }
  std::string error;
  KnownKernels known;
  if (!planOnce(t.type, t.name, t.specialized, known, error))
    return Status::error(DDTC_ERROR_UNSUPPORTED_TYPE,
                         "ddtc_type_commit: type " + t.name +
                             " cannot be planned: " + error);
  const JitMode mode = config().jit;
  // An equal tree committed before: its kernels, for the architecture they
  // were taken for. (A process whose GPUs differ in architecture gets the
  // others' kernels at their first call, served by the generic kernels
  // meanwhile.)
  std::shared_ptr<KernelEntry> reused;
  if (known.entry && mode != JitMode::Generic)
    reused = KernelCache::get().reacquire(known.entry, mode == JitMode::Sync);
  t.commitArch = reused ? known.arch : commitArchitecture();
  if (mode == JitMode::Generic && hasGeneric(t, t.commitArch)) {
    t.committed.store(true, std::memory_order_release);
    return Status::success();
  }
  ArchKernels *k = reused ? addKnownKernels(t, known.arch, std::move(reused))
                          : addKernels(t, t.commitArch, mode == JitMode::Sync);
  if (!reused) // none known, or known from before a reset of the cache
    rememberKernels(*t.type, {k->arch, k->entry});
  if (!k->entry->ready()) {
    // Calls will need the generic kernel meanwhile (or instead): prepare its
    // plan now rather than in the first call.
    const bool generic = hasGeneric(t, t.commitArch);
    if (k->entry->failed()) {
      if (!generic) {
        Status failure = k->entry->failure;
        t.kernels.pop_back(); // a later commit asks again
        return failure;
      }
      logVerbose("type " + t.name +
                 " uses its generic kernel: " + k->entry->failure.message);
    }
  }
  t.committed.store(true, std::memory_order_release);
  return Status::success();
}

Status waitType(ddtc_type_s &t) {
  if (!t.committed.load(std::memory_order_acquire))
    return Status::error(DDTC_ERROR_NOT_COMMITTED,
                         "type " + t.name + " is not committed");
  std::shared_ptr<KernelEntry> entry;
  {
    std::lock_guard<std::mutex> lock(t.m);
    if (t.empty)
      return Status::success();
    ArchKernels *k = findKernels(t, t.commitArch);
    // DDTC_JIT=generic never compiles while the generic kernel serves the
    // type: there is nothing to wait for.
    if (!k && config().jit == JitMode::Generic &&
        hasGeneric(t, t.commitArch))
      return Status::success();
    if (!k)
      k = addKernels(t, t.commitArch, /*wait=*/false);
    entry = k->entry;
  }
  KernelCache::get().wait(entry);
  return entry->failed() ? entry->failure : Status::success();
}

Status typeKernelInfo(ddtc_type_s &t, ddtc_kernel_info &info) {
  std::memset(&info, 0, sizeof info);
  if (!t.committed.load(std::memory_order_acquire))
    return Status::error(DDTC_ERROR_NOT_COMMITTED,
                         "type " + t.name + " is not committed");
  std::lock_guard<std::mutex> lock(t.m);
  if (t.empty) {
    info.origin = DDTC_KERNEL_EMPTY;
    return Status::success();
  }
  info.uses_work_units = isUnits(*t.specialized);
  info.unpack_in_origin_order = !t.specialized->unpackUnits.empty();
  info.width = static_cast<int>(t.specialized->width);
  info.arch = t.commitArch;
  info.generic_available = hasGeneric(t, t.commitArch);
  copyShape(kernelShapeKey(*t.specialized), info.shape);
  info.origin = DDTC_KERNEL_NONE;
  if (const ArchKernels *k = findKernels(t, t.commitArch)) {
    const KernelEntry &e = *k->entry;
    if (e.failed()) {
      info.origin = DDTC_KERNEL_FAILED;
    } else if (e.ready()) {
      info.origin = k->memoryHit && e.origin != DDTC_KERNEL_BUILTIN
                        ? DDTC_KERNEL_MEMORY
                        : e.origin;
      info.compile_ms = e.origin == DDTC_KERNEL_COMPILED ? e.compileMs : 0;
      info.disk_load_ms = e.origin == DDTC_KERNEL_DISK ? e.diskLoadMs : 0;
    }
  }
  return Status::success();
}

namespace {

/// The variant of `t` for origins `shift` bytes (1-15) past a 16-byte
/// boundary: the same typemap shifted by `shift` bytes, with the same extent,
/// committed. Packing it from origin - shift moves the very bytes `t` moves
/// from origin, and its plan takes the access widths those addresses allow,
/// where `t`'s kernels, planned for aligned buffers, would take their byte
/// path for every chunk.
Status alignmentVariant(ddtc_type_s &t, int64_t shift, ddtc_type_s *&out) {
  {
    std::lock_guard<std::mutex> lock(t.m);
    if (t.shifted[shift]) {
      out = t.shifted[shift].get();
      return Status::success();
    }
  }
  const LayoutInfo &l = t.type->layout();
  TypeArgs args;
  args.kind = Kind::HIndexedBlock;
  args.blocklen = 1;
  args.displs = {shift};
  args.children = {t.type};
  std::string error;
  TypeRef moved = Datatype::create(std::move(args), error);
  if (moved)
    moved = Datatype::resized(l.lb + shift, l.extent, moved, error);
  if (!moved)
    return Status::error(DDTC_ERROR_INTERNAL,
                         "type " + t.name + " shifted by " +
                             std::to_string(shift) + " bytes: " + error);
  std::unique_ptr<ddtc_type_s> v =
      newTypeHandle(std::move(moved), t.name + "+" + std::to_string(shift));
  v->isVariant = true;
  if (Status s = commitType(*v); !s.ok())
    return s;
  logVerbose("type " + t.name + ": an origin " + std::to_string(shift) +
             " bytes past a 16-byte boundary; its variant for that offset "
             "serves such calls");
  std::lock_guard<std::mutex> lock(t.m);
  if (!t.shifted[shift]) // another thread may have made it meanwhile
    t.shifted[shift] = std::move(v);
  out = t.shifted[shift].get();
  return Status::success();
}

} // namespace

namespace {
thread_local bool knownPointers = false;

/// The driver and the context of the device holding `at`, for a call of
/// `fn` (its name prefixed to a missing driver's message).
Status driverAndContext(const char *fn, const void *at, const DriverAPI *&api,
                        DeviceContext *&dc) {
  Status s = requireDriver(api);
  if (!s.ok()) {
    s.message = std::string(fn) + " needs a GPU: " + s.message;
    return s;
  }
  return currentContext(*api, at, dc);
}

/// The first byte instance 0 of `t` touches at `origin` (origin may be
/// null, as MPI_BOTTOM, with absolute displacements).
const void *firstTouched(const void *origin, const ddtc_type_s &t) {
  return reinterpret_cast<const void *>(
      reinterpret_cast<uintptr_t>(origin) +
      static_cast<uintptr_t>(t.type->layout().trueLb));
}

/// Launches `f` with the four arguments every generic and specialized
/// kernel takes (two buffers, the parameter struct, the unit table).
Status launchKernel(const DriverAPI &api, const char *fn, CUfunction f,
                    const LaunchConfig &cfg, CUdeviceptr a, CUdeviceptr b,
                    CUdeviceptr table, void *stream) {
  void *args[4] = {&a, &b, const_cast<int64_t *>(cfg.params.data()), &table};
  CUresult rc =
      api.cuLaunchKernel(f, static_cast<unsigned>(cfg.grid), 1, 1,
                         static_cast<unsigned>(cfg.block), 1, 1, 0,
                         static_cast<CUstream>(stream), args, nullptr);
  return rc == CUDA_SUCCESS
             ? Status::success()
             : Status::error(DDTC_ERROR_CUDA,
                             std::string(fn) + ": " +
                                 describeError(api, "cuLaunchKernel", rc));
}
} // namespace

KnownPointers::KnownPointers() : outer_(knownPointers) { knownPointers = true; }
KnownPointers::~KnownPointers() { knownPointers = outer_; }
bool pointersKnown() { return knownPointers; }

Status runKernel(bool pack, ddtc_type_s &t, const void *origin, int64_t count,
                 int64_t lo, int64_t hi, const void *packed, void *stream,
                 int maxCtas) {
  const char *fn = pack ? "ddtc_pack" : "ddtc_unpack";
  if (!t.committed.load(std::memory_order_acquire))
    return Status::error(DDTC_ERROR_NOT_COMMITTED,
                         std::string(fn) + ": type " + t.name +
                             " is not committed (call ddtc_type_commit)");
  const LayoutInfo &layout = t.type->layout();
  std::string rangeError;
  if (!checkPackRange(layout.size, count, lo, hi, rangeError))
    return Status::error(DDTC_ERROR_INVALID_ARGUMENT, std::string(fn) + ": " +
                                                          rangeError +
                                                          " of type " + t.name);
  if (maxCtas < 0)
    return Status::error(DDTC_ERROR_INVALID_ARGUMENT,
                         std::string(fn) + ": max_ctas is negative");
  if (lo == hi)
    return Status::success();
  if (!packed)
    return Status::error(DDTC_ERROR_INVALID_ARGUMENT,
                         std::string(fn) + ": the packed buffer is null");
  // An origin less aligned than the type's kernels assume (a pointer into
  // an array, one element past its start): the type's variant for that
  // offset serves the call, so the accesses keep their width. Before the
  // driver's checks, which the variant's call makes for the same bytes.
  const int64_t width = t.specialized ? t.specialized->width : 1;
  const int64_t shift =
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(origin) & 15);
  if (!t.isVariant && config().alignVariants && (shift & (width - 1)) != 0 &&
      !((t.variantsFailed.load(std::memory_order_relaxed) >> shift) & 1)) {
    ddtc_type_s *v = nullptr;
    Status s = alignmentVariant(t, shift, v);
    if (s.ok())
      return runKernel(pack, *v,
                       reinterpret_cast<const unsigned char *>(origin) - shift,
                       count, lo, hi, packed, stream, maxCtas);
    // Said once: the calls after it take the type's own kernels at once.
    t.variantsFailed.fetch_or(static_cast<uint16_t>(1u << shift),
                              std::memory_order_relaxed);
    logVerbose("type " + t.name + ": no variant for its origin's offset (" +
               s.message + "); its own kernels serve the call and the "
               "later ones from that offset");
  }

  const DriverAPI *api = nullptr;
  DeviceContext *dc = nullptr;
  Status s = driverAndContext(fn, packed, api, dc);
  if (!s.ok())
    return s;
  unsigned packedType = 0;
  const bool checkPointers = config().checkPointers && !knownPointers;
  if (checkPointers) {
    s = checkDevicePointer(*api, packed, "packed", &packedType);
    if (s.ok())
      s = checkDevicePointer(*api, firstTouched(origin, t), "origin");
    if (!s.ok()) {
      s.message = std::string(fn) + ": " + s.message;
      return s;
    }
  }
  Selected sel;
  s = select(t, *api, *dc, sel);
  if (!s.ok())
    return s;
  const CUdeviceptr o = reinterpret_cast<uintptr_t>(origin);
  auto launch = [&](const LoadedModule &m, const LaunchConfig &cfg,
                    CUdeviceptr p) {
    return launchKernel(*api, fn, pack ? m.pack : m.unpack, cfg, o, p,
                        sel.table, stream);
  };
  // Moves bytes [from, to) to or from `p`, the address of byte `from`.
  auto run = [&](int64_t from, int64_t to, CUdeviceptr p,
                 UnitsKernels design) -> Status {
    if (sel.nests) {
      // One launch per nest that holds bytes of [from, to), in one stream.
      for (const Nest &n : *sel.nests) {
        LaunchConfig cfg = computeNestLaunch(n, t.specialized->layout.size,
                                             t.specialized->layout.extent,
                                             count, from, to, maxCtas);
        if (!cfg.error.empty())
          return Status::error(DDTC_ERROR_INTERNAL,
                               std::string(fn) + ": " + cfg.error);
        if (cfg.grid == 0)
          continue;
        if (Status s = launch(*sel.nestModules[widthIndex(n.width)], cfg, p);
            !s.ok())
          return s;
      }
      ++stats().genericLaunches;
      return Status::success();
    }
    const LoadedModule *module = sel.module;
    if (design == UnitsKernels::Chunks)
      if (Status s = loadChunkKernels(
              *api, *dc, static_cast<int>(sel.plan->width), module);
          !s.ok())
        return s;
    LaunchConfig cfg =
        computeLaunch(*sel.plan, count, from, to, maxCtas, pack, design);
    if (!cfg.error.empty())
      return Status::error(DDTC_ERROR_INTERNAL,
                           std::string(fn) + ": " + cfg.error);
    if (cfg.grid == 0)
      return Status::success();
    if (Status s = launch(*module, cfg, p); !s.ok())
      return s;
    ++(sel.specialized && design == UnitsKernels::Planned
           ? stats().specializedLaunches
           : stats().genericLaunches);
    return Status::success();
  };
  CUdeviceptr p = reinterpret_cast<uintptr_t>(packed);
  if (!pack)
    return run(lo, hi, p, UnitsKernels::Planned);
  bool unitsByWarps =
      !sel.nests && isUnits(*sel.plan) && !unitsByChunks(*sel.plan);
  // Without the pointer checks, the packed buffer's kind is asked only where
  // it decides the kernels.
  if (!checkPointers && (stagesHostPack(hi - lo, CU_MEMORYTYPE_HOST) ||
                         (unitsByWarps && config().mappedChunks)))
    checkDevicePointer(*api, packed, "packed", &packedType);
  // A large pack into host memory: through device memory and a copy engine.
  if (stagesHostPack(hi - lo, packedType)) {
    bool staged = false;
    s = packThroughDevice(
        *api, *dc, lo, hi, const_cast<void *>(packed),
        static_cast<CUstream>(stream),
        [&](int64_t from, int64_t to, CUdeviceptr at) {
          return run(from, to, at, UnitsKernels::Planned);
        },
        staged);
    if (!s.ok() || staged)
      return s;
  }
  // A pack into mapped host memory of a type whose kernels give a work unit
  // a warp runs the generic chunk kernel of its width instead: its threads
  // store consecutive 16-byte chunks, the long sequential writes the host's
  // link wants, where a warp a unit leaves the ends of every unit to a few
  // lanes.
  bool chunks =
      unitsByWarps && config().mappedChunks && packedType == CU_MEMORYTYPE_HOST;
  return run(lo, hi, p, chunks ? UnitsKernels::Chunks : UnitsKernels::Planned);
}

namespace {
/// The copy side of committed `t`: its stream nest (streamNest), or none.
NestSide copySide(ddtc_type_s &t, int64_t count) {
  std::lock_guard<std::mutex> lock(t.m);
  NestSide side;
  if (!t.specialized)
    return side;
  ensureGenericPlan(t);
  if (t.nests)
    side = {streamNest(*t.nests, t.specialized->layout.size),
            t.specialized->layout.size, t.specialized->layout.extent, count};
  return side;
}

/// Whether `a` and `b` are one type map: equal trees, trusted on their
/// 128-bit hashes and layout figures as the plan memo trusts them (a full
/// comparison would cost every call the size of the tree).
bool sameTypeMap(const ddtc_type_s &a, const ddtc_type_s &b) {
  if (&a == &b)
    return true;
  const LayoutInfo &x = a.type->layout(), &y = b.type->layout();
  return hashTree(*a.type) == hashTree(*b.type) &&
         a.type->kind() == b.type->kind() && x.size == y.size && x.lb == y.lb &&
         x.extent == y.extent && x.trueLb == y.trueLb &&
         x.trueExtent == y.trueExtent;
}

/// The work-unit plan whose copy kernel moves committed `t` between two
/// buffers of its type map: the generic kernels' (a Units plan), else one
/// made once for the copy (a strided type, whose generic kernels are its
/// nests). None where that would take more than DDTC_GENERIC_MAX_UNITS
/// units, or where the units are short: the copy kernel gives a warp a
/// unit, which would leave most lanes of such units idle (their chunk
/// kernels have no copy).
std::shared_ptr<const KernelPlan> copyUnitsPlan(ddtc_type_s &t) {
  std::lock_guard<std::mutex> lock(t.m);
  if (!t.specialized)
    return nullptr;
  ensureGenericPlan(t);
  if (!t.generic && !t.copyUnitsTried) {
    t.copyUnitsTried = true;
    KernelPlan plan;
    if (makeUnitsPlan(t.specialized->layout, config().genericMaxUnits, plan))
      t.copyUnits = std::make_shared<const KernelPlan>(std::move(plan));
  }
  const std::shared_ptr<const KernelPlan> &p =
      t.generic ? t.generic : t.copyUnits;
  return p && !unitsByChunks(*p) ? p : nullptr;
}

/// How ddtc_copy moves a pair: the nest copy kernel between two stream
/// nests (`from`, `to`), else the units copy kernel over `units` between
/// two buffers of one type map.
struct CopyRoute {
  NestSide from, to;
  std::shared_ptr<const KernelPlan> units;
};

/// The route of `src` to `dst`, or why ddtc_copy cannot serve them.
Status copyRoute(ddtc_type_s &src, int64_t srcCount, ddtc_type_s &dst,
                 int64_t dstCount, CopyRoute &route) {
  // By position: the two may be one type.
  ddtc_type_s *notNest = nullptr;
  for (int i = 0; i < 2; ++i) {
    ddtc_type_s *t = i == 0 ? &src : &dst;
    if (!t->committed.load(std::memory_order_acquire))
      return Status::error(DDTC_ERROR_NOT_COMMITTED,
                           "ddtc_copy: type " + t->name +
                               " is not committed (call ddtc_type_commit)");
    NestSide &side = i == 0 ? route.from : route.to;
    side = copySide(*t, i == 0 ? srcCount : dstCount);
    if (!side.nest && !notNest)
      notNest = t;
  }
  if (!notNest)
    return Status::success();
  if (sameTypeMap(src, dst) && (route.units = copyUnitsPlan(src)))
    return Status::success();
  return Status::error(
      DDTC_ERROR_UNSUPPORTED_TYPE,
      "ddtc_copy: type " + notNest->name +
          " is not one strided nest whose blocks follow each other in the "
          "packed stream, and the two types are not one type map with a "
          "work-unit plan (pack it and unpack it instead)");
}
} // namespace

/// The built-in nest kernels of `width` with their copy kernel (ddtc_copy).
Status loadCopyKernels(const DriverAPI &api, DeviceContext &dc, int width,
                       const LoadedModule *&out) {
  Status s = loadIntoSlot(api, dc, dc.nestCopy[widthIndex(width)],
                          nestShapeKey(width), nestKernelPrefix(width), out);
  if (s.ok() && !out->copy)
    return Status::error(DDTC_ERROR_INTERNAL,
                         "ddtc_copy: the built-in nest kernels of width " +
                             std::to_string(width) + " have no copy kernel");
  return s;
}

Status copySupported(ddtc_type_s &src, ddtc_type_s &dst) {
  CopyRoute route;
  return copyRoute(src, 1, dst, 1, route);
}

bool copiesInWords(ddtc_type_s &t) {
  CopyRoute route;
  if (!copyRoute(t, 1, t, 1, route).ok())
    return false;
  if (route.units)
    return route.units->width >= 4;
  return route.from.nest->width >= 4 || route.from.nest->length % 16 != 0;
}

namespace {
/// The fields the 2-D and the 3-D copy descriptors share for row block `r`
/// from the instances at `a` to those at `b`: one plane of its rows.
template <typename Copy>
void setPlaneRows(Copy &p, const RowBlock &r, CUdeviceptr a, CUdeviceptr b) {
  p.srcMemoryType = p.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.srcDevice = a + static_cast<CUdeviceptr>(r.srcOffset);
  p.dstDevice = b + static_cast<CUdeviceptr>(r.dstOffset);
  p.srcPitch = static_cast<size_t>(r.srcPitch);
  p.dstPitch = static_cast<size_t>(r.dstPitch);
  p.WidthInBytes = static_cast<size_t>(r.width);
  p.Height = static_cast<size_t>(r.height);
}

/// ddtc_copy by the units copy kernel: `plan`'s units, at the same origin
/// offsets in both buffers, one warp a unit.
Status runUnitsCopy(const DriverAPI &api, DeviceContext &dc,
                    const KernelPlan &plan, ddtc_type_s &src, CUdeviceptr a,
                    CUdeviceptr b, const LaunchConfig &cfg, void *stream) {
  const char *fn = "ddtc_copy";
  const int width = static_cast<int>(plan.width);
  const std::string key = kernelShapeKey(makeUnitsShapePlan(width, false));
  const LoadedModule *m = nullptr;
  Status s = loadIntoSlot(api, dc, dc.unitsCopy[widthIndex(width)], key,
                          kernelSymbolPrefix(key), m);
  if (s.ok() && !m->copy)
    s = Status::error(DDTC_ERROR_INTERNAL,
                      std::string(fn) + ": the built-in units kernels of " +
                          "width " + std::to_string(width) +
                          " have no copy kernel");
  if (!s.ok())
    return s;
  CUdeviceptr table = 0;
  {
    std::lock_guard<std::mutex> lock(src.m);
    TypeOnContext &tc = onContext(src, dc);
    CUdeviceptr &slot = &plan == src.specialized.get() ? tc.specializedTable
                        : &plan == src.generic.get()   ? tc.genericTable
                                                       : tc.copyTable;
    if (!slot && !(s = uploadTable(api, dc, plan, slot)).ok())
      return s;
    table = slot;
  }
  s = launchKernel(api, fn, m->copy, cfg, a, b, table, stream);
  if (s.ok())
    ++stats().genericLaunches;
  return s;
}
} // namespace

Status runCopy(ddtc_type_s &src, const void *srcOrigin, int64_t srcCount,
               ddtc_type_s &dst, void *dstOrigin, int64_t dstCount, int64_t lo,
               int64_t hi, void *stream, int maxCtas) {
  const char *fn = "ddtc_copy";
  CopyRoute route;
  if (Status s = copyRoute(src, srcCount, dst, dstCount, route); !s.ok())
    return s;
  const NestSide &from = route.from, &to = route.to;
  if (maxCtas < 0)
    return Status::error(DDTC_ERROR_INVALID_ARGUMENT,
                         std::string(fn) + ": max_ctas is negative");
  LaunchConfig cfg =
      route.units
          ? computeLaunch(*route.units, std::min(srcCount, dstCount), lo, hi,
                          maxCtas, /*pack=*/true, UnitsKernels::Planned)
          : computeNestCopyLaunch(from, to, lo, hi, maxCtas);
  if (!cfg.error.empty())
    return Status::error(DDTC_ERROR_INVALID_ARGUMENT,
                         std::string(fn) + ": " + cfg.error + " (types " +
                             src.name + " and " + dst.name + ")");
  if (cfg.grid == 0)
    return Status::success();
  const DriverAPI *api = nullptr;
  DeviceContext *dc = nullptr;
  Status s = driverAndContext(fn, dstOrigin, api, dc);
  if (!s.ok())
    return s;
  if (config().checkPointers && !knownPointers) {
    s = checkDevicePointer(*api, firstTouched(dstOrigin, dst), "destination");
    if (s.ok())
      s = checkDevicePointer(*api, firstTouched(srcOrigin, src), "source");
    if (!s.ok()) {
      s.message = std::string(fn) + ": " + s.message;
      return s;
    }
  }
  const CUdeviceptr a = reinterpret_cast<uintptr_t>(srcOrigin);
  const CUdeviceptr b = reinterpret_cast<uintptr_t>(dstOrigin);
  if (route.units)
    return runUnitsCopy(*api, *dc, *route.units, src, a, b, cfg, stream);
  // The copy kernel moves whatever the two sides allow; the module of the
  // narrower side's width serves (every nest module holds one).
  const int width = std::min(from.nest->width, to.nest->width);
  const LoadedModule *m = nullptr;
  s = loadCopyKernels(*api, *dc, width, m);
  if (!s.ok())
    return s;
  auto kernel = [&](int64_t from_, int64_t to_) -> Status {
    LaunchConfig c = from_ == lo && to_ == hi
                         ? cfg
                         : computeNestCopyLaunch(from, to, from_, to_, maxCtas);
    if (!c.error.empty())
      return Status::error(DDTC_ERROR_INTERNAL,
                           std::string(fn) + ": " + c.error);
    if (c.grid == 0)
      return Status::success();
    Status launched = launchKernel(*api, fn, m->copy, c, a, b, 0, stream);
    if (launched.ok())
      ++stats().genericLaunches;
    return launched;
  };
  // Long rows on both sides: a copy engine moves them, the kernel the
  // edges of the range that cut a row.
  std::vector<RowBlock> rows;
  int64_t rowsLo = lo, rowsHi = lo;
  if (!api->cuMemcpy2DAsync || !api->cuMemcpy3DAsync ||
      config().copyEngineRows <= 0 ||
      !splitIntoRowBlocks(from, to, lo, hi, config().copyEngineRows, rows,
                          rowsLo, rowsHi))
    return kernel(lo, hi);
  if (Status e = kernel(lo, rowsLo); !e.ok())
    return e;
  for (const RowBlock &r : rows) {
    // One plane through the 2-D call (cudaMemcpy2DAsync's, which the
    // measurements of copy-engine rows used), several through the 3-D one.
    CUresult rc;
    if (r.depth == 1) {
      CUDA_MEMCPY2D p{};
      setPlaneRows(p, r, a, b);
      rc = api->cuMemcpy2DAsync(&p, static_cast<CUstream>(stream));
    } else {
      CUDA_MEMCPY3D p{};
      setPlaneRows(p, r, a, b);
      p.srcHeight = static_cast<size_t>(r.srcRowsPerPlane);
      p.dstHeight = static_cast<size_t>(r.dstRowsPerPlane);
      p.Depth = static_cast<size_t>(r.depth);
      rc = api->cuMemcpy3DAsync(&p, static_cast<CUstream>(stream));
    }
    if (rc == CUDA_SUCCESS) {
      ++stats().copyEngineCopies;
      continue;
    }
    // A shape the driver refuses: the kernel moves those rows.
    logVerbose(
        std::string(fn) + ": " +
        describeError(
            *api, r.depth == 1 ? "cuMemcpy2DAsync" : "cuMemcpy3DAsync", rc) +
        " for " + std::to_string(r.depth) + " x " + std::to_string(r.height) +
        " rows of " + std::to_string(r.width) +
        " bytes; the copy kernel moves them");
    if (Status e = kernel(r.lo, r.hi); !e.ok())
      return e;
  }
  return kernel(rowsHi, hi);
}

void releaseType(ddtc_type_s &t) {
  std::lock_guard<std::mutex> lock(t.m);
  for (std::unique_ptr<ddtc_type_s> &v : t.shifted)
    if (v)
      releaseType(*v);
  if (t.contexts.empty())
    return;
  std::string error;
  const DriverAPI *api = getDriver(error);
  if (!api)
    return;
  for (TypeOnContext &c : t.contexts) {
    freeDeviceMemory(*api, *c.dc, c.specializedTable);
    freeDeviceMemory(*api, *c.dc, c.genericTable);
    freeDeviceMemory(*api, *c.dc, c.copyTable);
  }
  t.contexts.clear();
}

} // namespace ddtc::rt
