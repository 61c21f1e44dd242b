//===- Completion.cpp - Wait, Test, Request_free, Cancel ------------------===//
//
// Requests of the layer are real MPI requests, so the MPI library's own
// Wait/Test calls complete them; the wrappers add progress (the layer's
// operations advance only when called) and write each operation's status
// (source, tag, bytes received, error, cancelled) over the placeholder the
// completion message left. With nothing of the layer in flight every call
// goes straight to the MPI library.
//===----------------------------------------------------------------------===//

#include "Layer.h"

#include <vector>

#define DDTC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace ddtc::mpi;

namespace {

/// Statuses for PMPI: the caller's array, or scratch when it ignores them.
struct StatusArray {
  std::vector<MPI_Status> scratch;
  MPI_Status *p;
  StatusArray(int n, MPI_Status *user) {
    if (user == MPI_STATUSES_IGNORE) {
      scratch.resize(static_cast<size_t>(n > 0 ? n : 1));
      p = scratch.data();
    } else {
      p = user;
    }
  }
};

/// Completes requests [i] that PMPI reported done; returns true when one of
/// them failed (MPI_ERR_IN_STATUS then).
bool finishAll(int n, const int *indices, const std::vector<OpRef> &before,
               const MPI_Request *after, MPI_Status *st) {
  bool failed = false;
  for (int k = 0; k < n; ++k) {
    int i = indices ? indices[k] : k;
    int err = finishRequest(before[i], after[i] != MPI_REQUEST_NULL,
                            &st[indices ? k : i]);
    failed = failed || err != MPI_SUCCESS;
  }
  return failed;
}

std::vector<OpRef> snapshot(int n, const MPI_Request *requests) {
  std::vector<OpRef> ops(static_cast<size_t>(n > 0 ? n : 0));
  for (int i = 0; i < n; ++i)
    ops[i] = lookupRequest(requests[i]);
  return ops;
}

} // namespace

DDTC_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status) {
  if (!anyPending())
    return PMPI_Wait(request, status);
  OpRef before = lookupRequest(*request);
  MPI_Status st;
  int flag = 0, rc;
  do {
    progress();
    rc = PMPI_Test(request, &flag, &st);
  } while (rc == MPI_SUCCESS && !flag);
  if (rc != MPI_SUCCESS)
    return rc;
  int err = finishRequest(before, *request != MPI_REQUEST_NULL, &st);
  if (status != MPI_STATUS_IGNORE)
    *status = st;
  return err;
}

DDTC_EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
  if (!anyPending())
    return PMPI_Test(request, flag, status);
  progress();
  OpRef before = lookupRequest(*request);
  MPI_Status st;
  int rc = PMPI_Test(request, flag, &st);
  if (rc != MPI_SUCCESS || !*flag)
    return rc;
  int err = finishRequest(before, *request != MPI_REQUEST_NULL, &st);
  if (status != MPI_STATUS_IGNORE)
    *status = st;
  return err;
}

DDTC_EXPORT int MPI_Waitall(int n, MPI_Request requests[],
                            MPI_Status statuses[]) {
  if (!anyPending())
    return PMPI_Waitall(n, requests, statuses);
  std::vector<OpRef> before = snapshot(n, requests);
  StatusArray st(n, statuses);
  int flag = 0, rc;
  do {
    progress();
    rc = PMPI_Testall(n, requests, &flag, st.p);
  } while (rc == MPI_SUCCESS && !flag);
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
    return rc;
  bool failed = finishAll(n, nullptr, before, requests, st.p);
  return failed || rc == MPI_ERR_IN_STATUS ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

DDTC_EXPORT int MPI_Testall(int n, MPI_Request requests[], int *flag,
                            MPI_Status statuses[]) {
  if (!anyPending())
    return PMPI_Testall(n, requests, flag, statuses);
  progress();
  std::vector<OpRef> before = snapshot(n, requests);
  StatusArray st(n, statuses);
  int rc = PMPI_Testall(n, requests, flag, st.p);
  if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || !*flag)
    return rc;
  bool failed = finishAll(n, nullptr, before, requests, st.p);
  return failed || rc == MPI_ERR_IN_STATUS ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

DDTC_EXPORT int MPI_Waitany(int n, MPI_Request requests[], int *index,
                            MPI_Status *status) {
  if (!anyPending())
    return PMPI_Waitany(n, requests, index, status);
  std::vector<OpRef> before = snapshot(n, requests);
  MPI_Status st;
  int flag = 0, rc;
  do {
    progress();
    rc = PMPI_Testany(n, requests, index, &flag, &st);
  } while (rc == MPI_SUCCESS && !flag);
  if (rc != MPI_SUCCESS || *index == MPI_UNDEFINED) {
    if (status != MPI_STATUS_IGNORE && rc == MPI_SUCCESS)
      *status = st;
    return rc;
  }
  int err = finishRequest(before[*index], requests[*index] != MPI_REQUEST_NULL,
                          &st);
  if (status != MPI_STATUS_IGNORE)
    *status = st;
  return err;
}

DDTC_EXPORT int MPI_Testany(int n, MPI_Request requests[], int *index,
                            int *flag, MPI_Status *status) {
  if (!anyPending())
    return PMPI_Testany(n, requests, index, flag, status);
  progress();
  std::vector<OpRef> before = snapshot(n, requests);
  MPI_Status st;
  int rc = PMPI_Testany(n, requests, index, flag, &st);
  if (rc != MPI_SUCCESS || !*flag || *index == MPI_UNDEFINED) {
    if (status != MPI_STATUS_IGNORE && rc == MPI_SUCCESS && *flag)
      *status = st;
    return rc;
  }
  int err = finishRequest(before[*index], requests[*index] != MPI_REQUEST_NULL,
                          &st);
  if (status != MPI_STATUS_IGNORE)
    *status = st;
  return err;
}

static int someCommon(bool wait, int n, MPI_Request requests[], int *outcount,
                      int indices[], MPI_Status statuses[]) {
  std::vector<OpRef> before = snapshot(n, requests);
  StatusArray st(n, statuses);
  int rc;
  do {
    progress();
    rc = PMPI_Testsome(n, requests, outcount, indices, st.p);
  } while (wait && rc == MPI_SUCCESS && *outcount == 0);
  if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) ||
      *outcount == MPI_UNDEFINED)
    return rc;
  bool failed =
      finishAll(*outcount, indices, before, requests, st.p);
  return failed || rc == MPI_ERR_IN_STATUS ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

DDTC_EXPORT int MPI_Waitsome(int n, MPI_Request requests[], int *outcount,
                             int indices[], MPI_Status statuses[]) {
  if (!anyPending())
    return PMPI_Waitsome(n, requests, outcount, indices, statuses);
  return someCommon(true, n, requests, outcount, indices, statuses);
}

DDTC_EXPORT int MPI_Testsome(int n, MPI_Request requests[], int *outcount,
                             int indices[], MPI_Status statuses[]) {
  if (!anyPending())
    return PMPI_Testsome(n, requests, outcount, indices, statuses);
  return someCommon(false, n, requests, outcount, indices, statuses);
}

DDTC_EXPORT int MPI_Request_free(MPI_Request *request) {
  if (anyPending())
    freeRequest(*request);
  return PMPI_Request_free(request);
}

DDTC_EXPORT int MPI_Cancel(MPI_Request *request) {
  int rc = MPI_SUCCESS;
  if (anyPending() && cancelRequest(*request, rc))
    return rc;
  return PMPI_Cancel(request);
}

DDTC_EXPORT int MPI_Request_get_status(MPI_Request request, int *flag,
                                       MPI_Status *status) {
  progress();
  OpRef op = lookupRequest(request);
  if (!op)
    return PMPI_Request_get_status(request, flag, status);
  MPI_Status st;
  int rc = PMPI_Request_get_status(request, flag, &st);
  if (rc != MPI_SUCCESS || !*flag || status == MPI_STATUS_IGNORE)
    return rc;
  // A device transfer's figures (source, tag, bytes, error, cancelled), as
  // its Wait or Test will write them; for the layer's other requests (host
  // receives of pipelined messages, staged operations) the completion
  // message's status.
  *status = st;
  peekStatus(*op, status);
  return rc;
}
