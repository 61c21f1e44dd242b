//===- PeerTypes.cpp - Datatypes shipped to the ranks that pack for us ----===//
//
// With DDTC_MPI_IPC_READ=pull the receiver packs from the sender's buffer,
// so it needs the sender's type. The sender names it by a serial number and,
// until that receiver has answered that it keeps it, sends its spec
// expression after the note. Whoever takes the note takes the spec too (so
// no stray message is left on the fragments' tag, whatever the receive);
// a device receive that pulls parses and plans it once and keeps it, by
// sender and serial, until MPI_Finalize. A serial is never reused in
// a process, so a type the sender freed is never taken for a later one.
// Only answers mark a type as kept: two messages of one type in flight
// before the first answer both carry the spec, so no note can arrive
// naming a type its receiver has not seen.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include "TypeObject.h"
#include "ddtc/Core/SpecParser.h"

#include <map>
#include <set>

namespace ddtc::mpi {
namespace {

std::mutex specMutex;
std::mutex keptMutex;
std::set<std::pair<int, uint64_t>> keptByPeer; // sender side
std::mutex typesMutex;
/// Receiver side: a peer's type, as its spec until a device receive needs
/// it, then parsed and planned.
struct PeerType {
  std::string spec;
  ddtc_type type = nullptr;
};
std::map<std::pair<int, uint64_t>, PeerType> peerTypes;

} // namespace

const std::string &typeSpec(TypeInfo &info) {
  std::lock_guard<std::mutex> lock(specMutex);
  if (info.specTried || !info.type)
    return info.spec;
  info.specTried = true;
  // Checked here, once, so that a receiver never meets a spec it cannot
  // read (it would drop this rank to host memory): a type whose spec does
  // not parse back to an equal tree is not pulled.
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

void keepPeerSpec(int world, uint64_t serial, std::string spec) {
  std::lock_guard<std::mutex> lock(typesMutex);
  PeerType &t = peerTypes[{world, serial}];
  if (!t.type)
    t.spec = std::move(spec);
}

ddtc_type peerType(int world, uint64_t serial, std::string &why) {
  std::lock_guard<std::mutex> lock(typesMutex);
  auto it = peerTypes.find({world, serial});
  if (it == peerTypes.end()) {
    why = "type " + std::to_string(serial) + " of rank " +
          std::to_string(world) + " is not known here";
    return nullptr;
  }
  PeerType &t = it->second;
  if (t.type)
    return t.type;
  if (ddtc_type_from_spec(t.spec.c_str(), nullptr, &t.type) != DDTC_SUCCESS ||
      ddtc_type_commit(t.type) != DDTC_SUCCESS) {
    why = ddtc_last_error();
    ddtc_type_free(&t.type);
    peerTypes.erase(it);
    return nullptr;
  }
  t.spec.clear();
  t.spec.shrink_to_fit();
  return t.type;
}

void clearPeerTypes() {
  {
    std::lock_guard<std::mutex> lock(typesMutex);
    for (auto &[key, t] : peerTypes)
      ddtc_type_free(&t.type);
    peerTypes.clear();
  }
  std::lock_guard<std::mutex> lock(keptMutex);
  keptByPeer.clear();
}

} // namespace ddtc::mpi
