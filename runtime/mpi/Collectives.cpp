//===- Collectives.cpp - Collectives on device buffers, staged ---------------===//
//
// Correct first: every device buffer of a collective is copied whole (the
// bytes its count and type touch) into host memory, the MPI library runs the
// collective on the host copies with the user's own datatypes, and receive
// buffers are copied back. Receive buffers are copied in first as well, so
// the bytes between a type's blocks keep their values.
//===----------------------------------------------------------------------===//

#include "Layer.h"

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

/// The same for a v/w buffer described by per-rank blocks.
const void *stageBlocks(Stage &s, const void *buf, int n, const int *counts,
                        const int *displs, const MPI_Datatype *types,
                        bool bytesDispl, bool copyIn) {
  if (buf == MPI_IN_PLACE || !counts)
    return buf;
  std::vector<int64_t> offsets(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    offsets[i] =
        bytesDispl ? displs[i] : int64_t(displs[i]) * extentOf(types[i]);
  // Classify at the first block that holds data.
  int first = -1;
  for (int i = 0; i < n && first < 0; ++i)
    if (counts[i] > 0)
      first = i;
  if (first < 0 ||
      !onDevice(static_cast<const char *>(buf) + offsets[first], counts[first],
                types[first]))
    return buf;
  int64_t f = 0, span = 0;
  unionSpan(n, counts, offsets.data(), types, f, span);
  s = std::make_unique<StagedBuffer>(buf, f, span, copyIn);
  return s->host();
}

void *mut(const void *p) { return const_cast<void *>(p); }

int finish(int rc, Stage &recv, MPI_Comm comm) {
  if (rc == MPI_SUCCESS && recv && !recv->copyOut())
    return raise(comm, MPI_ERR_OTHER, "cannot copy a staged buffer back");
  return rc;
}

} // namespace

DDTC_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root,
                          MPI_Comm comm) {
  progress();
  Stage b;
  void *p = mut(stage(b, buf, count, type, true));
  int rc = PMPI_Bcast(p, count, type, root, comm);
  return finish(rc, b, comm);
}

DDTC_EXPORT int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype,
                           void *rbuf, int rcount, MPI_Datatype rtype, int root,
                           MPI_Comm comm) {
  progress();
  Stage s, r;
  const void *sp = stage(s, sbuf, scount, stype, true);
  void *rp = rbuf;
  if (rankOf(comm) == root || root == MPI_ROOT)
    rp = mut(stage(r, rbuf, int64_t(rcount) * groupSize(comm), rtype, true));
  int rc = PMPI_Gather(sp, scount, stype, rp, rcount, rtype, root, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype,
                            void *rbuf, const int rcounts[], const int displs[],
                            MPI_Datatype rtype, int root, MPI_Comm comm) {
  progress();
  Stage s, r;
  const void *sp = stage(s, sbuf, scount, stype, true);
  void *rp = rbuf;
  if (rankOf(comm) == root || root == MPI_ROOT) {
    int n = groupSize(comm);
    std::vector<MPI_Datatype> types(static_cast<size_t>(n), rtype);
    rp = mut(stageBlocks(r, rbuf, n, rcounts, displs, types.data(), false,
                         true));
  }
  int rc = PMPI_Gatherv(sp, scount, stype, rp, rcounts, displs, rtype, root,
                        comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype,
                            void *rbuf, int rcount, MPI_Datatype rtype,
                            int root, MPI_Comm comm) {
  progress();
  Stage s, r;
  const void *sp = sbuf;
  if (rankOf(comm) == root || root == MPI_ROOT)
    sp = stage(s, sbuf, int64_t(scount) * groupSize(comm), stype, true);
  void *rp = mut(stage(r, rbuf, rcount, rtype, true));
  int rc = PMPI_Scatter(sp, scount, stype, rp, rcount, rtype, root, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Scatterv(const void *sbuf, const int scounts[],
                             const int displs[], MPI_Datatype stype,
                             void *rbuf, int rcount, MPI_Datatype rtype,
                             int root, MPI_Comm comm) {
  progress();
  Stage s, r;
  const void *sp = sbuf;
  if (rankOf(comm) == root || root == MPI_ROOT) {
    int n = groupSize(comm);
    std::vector<MPI_Datatype> types(static_cast<size_t>(n), stype);
    sp = stageBlocks(s, sbuf, n, scounts, displs, types.data(), false, true);
  }
  void *rp = mut(stage(r, rbuf, rcount, rtype, true));
  int rc = PMPI_Scatterv(sp, scounts, displs, stype, rp, rcount, rtype, root,
                         comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype,
                              void *rbuf, int rcount, MPI_Datatype rtype,
                              MPI_Comm comm) {
  progress();
  Stage s, r;
  const void *sp = stage(s, sbuf, scount, stype, true);
  void *rp =
      mut(stage(r, rbuf, int64_t(rcount) * groupSize(comm), rtype, true));
  int rc = PMPI_Allgather(sp, scount, stype, rp, rcount, rtype, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Allgatherv(const void *sbuf, int scount,
                               MPI_Datatype stype, void *rbuf,
                               const int rcounts[], const int displs[],
                               MPI_Datatype rtype, MPI_Comm comm) {
  progress();
  Stage s, r;
  const void *sp = stage(s, sbuf, scount, stype, true);
  int n = groupSize(comm);
  std::vector<MPI_Datatype> types(static_cast<size_t>(n), rtype);
  void *rp =
      mut(stageBlocks(r, rbuf, n, rcounts, displs, types.data(), false, true));
  int rc = PMPI_Allgatherv(sp, scount, stype, rp, rcounts, displs, rtype,
                           comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype,
                             void *rbuf, int rcount, MPI_Datatype rtype,
                             MPI_Comm comm) {
  progress();
  Stage s, r;
  int n = groupSize(comm);
  const void *sp = stage(s, sbuf, int64_t(scount) * n, stype, true);
  void *rp = mut(stage(r, rbuf, int64_t(rcount) * n, rtype, true));
  int rc = PMPI_Alltoall(sp, scount, stype, rp, rcount, rtype, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Alltoallv(const void *sbuf, const int scounts[],
                              const int sdispls[], MPI_Datatype stype,
                              void *rbuf, const int rcounts[],
                              const int rdispls[], MPI_Datatype rtype,
                              MPI_Comm comm) {
  progress();
  Stage s, r;
  int n = groupSize(comm);
  std::vector<MPI_Datatype> st(static_cast<size_t>(n), stype),
      rt(static_cast<size_t>(n), rtype);
  const void *sp =
      stageBlocks(s, sbuf, n, scounts, sdispls, st.data(), false, true);
  void *rp =
      mut(stageBlocks(r, rbuf, n, rcounts, rdispls, rt.data(), false, true));
  int rc = PMPI_Alltoallv(sp, scounts, sdispls, stype, rp, rcounts, rdispls,
                          rtype, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Alltoallw(const void *sbuf, const int scounts[],
                              const int sdispls[], const MPI_Datatype stypes[],
                              void *rbuf, const int rcounts[],
                              const int rdispls[], const MPI_Datatype rtypes[],
                              MPI_Comm comm) {
  progress();
  Stage s, r;
  int n = groupSize(comm);
  const void *sp =
      stageBlocks(s, sbuf, n, scounts, sdispls, stypes, true, true);
  void *rp =
      mut(stageBlocks(r, rbuf, n, rcounts, rdispls, rtypes, true, true));
  int rc = PMPI_Alltoallw(sp, scounts, sdispls, stypes, rp, rcounts, rdispls,
                          rtypes, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count,
                           MPI_Datatype type, MPI_Op op, int root,
                           MPI_Comm comm) {
  progress();
  Stage s, r;
  const void *sp = stage(s, sbuf, count, type, true);
  void *rp = rbuf;
  if (rankOf(comm) == root || root == MPI_ROOT)
    rp = mut(stage(r, rbuf, count, type, true));
  int rc = PMPI_Reduce(sp, rp, count, type, op, root, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count,
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  progress();
  Stage s, r;
  const void *sp = stage(s, sbuf, count, type, true);
  void *rp = mut(stage(r, rbuf, count, type, true));
  int rc = PMPI_Allreduce(sp, rp, count, type, op, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Reduce_scatter(const void *sbuf, void *rbuf,
                                   const int rcounts[], MPI_Datatype type,
                                   MPI_Op op, MPI_Comm comm) {
  progress();
  Stage s, r;
  int n = 0;
  PMPI_Comm_size(comm, &n);
  int64_t total = 0;
  for (int i = 0; i < n; ++i)
    total += rcounts[i];
  const void *sp = stage(s, sbuf, total, type, true);
  void *rp = mut(stage(r, rbuf, sbuf == MPI_IN_PLACE ? total
                                                      : rcounts[rankOf(comm)],
                       type, true));
  int rc = PMPI_Reduce_scatter(sp, rp, rcounts, type, op, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf,
                                         int rcount, MPI_Datatype type,
                                         MPI_Op op, MPI_Comm comm) {
  progress();
  Stage s, r;
  int n = 0;
  PMPI_Comm_size(comm, &n);
  const void *sp = stage(s, sbuf, int64_t(rcount) * n, type, true);
  void *rp = mut(stage(
      r, rbuf, sbuf == MPI_IN_PLACE ? int64_t(rcount) * n : rcount, type,
      true));
  int rc = PMPI_Reduce_scatter_block(sp, rp, rcount, type, op, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Scan(const void *sbuf, void *rbuf, int count,
                         MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  progress();
  Stage s, r;
  const void *sp = stage(s, sbuf, count, type, true);
  void *rp = mut(stage(r, rbuf, count, type, true));
  int rc = PMPI_Scan(sp, rp, count, type, op, comm);
  return finish(rc, r, comm);
}

DDTC_EXPORT int MPI_Exscan(const void *sbuf, void *rbuf, int count,
                           MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  progress();
  Stage s, r;
  const void *sp = stage(s, sbuf, count, type, true);
  void *rp = mut(stage(r, rbuf, count, type, true));
  int rc = PMPI_Exscan(sp, rp, count, type, op, comm);
  return finish(rc, r, comm);
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
