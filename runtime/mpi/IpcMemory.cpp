//===- IpcMemory.cpp - Device memory shared with the processes of a host --===//
//
// Opening a peer's CUDA IPC handle costs milliseconds the first time across
// GPUs (hundreds of microseconds on one GPU) and closing it ~0.2 ms, so
// mappings are opened once per peer allocation and cached. The key is the
// owner, the allocation's base in the owner and its buffer id: an allocation
// freed and made again at the same address has a new buffer id, so a stale
// mapping is never used for it. The cache is bounded (DDTC_MPI_IPC_CACHE
// entries); the least recently used mapping no operation holds is closed
// first.
//
// The rings and staging the pipeline needs come from a pool of device blocks
// (sizes rounded to powers of two, kept for reuse), each exported once.
// Buffers of the user's read or written in place are exported per
// allocation, and the export is kept with the allocation's buffer id.
//===----------------------------------------------------------------------===//

#include "DeviceDriver.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace ddtc::mpi {
namespace {

std::mutex poolMutex;
std::map<size_t, std::vector<DeviceBlock>> pool; // by rounded size

/// Fills the allocation fields of `ref` for `p`; false when the allocation
/// cannot be exported.
bool exportAllocation(const cu::DriverAPI &api, const void *p, IpcRef &ref) {
  cu::CUdeviceptr base = 0;
  unsigned long long bufferId = 0;
  size_t size = 0;
  int attrs[3] = {cu::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                  cu::CU_POINTER_ATTRIBUTE_BUFFER_ID,
                  cu::CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void *data[3] = {&base, &bufferId, &size};
  auto addr = reinterpret_cast<cu::CUdeviceptr>(p);
  if (api.cuPointerGetAttributes(3, attrs, data, addr) != cu::CUDA_SUCCESS ||
      !base)
    return false;
  // Exports of the user's allocations, by (base, buffer id).
  static std::mutex m;
  static std::map<std::pair<uint64_t, uint64_t>, cu::CUipcMemHandle> exports;
  {
    std::lock_guard<std::mutex> lock(m);
    auto it = exports.find({base, bufferId});
    if (it != exports.end()) {
      std::memcpy(ref.handle, &it->second, sizeof ref.handle);
    } else {
      cu::CUipcMemHandle h;
      if (api.cuIpcGetMemHandle(&h, base) != cu::CUDA_SUCCESS)
        return false;
      if (exports.size() > 4096)
        exports.clear(); // old entries describe freed allocations mostly
      exports[{base, bufferId}] = h;
      std::memcpy(ref.handle, &h, sizeof ref.handle);
    }
  }
  ref.base = base;
  ref.bufferId = bufferId;
  ref.size = size;
  ref.offset = addr - base;
  ref.owner = worldRank();
  return true;
}

struct Mapping {
  cu::CUdeviceptr ptr = 0;
  uint64_t size = 0; ///< of the allocation in its owner
  int holds = 0;
  uint64_t lastUse = 0;
  uint64_t id = 0; ///< PeerMapping::key
};
using MapKey = std::tuple<int, uint64_t, uint64_t>; // owner, base, buffer id
std::mutex mapMutex;
std::map<MapKey, Mapping> mappings;
std::map<uint64_t, MapKey> keyOf; // PeerMapping::key -> the map's key
uint64_t useClock = 0, nextKey = 1;

/// Closes least recently used mappings nobody holds until at most `limit`
/// remain (mapMutex held).
void evict(const cu::DriverAPI &api, size_t limit) {
  while (mappings.size() > limit) {
    auto victim = mappings.end();
    for (auto it = mappings.begin(); it != mappings.end(); ++it)
      if (!it->second.holds && (victim == mappings.end() ||
                                it->second.lastUse < victim->second.lastUse))
        victim = it;
    if (victim == mappings.end())
      return; // all in use: the bound is exceeded until some are released
    api.cuIpcCloseMemHandle(victim->second.ptr);
    note(3, "IPC cache: closed a mapping of rank %d",
         std::get<0>(victim->first));
    keyOf.erase(victim->second.id);
    mappings.erase(victim);
  }
}

/// Closes the idle mappings of `ref`'s owner that overlap its allocation
/// (or all of that owner's idle mappings); mapMutex held.
void closeStale(const cu::DriverAPI &api, const IpcRef &ref, bool all = false) {
  for (auto s = mappings.begin(); s != mappings.end();) {
    uint64_t b = std::get<1>(s->first),
             n = std::max<uint64_t>(s->second.size, 1);
    bool overlaps =
        b < ref.base + std::max<uint64_t>(ref.size, 1) && ref.base < b + n;
    if (std::get<0>(s->first) == ref.owner && !s->second.holds &&
        (all || overlaps)) {
      api.cuIpcCloseMemHandle(s->second.ptr);
      keyOf.erase(s->second.id);
      s = mappings.erase(s);
    } else {
      ++s;
    }
  }
}

} // namespace

bool haveIpc() {
  const cu::DriverAPI *api = driver();
  return api && api->cuIpcGetMemHandle && api->cuIpcOpenMemHandle &&
         api->cuIpcCloseMemHandle;
}

bool deviceAcquire(const void *near, size_t bytes, DeviceBlock &block) {
  size_t size = roundSize(bytes);
  {
    std::lock_guard<std::mutex> lock(poolMutex);
    auto &list = pool[size];
    if (!list.empty()) {
      block = list.back();
      list.pop_back();
      return true;
    }
  }
  const cu::DriverAPI *api = driver();
  if (!api || !haveIpc() || !makeContextCurrent(near))
    return false;
  cu::CUdeviceptr p = 0;
  if (api->cuMemAlloc(&p, size) != cu::CUDA_SUCCESS)
    return false;
  block = DeviceBlock{};
  block.ptr = reinterpret_cast<char *>(p);
  block.bytes = size;
  if (!exportAllocation(*api, block.ptr, block.ref)) {
    api->cuMemFree(p);
    block = DeviceBlock{};
    return false;
  }
  note(2, "device pool: %zu bytes allocated and exported", size);
  return true;
}

void deviceRelease(DeviceBlock &block) {
  if (!block.ptr)
    return;
  std::lock_guard<std::mutex> lock(poolMutex);
  pool[block.bytes].push_back(block);
  block = DeviceBlock{};
}

uint64_t gpuOf(const void *p) {
  const cu::DriverAPI *api = driver();
  int ordinal = -1;
  if (!api || !p ||
      api->cuPointerGetAttribute(&ordinal,
                                 cu::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 reinterpret_cast<cu::CUdeviceptr>(p)) !=
          cu::CUDA_SUCCESS ||
      ordinal < 0)
    return 0;
  // Ordinals differ between processes (CUDA_VISIBLE_DEVICES); the PCI
  // address does not. Asked once per ordinal.
  static std::mutex m;
  static std::map<int, uint64_t> known;
  std::lock_guard<std::mutex> lock(m);
  auto it = known.find(ordinal);
  if (it != known.end())
    return it->second;
  int domain = 0, bus = 0, device = 0;
  uint64_t id = 0;
  if (api->cuDeviceGetAttribute(&domain, cu::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
                                ordinal) == cu::CUDA_SUCCESS &&
      api->cuDeviceGetAttribute(&bus, cu::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
                                ordinal) == cu::CUDA_SUCCESS &&
      api->cuDeviceGetAttribute(&device, cu::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID,
                                ordinal) == cu::CUDA_SUCCESS)
    id = (uint64_t{1} << 63) | (static_cast<uint64_t>(domain) << 32) |
         (static_cast<uint64_t>(bus & 0xffff) << 16) |
         static_cast<uint64_t>(device & 0xffff);
  known[ordinal] = id;
  return id;
}

bool exportDevice(const void *p, IpcRef &ref) {
  const cu::DriverAPI *api = driver();
  return api && haveIpc() && exportAllocation(*api, p, ref);
}

bool openPeer(const IpcRef &ref, PeerMapping &m, std::string &why) {
  const cu::DriverAPI *api = driver();
  if (!api || !haveIpc()) {
    why = "the CUDA driver offers no IPC";
    return false;
  }
  MapKey key{ref.owner, ref.base, ref.bufferId};
  std::lock_guard<std::mutex> lock(mapMutex);
  auto it = mappings.find(key);
  if (it == mappings.end()) {
    // A mapping of the same owner whose range meets the new allocation's is
    // of an allocation the owner has freed since (the driver refuses to map
    // the new one while it stays open): closed now unless in use.
    closeStale(*api, ref);
    evict(*api, static_cast<size_t>(settings().ipcCache) - 1);
    cu::CUipcMemHandle h;
    std::memcpy(&h, ref.handle, sizeof h);
    cu::CUdeviceptr p = 0;
    cu::CUresult rc =
        api->cuIpcOpenMemHandle(&p, h, cu::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (rc != cu::CUDA_SUCCESS) {
      // Still refused: close every idle mapping of that owner and try once
      // more (the driver knows of reuses the sizes here cannot show).
      closeStale(*api, ref, /*all=*/true);
      rc = api->cuIpcOpenMemHandle(&p, h,
                                   cu::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    }
    if (rc != cu::CUDA_SUCCESS) {
      why = cu::describeError(*api, "cuIpcOpenMemHandle", rc);
      return false;
    }
    note(3, "IPC cache: opened a mapping of rank %d", ref.owner);
    it = mappings.emplace(key, Mapping{p, ref.size, 0, 0, nextKey++}).first;
    keyOf[it->second.id] = key;
  }
  m.key = it->second.id;
  ++it->second.holds;
  it->second.lastUse = ++useClock;
  m.base = reinterpret_cast<char *>(it->second.ptr);
  return true;
}

void closePeer(PeerMapping &m) {
  if (!m.base)
    return;
  std::lock_guard<std::mutex> lock(mapMutex);
  auto k = keyOf.find(m.key);
  if (k != keyOf.end()) {
    auto it = mappings.find(k->second);
    if (it != mappings.end() && it->second.holds > 0)
      --it->second.holds;
  }
  m = PeerMapping{};
  if (const cu::DriverAPI *api = driver())
    evict(*api, static_cast<size_t>(settings().ipcCache));
}

void trimPeers() {
  const cu::DriverAPI *api = driver();
  {
    std::lock_guard<std::mutex> lock(mapMutex);
    if (api)
      for (auto &[key, m] : mappings)
        api->cuIpcCloseMemHandle(m.ptr);
    mappings.clear();
    keyOf.clear();
  }
  std::lock_guard<std::mutex> lock(poolMutex);
  for (auto &[size, list] : pool)
    for (DeviceBlock &b : list)
      if (api)
        api->cuMemFree(reinterpret_cast<cu::CUdeviceptr>(b.ptr));
  pool.clear();
}

} // namespace ddtc::mpi
