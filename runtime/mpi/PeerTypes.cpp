//===- PeerTypes.cpp - Datatypes shipped to the ranks that pack for us ----===//
//
// With DDTC_MPI_IPC_READ=pull the receiver packs from the sender's buffer,
// so it needs the sender's type. The sender names it by a serial number and,
// until that receiver has answered that it keeps it, sends its spec
// expression after the note. Whoever takes the note takes the spec too (so
// no stray message is left on the fragments' tag, whatever the receive);
// a device receive that pulls parses and plans it once and keeps it, by
// sender and serial (at most DDTC_MPI_PEER_TYPES of them, the least
// recently used dropped first). A serial is never reused in a process, so a
// type the sender freed is never taken for a later one. A note naming a
// type the receiver dropped is answered "host fragments, type unknown": the
// sender moves that message through host memory and sends the spec with
// its next note.
// Only answers mark a type as kept: two messages of one type in flight
// before the first answer both carry the spec, so a note names no type its
// receiver has not seen (only, at most, one it dropped since).
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include "TypeObject.h"
#include "ddtc/Core/SpecParser.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace ddtc::mpi {
namespace {

std::mutex specMutex;
std::mutex keptMutex;
std::atomic<long long> resent{0};
std::set<std::pair<int, uint64_t>> keptByPeer; // sender side
std::set<std::pair<int, uint64_t>> offered;    // sender side, long specs
std::mutex typesMutex;
/// Receiver side: a peer's type, as its spec until a device receive needs
/// it, then parsed and planned; `used` orders them for dropping.
struct PeerType {
  std::string spec;
  std::shared_ptr<ddtc_type_s> type;
  uint64_t used = 0;
};
std::map<std::pair<int, uint64_t>, PeerType> peerTypes;
uint64_t uses = 0;

void freeType(ddtc_type_s *t) { ddtc_type_free(&t); }

/// Drops the least recently used types while more than the limit are kept
/// (a transfer that uses one keeps its own reference). Requires typesMutex.
void trimTypes() {
  const size_t most = static_cast<size_t>(std::max(settings().peerTypes, 1));
  while (peerTypes.size() > most) {
    auto oldest = peerTypes.begin();
    for (auto it = peerTypes.begin(); it != peerTypes.end(); ++it)
      if (it->second.used < oldest->second.used)
        oldest = it;
    note(3, "dropped type %llu of rank %d (more than %d peers' types kept)",
         static_cast<unsigned long long>(oldest->first.second),
         oldest->first.first, settings().peerTypes);
    peerTypes.erase(oldest);
  }
}

} // namespace

const std::string &typeSpec(TypeInfo &info) {
  std::lock_guard<std::mutex> lock(specMutex);
  if (info.specTried || !info.type)
    return info.spec;
  info.specTried = true;
  // Checked here, once, so that a receiver never meets a spec it cannot
  // read (every message of the type would then go through host memory, its
  // spec sent again each time): a type whose spec does not parse back to an
  // equal tree is not pulled.
  std::string spec = "t = " + printSpecExpr(*info.type->type);
  SpecFile file;
  std::string error;
  if (parseSpec(spec, "<pulled type>", file, error) &&
      file.bindings.size() == 1 &&
      equalTrees(*file.bindings[0].type, *info.type->type))
    info.spec = std::move(spec);
  else
    note(2, "a datatype is not pulled: its spec does not read back (%s)",
         error.empty() ? "another tree" : error.c_str());
  return info.spec;
}

bool peerKeepsType(int world, uint64_t serial) {
  std::lock_guard<std::mutex> lock(keptMutex);
  return keptByPeer.count({world, serial}) != 0;
}

void notePeerKeepsType(int world, uint64_t serial) {
  std::lock_guard<std::mutex> lock(keptMutex);
  keptByPeer.insert({world, serial});
}

bool offeredBefore(int world, uint64_t serial) {
  std::lock_guard<std::mutex> lock(keptMutex);
  // Bounded: an application making endless types offers each twice.
  if (offered.size() >= 65536)
    offered.clear();
  return !offered.insert({world, serial}).second;
}

void keepPeerSpec(int world, uint64_t serial, std::string spec) {
  std::lock_guard<std::mutex> lock(typesMutex);
  PeerType &t = peerTypes[{world, serial}];
  t.used = ++uses;
  if (!t.type)
    t.spec = std::move(spec);
  trimTypes();
}

std::shared_ptr<ddtc_type_s> peerType(int world, uint64_t serial,
                                      std::string &why) {
  std::lock_guard<std::mutex> lock(typesMutex);
  auto it = peerTypes.find({world, serial});
  if (it == peerTypes.end()) {
    why = "type " + std::to_string(serial) + " of rank " +
          std::to_string(world) + " is not kept here";
    return nullptr;
  }
  PeerType &t = it->second;
  t.used = ++uses;
  if (t.type)
    return t.type;
  ddtc_type made = nullptr;
  if (ddtc_type_from_spec(t.spec.c_str(), nullptr, &made) != DDTC_SUCCESS ||
      ddtc_type_commit(made) != DDTC_SUCCESS) {
    why = ddtc_last_error();
    ddtc_type_free(&made);
    peerTypes.erase(it);
    return nullptr;
  }
  t.type = std::shared_ptr<ddtc_type_s>(made, freeType);
  t.spec.clear();
  t.spec.shrink_to_fit();
  return t.type;
}

void forgetPeerKeepsType(int world, uint64_t serial) {
  resent.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(keptMutex);
  keptByPeer.erase({world, serial});
}

long long ipcSpecsResent() { return resent.load(); }

void clearPeerTypes() {
  {
    std::lock_guard<std::mutex> lock(typesMutex);
    peerTypes.clear();
  }
  std::lock_guard<std::mutex> lock(keptMutex);
  keptByPeer.clear();
  offered.clear();
}

} // namespace ddtc::mpi
