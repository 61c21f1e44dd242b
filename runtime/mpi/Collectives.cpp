//===- Collectives.cpp - Collectives on device buffers, staged ------------===//
//
// Correct first: every device buffer of a collective is copied whole (the
// bytes its count and type touch) into host memory, the MPI library runs the
// collective on the host copies with the user's own datatypes, and receive
// buffers are copied back. Receive buffers are copied in first as well, so
// the bytes between a type's blocks keep their values.
//===----------------------------------------------------------------------===//

#include "Layer.h"
#include "Topology.h"

#include <algorithm>
#include <memory>
#include <vector>

#define DDTC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace ddtc::mpi;

namespace {

int groupSize(MPI_Comm comm) {
  int inter = 0, n = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter)
    PMPI_Comm_remote_size(comm, &n);
  else
    PMPI_Comm_size(comm, &n);
  return n;
}

int rankOf(MPI_Comm comm) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  return r;
}

/// The bytes touched by blocks i of `count[i]` instances of `type[i]` at
/// byte offset `offset[i]` from the buffer.
void unionSpan(int n, const int *counts, const int64_t *offsets,
               const MPI_Datatype *types, int64_t &first, int64_t &span) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int i = 0; i < n; ++i) {
    if (counts[i] <= 0)
      continue;
    TypeInfo *info = acquireType(types[i]);
    int64_t f = 0, s = 0;
    typeSpan(*info, counts[i], f, s);
    releaseType(info);
    if (s == 0)
      continue;
    lo = std::min(lo, offsets[i] + f);
    hi = std::max(hi, offsets[i] + f + s);
  }
  first = lo == INT64_MAX ? 0 : lo;
  span = lo == INT64_MAX ? 0 : hi - lo;
}

int64_t extentOf(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

using Stage = std::unique_ptr<StagedBuffer>;

/// Stages (buf, count, type) when it is device memory; returns the pointer
/// the MPI library is given.
const void *stage(Stage &s, const void *buf, int64_t count, MPI_Datatype type,
                  bool copyIn) {
  if (buf == MPI_IN_PLACE || !onDevice(buf, count, type))
    return buf;
  s = std::make_unique<StagedBuffer>(buf, count, type, copyIn);
  return s->host();
}

/// The same for a buffer of blocks: block i is counts[i] x types[i] at
/// byte offset offsets[i].
const void *stageOffsets(Stage &s, const void *buf, int n, const int *counts,
                         const std::vector<int64_t> &offsets,
                         const MPI_Datatype *types, bool copyIn) {
  // Classify at the first block that holds data.
  int first = -1;
  for (int i = 0; i < n && first < 0; ++i)
    if (counts[i] > 0)
      first = i;
  if (first < 0 || !onDevice(static_cast<const char *>(buf) + offsets[first],
                             counts[first], types[first]))
    return buf;
  int64_t f = 0, span = 0;
  unionSpan(n, counts, offsets.data(), types, f, span);
  s = std::make_unique<StagedBuffer>(buf, f, span, copyIn);
  return s->host();
}

/// The same for a v/w buffer described by per-process blocks, displaced in
/// bytes (`Displ` MPI_Aint, or int with bytesDispl) or in extents.
template <typename Displ>
const void *stageBlocks(Stage &s, const void *buf, int n, const int *counts,
                        const Displ *displs, const MPI_Datatype *types,
                        bool bytesDispl, bool copyIn) {
  if (buf == MPI_IN_PLACE || !counts)
    return buf;
  std::vector<int64_t> offsets(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    offsets[i] = bytesDispl ? int64_t(displs[i])
                            : int64_t(displs[i]) * extentOf(types[i]);
  return stageOffsets(s, buf, n, counts, offsets, types, copyIn);
}

void *mut(const void *p) { return const_cast<void *>(p); }

int finish(int rc, Stage &recv, MPI_Comm comm) {
  if (rc == MPI_SUCCESS && recv && !recv->copyOut())
    return raise(comm, MPI_ERR_OTHER, "cannot copy a staged buffer back");
  return rc;
}

/// The buffers a collective runs on: staged host copies of device buffers
/// (kept in s and r), else the user's own.
struct Copies {
  Stage s, r;
  const void *sp = nullptr;
  void *rp = nullptr;
};

/// A blocking collective: its receive copy goes back to the device.
int done(int rc, Copies &c, MPI_Comm comm) { return finish(rc, c.r, comm); }

/// A nonblocking one: the copies stay with its request until Wait or Test
/// completes it (then the receive copy goes back).
int started(int rc, Copies &c, MPI_Comm comm, MPI_Request *request) {
  if (rc == MPI_SUCCESS)
    watchStagedRequest(*request, std::move(c.s), std::move(c.r), comm);
  return rc;
}

bool isRoot(int root, MPI_Comm comm) {
  return root == MPI_ROOT || rankOf(comm) == root;
}

Copies bcastCopies(void *buf, int count, MPI_Datatype type) {
  Copies c;
  c.rp = mut(stage(c.r, buf, count, type, true));
  return c;
}

Copies gatherCopies(const void *sbuf, int scount, MPI_Datatype stype,
                    void *rbuf, int rcount, MPI_Datatype rtype, int root,
                    MPI_Comm comm) {
  Copies c;
  c.sp = stage(c.s, sbuf, scount, stype, true);
  c.rp = rbuf;
  if (isRoot(root, comm))
    c.rp =
        mut(stage(c.r, rbuf, int64_t(rcount) * groupSize(comm), rtype, true));
  return c;
}

/// Blocks i < n of counts[i] x type at displs[i] (in extents).
const void *stageV(Stage &st, const void *buf, int n, const int counts[],
                   const int displs[], MPI_Datatype type) {
  std::vector<MPI_Datatype> types(static_cast<size_t>(n), type);
  return stageBlocks(st, buf, n, counts, displs, types.data(), false, true);
}

/// The same with one block per process of the group.
const void *stageV(Stage &st, const void *buf, const int counts[],
                   const int displs[], MPI_Datatype type, MPI_Comm comm) {
  return stageV(st, buf, groupSize(comm), counts, displs, type);
}

Copies gathervCopies(const void *sbuf, int scount, MPI_Datatype stype,
                     void *rbuf, const int rcounts[], const int displs[],
                     MPI_Datatype rtype, int root, MPI_Comm comm) {
  Copies c;
  c.sp = stage(c.s, sbuf, scount, stype, true);
  c.rp = rbuf;
  if (isRoot(root, comm))
    c.rp = mut(stageV(c.r, rbuf, rcounts, displs, rtype, comm));
  return c;
}

Copies scatterCopies(const void *sbuf, int scount, MPI_Datatype stype,
                     void *rbuf, int rcount, MPI_Datatype rtype, int root,
                     MPI_Comm comm) {
  Copies c;
  c.sp = sbuf;
  if (isRoot(root, comm))
    c.sp = stage(c.s, sbuf, int64_t(scount) * groupSize(comm), stype, true);
  c.rp = mut(stage(c.r, rbuf, rcount, rtype, true));
  return c;
}

Copies scattervCopies(const void *sbuf, const int scounts[], const int displs[],
                      MPI_Datatype stype, void *rbuf, int rcount,
                      MPI_Datatype rtype, int root, MPI_Comm comm) {
  Copies c;
  c.sp = sbuf;
  if (isRoot(root, comm))
    c.sp = stageV(c.s, sbuf, scounts, displs, stype, comm);
  c.rp = mut(stage(c.r, rbuf, rcount, rtype, true));
  return c;
}

/// Sends `out` blocks of scount x stype and receives `in` blocks of rcount
/// x rtype, consecutive on each side.
Copies exchangeCopies(const void *sbuf, int scount, MPI_Datatype stype,
                      int out, void *rbuf, int rcount, MPI_Datatype rtype,
                      int in) {
  Copies c;
  c.sp = stage(c.s, sbuf, int64_t(scount) * out, stype, true);
  c.rp = mut(stage(c.r, rbuf, int64_t(rcount) * in, rtype, true));
  return c;
}

/// Sends scount x stype once and receives blocks i < n of rcounts[i] x
/// rtype at displs[i].
Copies gatherBlocksCopies(const void *sbuf, int scount, MPI_Datatype stype,
                          void *rbuf, int n, const int rcounts[],
                          const int displs[], MPI_Datatype rtype) {
  Copies c;
  c.sp = stage(c.s, sbuf, scount, stype, true);
  c.rp = mut(stageV(c.r, rbuf, n, rcounts, displs, rtype));
  return c;
}

Copies allgatherCopies(const void *sbuf, int scount, MPI_Datatype stype,
                       void *rbuf, int rcount, MPI_Datatype rtype,
                       MPI_Comm comm) {
  return exchangeCopies(sbuf, scount, stype, 1, rbuf, rcount, rtype,
                        groupSize(comm));
}

Copies allgathervCopies(const void *sbuf, int scount, MPI_Datatype stype,
                        void *rbuf, const int rcounts[], const int displs[],
                        MPI_Datatype rtype, MPI_Comm comm) {
  return gatherBlocksCopies(sbuf, scount, stype, rbuf, groupSize(comm),
                            rcounts, displs, rtype);
}

Copies alltoallCopies(const void *sbuf, int scount, MPI_Datatype stype,
                      void *rbuf, int rcount, MPI_Datatype rtype,
                      MPI_Comm comm) {
  int n = groupSize(comm);
  return exchangeCopies(sbuf, scount, stype, n, rbuf, rcount, rtype, n);
}

Copies alltoallvCopies(const void *sbuf, const int scounts[],
                       const int sdispls[], MPI_Datatype stype, void *rbuf,
                       const int rcounts[], const int rdispls[],
                       MPI_Datatype rtype, MPI_Comm comm) {
  Copies c;
  c.sp = stageV(c.s, sbuf, scounts, sdispls, stype, comm);
  c.rp = mut(stageV(c.r, rbuf, rcounts, rdispls, rtype, comm));
  return c;
}

Copies alltoallwCopies(const void *sbuf, const int scounts[],
                       const int sdispls[], const MPI_Datatype stypes[],
                       void *rbuf, const int rcounts[], const int rdispls[],
                       const MPI_Datatype rtypes[], MPI_Comm comm) {
  Copies c;
  int n = groupSize(comm);
  c.sp = stageBlocks(c.s, sbuf, n, scounts, sdispls, stypes, true, true);
  c.rp = mut(stageBlocks(c.r, rbuf, n, rcounts, rdispls, rtypes, true, true));
  return c;
}

// Neighbourhood collectives: blocks per neighbour of the topology.
Copies neighborAllgatherCopies(const void *sbuf, int scount, MPI_Datatype stype,
                               void *rbuf, int rcount, MPI_Datatype rtype,
                               MPI_Comm comm) {
  int in = 0, out = 0;
  neighbourDegrees(comm, in, out);
  return exchangeCopies(sbuf, scount, stype, 1, rbuf, rcount, rtype, in);
}

Copies neighborAllgathervCopies(const void *sbuf, int scount,
                                MPI_Datatype stype, void *rbuf,
                                const int rcounts[], const int displs[],
                                MPI_Datatype rtype, MPI_Comm comm) {
  int in = 0, out = 0;
  neighbourDegrees(comm, in, out);
  return gatherBlocksCopies(sbuf, scount, stype, rbuf, in, rcounts, displs,
                            rtype);
}

Copies neighborAlltoallCopies(const void *sbuf, int scount, MPI_Datatype stype,
                              void *rbuf, int rcount, MPI_Datatype rtype,
                              MPI_Comm comm) {
  int in = 0, out = 0;
  neighbourDegrees(comm, in, out);
  return exchangeCopies(sbuf, scount, stype, out, rbuf, rcount, rtype, in);
}

Copies neighborAlltoallvCopies(const void *sbuf, const int scounts[],
                               const int sdispls[], MPI_Datatype stype,
                               void *rbuf, const int rcounts[],
                               const int rdispls[], MPI_Datatype rtype,
                               MPI_Comm comm) {
  int in = 0, out = 0;
  neighbourDegrees(comm, in, out);
  Copies c;
  c.sp = stageV(c.s, sbuf, out, scounts, sdispls, stype);
  c.rp = mut(stageV(c.r, rbuf, in, rcounts, rdispls, rtype));
  return c;
}

Copies neighborAlltoallwCopies(const void *sbuf, const int scounts[],
                               const MPI_Aint sdispls[],
                               const MPI_Datatype stypes[], void *rbuf,
                               const int rcounts[], const MPI_Aint rdispls[],
                               const MPI_Datatype rtypes[], MPI_Comm comm) {
  int in = 0, out = 0;
  neighbourDegrees(comm, in, out);
  Copies c;
  c.sp = stageBlocks(c.s, sbuf, out, scounts, sdispls, stypes, true, true);
  c.rp = mut(stageBlocks(c.r, rbuf, in, rcounts, rdispls, rtypes, true, true));
  return c;
}

/// Reductions, scans: count elements in, count out (at the root only when
/// `root` >= 0 or MPI_ROOT).
Copies reduceCopies(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                    bool receives) {
  Copies c;
  c.sp = stage(c.s, sbuf, count, type, true);
  c.rp = receives ? mut(stage(c.r, rbuf, count, type, true)) : rbuf;
  return c;
}

Copies reduceScatterCopies(const void *sbuf, void *rbuf, int64_t total,
                           int64_t mine, MPI_Datatype type) {
  Copies c;
  c.sp = stage(c.s, sbuf, total, type, true);
  c.rp = mut(stage(c.r, rbuf, sbuf == MPI_IN_PLACE ? total : mine, type, true));
  return c;
}

/// Runs a blocking collective so that this rank's transfers keep moving
/// while it waits. Without the progress thread a pipelined transfer moves
/// only inside the layer's calls, and a peer blocked on it (a receive of
/// this rank's MPI_Isend, say) before it joins the collective would wait
/// forever where MPI completes both. Then, where pipelines exist, the
/// collective runs as its nonblocking form, completed by a loop that tests
/// it and progresses the transfers. Always, not only while a transfer is
/// in flight: a blocking and a nonblocking collective do not match, so
/// every rank must take the same form, and these settings are the same on
/// every rank (MPI.md, "Environment").
template <class Blocking, class Start>
int progressing(Blocking blocking, Start start) {
  if (progressThreadRunning() || !commPair(MPI_COMM_WORLD))
    return blocking();
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = start(&r);
  for (int flag = 0; rc == MPI_SUCCESS && !flag;) {
    rc = PMPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !flag)
      progress();
  }
  return rc;
}

/// The blocking form whatever the settings: Open MPI 4.1's nonblocking
/// neighbourhood collectives match the blocks of a process that is a
/// neighbour twice (two ranks on a periodic ring) in another order than its
/// blocking ones, so the layer's blocking call keeps the library's blocking
/// result; without the progress thread these calls do not move transfers.
template <class Blocking, class Start>
int blockingForm(Blocking blocking, Start) {
  return blocking();
}

/// The blocking collective PMPI_<Name> on the arguments given, in the form
/// `form` (progressing or blockingForm) chooses between it and its
/// nonblocking PMPI_<IName>: one argument list serves both.
#define DDTC_BLOCKING(form, Name, IName, ...)                                  \
  form([&] { return PMPI_##Name(__VA_ARGS__); },                               \
       [&](MPI_Request *r) { return PMPI_##IName(__VA_ARGS__, r); })

int64_t sumCounts(const int counts[], MPI_Comm comm) {
  int n = 0;
  PMPI_Comm_size(comm, &n);
  int64_t total = 0;
  for (int i = 0; i < n; ++i)
    total += counts[i];
  return total;
}

} // namespace

// Each collective twice: blocking (the receive copy goes back before the
// call returns; `progressing` keeps the rank's transfers moving meanwhile)
// and nonblocking (it goes back when Wait/Test completes the request). The
// copies are made before the call: a nonblocking collective's send buffer
// is read then, as the standard allows.

DDTC_EXPORT int MPI_Barrier(MPI_Comm comm) {
  progress();
  return DDTC_BLOCKING(progressing, Barrier, Ibarrier, comm);
}

DDTC_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root,
                          MPI_Comm comm) {
  progress();
  Copies c = bcastCopies(buf, count, type);
  return done(
      DDTC_BLOCKING(progressing, Bcast, Ibcast, c.rp, count, type, root, comm),
      c, comm);
}
DDTC_EXPORT int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root,
                           MPI_Comm comm, MPI_Request *req) {
  progress();
  Copies c = bcastCopies(buf, count, type);
  return started(PMPI_Ibcast(c.rp, count, type, root, comm, req), c, comm, req);
}

// Gather and Scatter: a count and a type on each side, a root.
#define DDTC_ROOTED(Name, IName, copies)                                       \
  DDTC_EXPORT int MPI_##Name(const void *sbuf, int scount, MPI_Datatype stype, \
                             void *rbuf, int rcount, MPI_Datatype rtype,       \
                             int root, MPI_Comm comm) {                        \
    progress();                                                                \
    Copies c = copies(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);   \
    return done(DDTC_BLOCKING(progressing, Name, IName, c.sp, scount, stype,   \
                              c.rp, rcount, rtype, root, comm),                \
                c, comm);                                                      \
  }                                                                            \
  DDTC_EXPORT int MPI_##IName(const void *sbuf, int scount,                    \
                              MPI_Datatype stype, void *rbuf, int rcount,      \
                              MPI_Datatype rtype, int root, MPI_Comm comm,     \
                              MPI_Request *req) {                              \
    progress();                                                                \
    Copies c = copies(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);   \
    return started(PMPI_##IName(c.sp, scount, stype, c.rp, rcount, rtype,      \
                                root, comm, req),                              \
                   c, comm, req);                                              \
  }

DDTC_ROOTED(Gather, Igather, gatherCopies)
DDTC_ROOTED(Scatter, Iscatter, scatterCopies)

DDTC_EXPORT int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype,
                            void *rbuf, const int rcounts[], const int displs[],
                            MPI_Datatype rtype, int root, MPI_Comm comm) {
  progress();
  Copies c = gathervCopies(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                           root, comm);
  return done(DDTC_BLOCKING(progressing, Gatherv, Igatherv, c.sp, scount, stype,
                            c.rp, rcounts, displs, rtype, root, comm),
              c, comm);
}
DDTC_EXPORT int MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype,
                             void *rbuf, const int rcounts[],
                             const int displs[], MPI_Datatype rtype, int root,
                             MPI_Comm comm, MPI_Request *req) {
  progress();
  Copies c = gathervCopies(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                           root, comm);
  return started(PMPI_Igatherv(c.sp, scount, stype, c.rp, rcounts, displs,
                               rtype, root, comm, req),
                 c, comm, req);
}

DDTC_EXPORT int MPI_Scatterv(const void *sbuf, const int scounts[],
                             const int displs[], MPI_Datatype stype, void *rbuf,
                             int rcount, MPI_Datatype rtype, int root,
                             MPI_Comm comm) {
  progress();
  Copies c = scattervCopies(sbuf, scounts, displs, stype, rbuf, rcount, rtype,
                            root, comm);
  return done(DDTC_BLOCKING(progressing, Scatterv, Iscatterv, c.sp, scounts,
                            displs, stype, c.rp, rcount, rtype, root, comm),
              c, comm);
}
DDTC_EXPORT int MPI_Iscatterv(const void *sbuf, const int scounts[],
                              const int displs[], MPI_Datatype stype,
                              void *rbuf, int rcount, MPI_Datatype rtype,
                              int root, MPI_Comm comm, MPI_Request *req) {
  progress();
  Copies c = scattervCopies(sbuf, scounts, displs, stype, rbuf, rcount, rtype,
                            root, comm);
  return started(PMPI_Iscatterv(c.sp, scounts, displs, stype, c.rp, rcount,
                                rtype, root, comm, req),
                 c, comm, req);
}

// Allgather and Alltoall: a count and a type on each side, no root.
#define DDTC_ALL_TO_ALL(Name, IName, copies, form)                             \
  DDTC_EXPORT int MPI_##Name(const void *sbuf, int scount, MPI_Datatype stype, \
                             void *rbuf, int rcount, MPI_Datatype rtype,       \
                             MPI_Comm comm) {                                  \
    progress();                                                                \
    Copies c = copies(sbuf, scount, stype, rbuf, rcount, rtype, comm);         \
    return done(DDTC_BLOCKING(form, Name, IName, c.sp, scount, stype, c.rp,    \
                              rcount, rtype, comm),                            \
                c, comm);                                                      \
  }                                                                            \
  DDTC_EXPORT int MPI_##IName(                                                 \
      const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,            \
      int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) {       \
    progress();                                                                \
    Copies c = copies(sbuf, scount, stype, rbuf, rcount, rtype, comm);         \
    return started(                                                            \
        PMPI_##IName(c.sp, scount, stype, c.rp, rcount, rtype, comm, req), c,  \
        comm, req);                                                            \
  }

DDTC_ALL_TO_ALL(Allgather, Iallgather, allgatherCopies, progressing)
DDTC_ALL_TO_ALL(Alltoall, Ialltoall, alltoallCopies, progressing)

// Allgatherv: a count and a type to send, counts and displacements per
// process to receive.
#define DDTC_ALL_GATHER_V(Name, IName, copies, form)                           \
  DDTC_EXPORT int MPI_##Name(const void *sbuf, int scount, MPI_Datatype stype, \
                             void *rbuf, const int rcounts[],                  \
                             const int displs[], MPI_Datatype rtype,           \
                             MPI_Comm comm) {                                  \
    progress();                                                                \
    Copies c =                                                                 \
        copies(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);       \
    return done(DDTC_BLOCKING(form, Name, IName, c.sp, scount, stype, c.rp,    \
                              rcounts, displs, rtype, comm),                   \
                c, comm);                                                      \
  }                                                                            \
  DDTC_EXPORT int MPI_##IName(const void *sbuf, int scount,                    \
                              MPI_Datatype stype, void *rbuf,                  \
                              const int rcounts[], const int displs[],         \
                              MPI_Datatype rtype, MPI_Comm comm,               \
                              MPI_Request *req) {                              \
    progress();                                                                \
    Copies c =                                                                 \
        copies(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);       \
    return started(PMPI_##IName(c.sp, scount, stype, c.rp, rcounts, displs,    \
                                rtype, comm, req),                             \
                   c, comm, req);                                              \
  }

DDTC_ALL_GATHER_V(Allgatherv, Iallgatherv, allgathervCopies, progressing)

// Alltoallv and Alltoallw: counts and displacements per process on each
// side, with one type a side (Alltoallv) or one per process (Alltoallw).
#define DDTC_ALL_TO_ALL_V(Name, IName, copies, Types, Displ, form)             \
  DDTC_EXPORT int MPI_##Name(const void *sbuf, const int scounts[],            \
                             const Displ sdispls[], Types stypes, void *rbuf,  \
                             const int rcounts[], const Displ rdispls[],       \
                             Types rtypes, MPI_Comm comm) {                    \
    progress();                                                                \
    Copies c = copies(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,  \
                      rtypes, comm);                                           \
    return done(DDTC_BLOCKING(form, Name, IName, c.sp, scounts, sdispls,       \
                              stypes, c.rp, rcounts, rdispls, rtypes, comm),   \
                c, comm);                                                      \
  }                                                                            \
  DDTC_EXPORT int MPI_##IName(const void *sbuf, const int scounts[],           \
                              const Displ sdispls[], Types stypes, void *rbuf, \
                              const int rcounts[], const Displ rdispls[],      \
                              Types rtypes, MPI_Comm comm, MPI_Request *req) { \
    progress();                                                                \
    Copies c = copies(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,  \
                      rtypes, comm);                                           \
    return started(PMPI_##IName(c.sp, scounts, sdispls, stypes, c.rp, rcounts, \
                                rdispls, rtypes, comm, req),                   \
                   c, comm, req);                                              \
  }

DDTC_ALL_TO_ALL_V(Alltoallv, Ialltoallv, alltoallvCopies, MPI_Datatype, int,
                  progressing)
DDTC_ALL_TO_ALL_V(Alltoallw, Ialltoallw, alltoallwCopies, const MPI_Datatype *,
                  int, progressing)

// Neighbourhood collectives: the same shapes, with the blocks of the
// processes of the communicator's topology (neighbourDegrees); blocking
// always (blockingForm says why).
DDTC_ALL_TO_ALL(Neighbor_allgather, Ineighbor_allgather,
                neighborAllgatherCopies, blockingForm)
DDTC_ALL_TO_ALL(Neighbor_alltoall, Ineighbor_alltoall, neighborAlltoallCopies,
                blockingForm)
DDTC_ALL_GATHER_V(Neighbor_allgatherv, Ineighbor_allgatherv,
                  neighborAllgathervCopies, blockingForm)
DDTC_ALL_TO_ALL_V(Neighbor_alltoallv, Ineighbor_alltoallv,
                  neighborAlltoallvCopies, MPI_Datatype, int, blockingForm)
DDTC_ALL_TO_ALL_V(Neighbor_alltoallw, Ineighbor_alltoallw,
                  neighborAlltoallwCopies, const MPI_Datatype *, MPI_Aint,
                  blockingForm)

DDTC_EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count,
                           MPI_Datatype type, MPI_Op op, int root,
                           MPI_Comm comm) {
  progress();
  Copies c = reduceCopies(sbuf, rbuf, count, type, isRoot(root, comm));
  return done(DDTC_BLOCKING(progressing, Reduce, Ireduce, c.sp, c.rp, count,
                            type, op, root, comm),
              c, comm);
}
DDTC_EXPORT int MPI_Ireduce(const void *sbuf, void *rbuf, int count,
                            MPI_Datatype type, MPI_Op op, int root,
                            MPI_Comm comm, MPI_Request *req) {
  progress();
  Copies c = reduceCopies(sbuf, rbuf, count, type, isRoot(root, comm));
  return started(PMPI_Ireduce(c.sp, c.rp, count, type, op, root, comm, req), c,
                 comm, req);
}

// Allreduce, Scan and Exscan: count elements in and out on every process.
#define DDTC_REDUCTION(Name, IName)                                            \
  DDTC_EXPORT int MPI_##Name(const void *sbuf, void *rbuf, int count,          \
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm) {    \
    progress();                                                                \
    Copies c = reduceCopies(sbuf, rbuf, count, type, true);                    \
    return done(DDTC_BLOCKING(progressing, Name, IName, c.sp, c.rp, count,     \
                              type, op, comm),                                 \
                c, comm);                                                      \
  }                                                                            \
  DDTC_EXPORT int MPI_##IName(const void *sbuf, void *rbuf, int count,         \
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm,     \
                              MPI_Request *req) {                              \
    progress();                                                                \
    Copies c = reduceCopies(sbuf, rbuf, count, type, true);                    \
    return started(PMPI_##IName(c.sp, c.rp, count, type, op, comm, req), c,    \
                   comm, req);                                                 \
  }

DDTC_REDUCTION(Allreduce, Iallreduce)
DDTC_REDUCTION(Scan, Iscan)
DDTC_REDUCTION(Exscan, Iexscan)

DDTC_EXPORT int MPI_Reduce_scatter(const void *sbuf, void *rbuf,
                                   const int rcounts[], MPI_Datatype type,
                                   MPI_Op op, MPI_Comm comm) {
  progress();
  Copies c = reduceScatterCopies(sbuf, rbuf, sumCounts(rcounts, comm),
                                 rcounts[rankOf(comm)], type);
  return done(DDTC_BLOCKING(progressing, Reduce_scatter, Ireduce_scatter, c.sp,
                            c.rp, rcounts, type, op, comm),
              c, comm);
}
DDTC_EXPORT int MPI_Ireduce_scatter(const void *sbuf, void *rbuf,
                                    const int rcounts[], MPI_Datatype type,
                                    MPI_Op op, MPI_Comm comm,
                                    MPI_Request *req) {
  progress();
  Copies c = reduceScatterCopies(sbuf, rbuf, sumCounts(rcounts, comm),
                                 rcounts[rankOf(comm)], type);
  return started(PMPI_Ireduce_scatter(c.sp, c.rp, rcounts, type, op, comm, req),
                 c, comm, req);
}

DDTC_EXPORT int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf,
                                         int rcount, MPI_Datatype type,
                                         MPI_Op op, MPI_Comm comm) {
  progress();
  Copies c = reduceScatterCopies(sbuf, rbuf, int64_t(rcount) * groupSize(comm),
                                 rcount, type);
  return done(DDTC_BLOCKING(progressing, Reduce_scatter_block,
                            Ireduce_scatter_block, c.sp, c.rp, rcount, type, op,
                            comm),
              c, comm);
}
DDTC_EXPORT int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf,
                                          int rcount, MPI_Datatype type,
                                          MPI_Op op, MPI_Comm comm,
                                          MPI_Request *req) {
  progress();
  Copies c = reduceScatterCopies(sbuf, rbuf, int64_t(rcount) * groupSize(comm),
                                 rcount, type);
  return started(
      PMPI_Ireduce_scatter_block(c.sp, c.rp, rcount, type, op, comm, req), c,
      comm, req);
}

DDTC_EXPORT int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count,
                                 MPI_Datatype type, MPI_Op op) {
  progress();
  Stage s, r;
  const void *ip = stage(s, inbuf, count, type, true);
  void *rp = mut(stage(r, inoutbuf, count, type, true));
  int rc = PMPI_Reduce_local(ip, rp, count, type, op);
  return finish(rc, r, MPI_COMM_WORLD);
}
