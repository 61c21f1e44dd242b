//===- Peers.cpp - Which ranks share this host and can use CUDA IPC -------===//
//
// At MPI_Init every rank tells the others its host (the host name and the
// kernel's boot id, hashed) and whether its driver offers CUDA IPC. Device
// messages to a rank of the same host may then go through IPC; if opening
// a peer's memory fails anyway (another container, a driver that refuses),
// that peer is dropped to host memory for the rest of the run, said once.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include "ddtc/Core/Hash.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <memory>

namespace ddtc::mpi {
namespace {

struct PeerInfo {
  uint64_t host = 0;
  int32_t ipc = 0;
  int32_t unused = 0;
};

int me = -1;
std::atomic<long long> fallbacks{0};
std::vector<PeerInfo> peers;
std::unique_ptr<std::atomic<bool>[]> dropped;
std::unique_ptr<std::atomic<bool>[]> unpushable; // dropPushPeer
std::unique_ptr<std::atomic<uint64_t>[]> receiveGpus; // notePeerReceiveGpu

uint64_t hostHash() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string id = name;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  id += std::string(std::istreambuf_iterator<char>(boot), {});
  return hashBytes(id.data(), id.size()).lo;
}

} // namespace

void initPeers() {
  PMPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (!settings().handshake || !settings().ipc ||
      settings().protocol == Protocol::Eager ||
      settings().protocol == Protocol::Staged)
    return;
  int n = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &n);
  PeerInfo mine;
  mine.host = hostHash();
  mine.ipc = haveDriver() && haveIpc();
  std::vector<PeerInfo> all(static_cast<size_t>(n));
  if (PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine,
                     MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS)
    return;
  dropped.reset(new std::atomic<bool>[static_cast<size_t>(n)]);
  unpushable.reset(new std::atomic<bool>[static_cast<size_t>(n)]);
  receiveGpus.reset(new std::atomic<uint64_t>[static_cast<size_t>(n)]);
  for (int i = 0; i < n; ++i) {
    dropped[i] = unpushable[i] = false;
    receiveGpus[i] = 0;
  }
  peers = std::move(all);
  int local = 0;
  for (const PeerInfo &p : peers)
    local += p.host == mine.host && p.ipc && mine.ipc;
  note(2, "CUDA IPC %s; %d rank(s) of this host can use it",
       mine.ipc ? "available" : "not available", local);
}

int worldRank() { return me; }

long long ipcFallbacks() { return fallbacks.load(); }

bool ipcPeer(int world) {
  if (world < 0 || world >= static_cast<int>(peers.size()) || world == me)
    return false;
  return peers[world].ipc && peers[me].ipc &&
         peers[world].host == peers[me].host &&
         !dropped[world].load(std::memory_order_relaxed);
}

bool pushPeer(int world) {
  return world >= 0 && world < static_cast<int>(peers.size()) &&
         !unpushable[world].load(std::memory_order_relaxed);
}

void dropPushPeer(int world) {
  if (world >= 0 && world < static_cast<int>(peers.size()))
    unpushable[world] = true;
}

void notePeerReceiveGpu(int world, uint64_t gpu) {
  if (world >= 0 && world < static_cast<int>(peers.size()))
    receiveGpus[world].store(gpu, std::memory_order_relaxed);
}

uint64_t peerReceiveGpu(int world) {
  if (world < 0 || world >= static_cast<int>(peers.size()))
    return 0;
  return receiveGpus[world].load(std::memory_order_relaxed);
}

void dropIpcPeer(int world, const std::string &why) {
  if (world < 0 || world >= static_cast<int>(peers.size()))
    return;
  if (!dropped[world].exchange(true))
    fallbacks.fetch_add(1, std::memory_order_relaxed);
  noteOnce("CUDA IPC with rank " + std::to_string(world) +
           " is not possible (" + why +
           "): its device messages go through host memory");
}

} // namespace ddtc::mpi
