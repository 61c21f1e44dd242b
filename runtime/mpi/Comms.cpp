//===- Comms.cpp - Private communicators and the notes of the pipeline ----===//
//
// The pipelined protocol keeps the wire rule: the user's message is one
// message of the MPI library on the user's communicator, peer and tag. For a
// pipelined message it carries no bytes; a note on the layer's private
// duplicate of that communicator (same peer, same tag) says how many packed
// bytes follow and under which id, and the fragments move on a second
// private duplicate with that id as tag. Every zero-byte message a rank of
// the layer sends on such a communicator is followed by a note, so a
// receiver that matched a zero-byte message always reads the next note of
// that peer and tag: per (peer, tag) both the messages and the notes keep
// their order. Probes read the note ahead (to report the real size) and keep
// it for the receive.
//
// The duplicates are made where the communicator is made: at MPI_Init for
// MPI_COMM_WORLD and MPI_COMM_SELF, and in the wrappers of the communicator
// constructors (a collective call on the same ranks). A communicator made
// otherwise (e.g. MPI_Comm_idup, spawn) has no pair: its device messages use
// the eager protocol.
//===----------------------------------------------------------------------===//

#include "Layer.h"
#include "Operation.h"

#include <deque>
#include <map>
#include <tuple>

#define DDTC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace ddtc::mpi;

namespace {

int commKeyval = MPI_KEYVAL_INVALID;
std::atomic<bool> pairsOn{false};
CommPair worldPair, selfPair;

int deletePair(MPI_Comm, int, void *value, void *) {
  auto *p = static_cast<CommPair *>(value);
  if (p != &worldPair && p != &selfPair) {
    PMPI_Comm_free(&p->notes);
    PMPI_Comm_free(&p->data);
    delete p;
  }
  return MPI_SUCCESS;
}

/// The MPI_COMM_WORLD rank of each peer rank of `comm` (-1 where none: a
/// process of another world).
std::vector<int> worldRanks(MPI_Comm comm) {
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  MPI_Group group, world;
  if (inter)
    PMPI_Comm_remote_group(comm, &group);
  else
    PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> ranks(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    ranks[i] = i;
  PMPI_Group_translate_ranks(group, n, ranks.data(), world, out.data());
  for (int &r : out)
    if (r == MPI_UNDEFINED)
      r = -1;
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  return out;
}

bool makePair(MPI_Comm comm, CommPair &p) {
  if (PMPI_Comm_dup(comm, &p.notes) != MPI_SUCCESS)
    return false;
  if (PMPI_Comm_dup(comm, &p.data) != MPI_SUCCESS) {
    PMPI_Comm_free(&p.notes);
    return false;
  }
  PMPI_Comm_set_name(p.notes, const_cast<char *>("ddtc-mpi notes"));
  PMPI_Comm_set_name(p.data, const_cast<char *>("ddtc-mpi fragments"));
  if (comm != MPI_COMM_WORLD)
    p.world = worldRanks(comm);
  return true;
}

/// Gives a communicator the user just made its private pair.
int attach(int rc, MPI_Comm *comm) {
  if (rc != MPI_SUCCESS || !pairsOn.load(std::memory_order_acquire) || !comm ||
      *comm == MPI_COMM_NULL)
    return rc;
  auto *p = new CommPair;
  if (!makePair(*comm, *p)) {
    delete p;
    return rc;
  }
  PMPI_Comm_set_attr(*comm, commKeyval, p);
  return rc;
}

std::mutex stashMutex;
using StashKey = std::tuple<MPI_Comm, int, int>; // notes comm, source, tag
std::map<StashKey, std::deque<Note>> stash;

} // namespace

namespace ddtc::mpi {

void initComms() {
  if (!settings().handshake || settings().protocol == Protocol::Eager ||
      settings().protocol == Protocol::Staged)
    return;
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deletePair, &commKeyval,
                          nullptr);
  if (!makePair(MPI_COMM_WORLD, worldPair) ||
      !makePair(MPI_COMM_SELF, selfPair))
    return;
  PMPI_Comm_set_attr(MPI_COMM_WORLD, commKeyval, &worldPair);
  PMPI_Comm_set_attr(MPI_COMM_SELF, commKeyval, &selfPair);
  pairsOn.store(true, std::memory_order_release);
}

void finalizeComms() {
  if (!pairsOn.exchange(false))
    return;
  PMPI_Comm_delete_attr(MPI_COMM_WORLD, commKeyval);
  PMPI_Comm_delete_attr(MPI_COMM_SELF, commKeyval);
  PMPI_Comm_free(&worldPair.notes);
  PMPI_Comm_free(&worldPair.data);
  PMPI_Comm_free(&selfPair.notes);
  PMPI_Comm_free(&selfPair.data);
}

const CommPair *commPair(MPI_Comm comm) {
  if (!pairsOn.load(std::memory_order_acquire) || comm == MPI_COMM_NULL)
    return nullptr;
  if (comm == MPI_COMM_WORLD)
    return &worldPair;
  void *value = nullptr;
  int flag = 0;
  PMPI_Comm_get_attr(comm, commKeyval, &value, &flag);
  return flag ? static_cast<const CommPair *>(value) : nullptr;
}

void sendEmptyNote(const CommPair &pair, int dest, int tag) {
  MPI_Request r;
  PMPI_Isend(nullptr, 0, MPI_BYTE, dest, tag, pair.notes, &r);
  PMPI_Request_free(&r);
}

/// Receives a message sent right after one just matched (it is on its
/// way): the layer's operations progress meanwhile, so that a message to
/// oneself can be waited for. Returns the bytes received.
static int receiveFollowing(void *buf, int bytes, int source, int tag,
                            MPI_Comm comm) {
  MPI_Request r;
  MPI_Status st;
  PMPI_Irecv(buf, bytes, MPI_BYTE, source, tag, comm, &r);
  int flag = 0;
  while (PMPI_Test(&r, &flag, &st) == MPI_SUCCESS && !flag)
    progress();
  int n = 0;
  PMPI_Get_count(&st, MPI_BYTE, &n);
  return n;
}

static bool readNote(const CommPair &pair, int source, int tag, Note &note) {
  note = Note{};
  const int n = receiveFollowing(&note, sizeof note, source, tag, pair.notes);
  if (n == 0) {
    note.kind = Note::Empty;
    return true;
  }
  return n == sizeof note && note.magic == Note::kMagic;
}

/// The spec of the sender's type that follows a note of a pulled message
/// (PeerTypes.cpp), received with the note's fragments tag and kept.
static bool readSpec(const CommPair &pair, int source, const Note &note) {
  std::string spec(static_cast<size_t>(note.specBytes), '\0');
  if (receiveFollowing(spec.data(), note.specBytes, source,
                       fragmentTag(note.id), pair.data) != note.specBytes)
    return false;
  keepPeerSpec(note.ref.owner, note.typeSerial, std::move(spec));
  return true;
}

bool takeNote(const CommPair &pair, int source, int tag, Note &note) {
  bool found = false;
  {
    std::lock_guard<std::mutex> lock(stashMutex);
    auto it = stash.find({pair.notes, source, tag});
    if (it != stash.end() && !it->second.empty()) {
      note = it->second.front();
      it->second.pop_front();
      if (it->second.empty())
        stash.erase(it);
      found = true;
    }
  }
  if (!found && !readNote(pair, source, tag, note))
    return false;
  return note.kind != Note::Ipc || note.specBytes <= 0 ||
         readSpec(pair, source, note);
}

bool peekNote(const CommPair &pair, int source, int tag, Note &note) {
  StashKey key{pair.notes, source, tag};
  {
    std::lock_guard<std::mutex> lock(stashMutex);
    auto it = stash.find(key);
    if (it != stash.end() && !it->second.empty()) {
      note = it->second.front();
      return true;
    }
  }
  // Read without holding the stash: waiting for the note progresses the
  // layer's operations, and one of them may take a note itself.
  Note read;
  if (!readNote(pair, source, tag, read))
    return false;
  std::lock_guard<std::mutex> lock(stashMutex);
  auto &q = stash[key];
  q.push_back(read);
  note = q.front();
  return true;
}

} // namespace ddtc::mpi

// The constructors of communicators: each new one gets its pair.
DDTC_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  return attach(PMPI_Comm_dup(comm, newcomm), newcomm);
}
DDTC_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info,
                                       MPI_Comm *newcomm) {
  return attach(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}
DDTC_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key,
                               MPI_Comm *newcomm) {
  return attach(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}
DDTC_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int type, int key,
                                    MPI_Info info, MPI_Comm *newcomm) {
  return attach(PMPI_Comm_split_type(comm, type, key, info, newcomm), newcomm);
}
DDTC_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group,
                                MPI_Comm *newcomm) {
  return attach(PMPI_Comm_create(comm, group, newcomm), newcomm);
}
DDTC_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                      MPI_Comm *newcomm) {
  return attach(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}
DDTC_EXPORT int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[],
                                const int periods[], int reorder,
                                MPI_Comm *newcomm) {
  return attach(PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm),
                newcomm);
}
DDTC_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain[],
                             MPI_Comm *newcomm) {
  return attach(PMPI_Cart_sub(comm, remain, newcomm), newcomm);
}
DDTC_EXPORT int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[],
                                 const int edges[], int reorder,
                                 MPI_Comm *newcomm) {
  return attach(PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm),
                newcomm);
}
DDTC_EXPORT int
MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                               const int sweights[], int outdegree,
                               const int dests[], const int dweights[],
                               MPI_Info info, int reorder, MPI_Comm *newcomm) {
  return attach(PMPI_Dist_graph_create_adjacent(
                    comm, indegree, sources, sweights, outdegree, dests,
                    dweights, info, reorder, newcomm),
                newcomm);
}
DDTC_EXPORT int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                      const int degrees[], const int dests[],
                                      const int weights[], MPI_Info info,
                                      int reorder, MPI_Comm *newcomm) {
  return attach(PMPI_Dist_graph_create(comm, n, sources, degrees, dests,
                                       weights, info, reorder, newcomm),
                newcomm);
}
DDTC_EXPORT int MPI_Intercomm_create(MPI_Comm local, int localLeader,
                                     MPI_Comm peer, int remoteLeader, int tag,
                                     MPI_Comm *newcomm) {
  return attach(PMPI_Intercomm_create(local, localLeader, peer, remoteLeader,
                                      tag, newcomm),
                newcomm);
}
DDTC_EXPORT int MPI_Intercomm_merge(MPI_Comm inter, int high,
                                    MPI_Comm *newcomm) {
  return attach(PMPI_Intercomm_merge(inter, high, newcomm), newcomm);
}
