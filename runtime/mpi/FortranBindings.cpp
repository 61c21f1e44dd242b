//===- FortranBindings.cpp - Fortran entry points of libddtc-mpi ----------===//
//
// Open MPI's Fortran bindings (mpif.h, `use mpi`, and through them `use
// mpi_f08`) call PMPI_* directly, so a Fortran program never reaches the C
// MPI_* functions that libddtc-mpi interposes. This file gives it its own
// entry points: each function below converts the Fortran arguments (handles,
// statuses, request arrays, logicals, the MPI_BOTTOM / MPI_IN_PLACE /
// MPI_STATUS_IGNORE / MPI_UNWEIGHTED sentinels) and calls the C MPI_*
// function, which is the interposed wrapper of this library (never PMPI_*:
// that would bypass it; for the communicator constructors, the wrapper is
// what gives the new communicator the pipeline's private duplicates).
//
// Every function has one implementation, ddtc_fortran_<name>, exported under
// the five names a Fortran caller may use for it:
//   mpi_send_   gfortran, ifort (one trailing underscore, the usual form)
//   mpi_send__  g77 / -fsecond-underscore
//   mpi_send    no underscore (xlf, -fno-underscoring)
//   MPI_SEND    upper case (Cray, Windows-style compilers)
//   ompi_send_f what Open MPI's mpi_f08 module procedures call, with the
//               same arguments as the mpif.h form
//
// The sentinels are the addresses of Fortran common blocks that live in the
// MPI library's Fortran support (mpi_fortran_bottom_ and friends). They are
// looked up once, at the first call that needs them, with
// dlsym(RTLD_DEFAULT), so that a C program that never loads the Fortran
// libraries still loads this one; a sentinel that cannot be found is simply
// never matched.
//===----------------------------------------------------------------------===//

#include "Topology.h"

#include <mpi.h>

#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

// The value a Fortran LOGICAL .TRUE. has for the compiler of the calling
// program: 1 for gfortran, flang and nvfortran; ifort uses -1 unless built
// with -fpscomp logicals.
#ifndef DDTC_FORTRAN_TRUE
#define DDTC_FORTRAN_TRUE 1
#endif

namespace {

// INTEGERs per Fortran status (MPI_STATUS_SIZE).
#ifdef MPI_F_STATUS_SIZE
constexpr std::size_t kStatusSize = MPI_F_STATUS_SIZE;
#else
constexpr std::size_t kStatusSize = sizeof(MPI_Status) / sizeof(MPI_Fint);
#endif

constexpr MPI_Fint kTrue = DDTC_FORTRAN_TRUE;

//===-- Sentinels ---------------------------------------------------------===//

// The four name forms of one Fortran common block.
struct CommonBlock {
  const void *address[4];

  explicit CommonBlock(const char *const (&names)[4]) {
    for (int i = 0; i < 4; ++i)
      address[i] = dlsym(RTLD_DEFAULT, names[i]);
  }

  bool matches(const void *p) const {
    if (!p)
      return false;
    for (const void *a : address)
      if (a == p)
        return true;
    return false;
  }
};

struct Sentinels {
  CommonBlock bottom{{"mpi_fortran_bottom_", "mpi_fortran_bottom__",
                      "mpi_fortran_bottom", "MPI_FORTRAN_BOTTOM"}};
  CommonBlock inPlace{{"mpi_fortran_in_place_", "mpi_fortran_in_place__",
                       "mpi_fortran_in_place", "MPI_FORTRAN_IN_PLACE"}};
  CommonBlock statusIgnore{
      {"mpi_fortran_status_ignore_", "mpi_fortran_status_ignore__",
       "mpi_fortran_status_ignore", "MPI_FORTRAN_STATUS_IGNORE"}};
  CommonBlock statusesIgnore{
      {"mpi_fortran_statuses_ignore_", "mpi_fortran_statuses_ignore__",
       "mpi_fortran_statuses_ignore", "MPI_FORTRAN_STATUSES_IGNORE"}};
  CommonBlock unweighted{{"mpi_fortran_unweighted_", "mpi_fortran_unweighted__",
                          "mpi_fortran_unweighted", "MPI_FORTRAN_UNWEIGHTED"}};
  CommonBlock weightsEmpty{
      {"mpi_fortran_weights_empty_", "mpi_fortran_weights_empty__",
       "mpi_fortran_weights_empty", "MPI_FORTRAN_WEIGHTS_EMPTY"}};
};

const Sentinels &sentinels() {
  static const Sentinels s;
  return s;
}

bool isStatusIgnore(const MPI_Fint *s) {
  return !s || (MPI_F_STATUS_IGNORE && s == MPI_F_STATUS_IGNORE) ||
         sentinels().statusIgnore.matches(s);
}

bool isStatusesIgnore(const MPI_Fint *s) {
  return !s || (MPI_F_STATUSES_IGNORE && s == MPI_F_STATUSES_IGNORE) ||
         sentinels().statusesIgnore.matches(s);
}

// A buffer argument: the Fortran MPI_BOTTOM becomes the C one.
void *buffer(void *p) { return sentinels().bottom.matches(p) ? MPI_BOTTOM : p; }

// A buffer argument that may also be MPI_IN_PLACE.
void *placeBuffer(void *p) {
  return sentinels().inPlace.matches(p) ? MPI_IN_PLACE : buffer(p);
}

//===-- Handles and scalars -----------------------------------------------===//

MPI_Comm comm(const MPI_Fint *c) { return MPI_Comm_f2c(*c); }
MPI_Datatype type(const MPI_Fint *t) { return MPI_Type_f2c(*t); }
MPI_Op op(const MPI_Fint *o) { return MPI_Op_f2c(*o); }
int integer(const MPI_Fint *i) { return static_cast<int>(*i); }
MPI_Group group(const MPI_Fint *g) { return MPI_Group_f2c(*g); }
MPI_Info info(const MPI_Fint *i) { return MPI_Info_f2c(*i); }
// Every compiler's .FALSE. is 0; .TRUE. is 1 or -1 (see kTrue).
bool logical(const MPI_Fint *flag) { return *flag != 0; }

void setError(MPI_Fint *ierr, int rc) {
  if (ierr)
    *ierr = static_cast<MPI_Fint>(rc);
}

void setLogical(MPI_Fint *flag, int value) { *flag = value ? kTrue : 0; }

// The number of entries of the per-process arrays of a collective on `c`:
// the remote group's size on an intercommunicator when `remote`, else the
// (local) group's size.
int groupSize(MPI_Comm c, bool remote) {
  int inter = 0, n = 0;
  if (PMPI_Comm_test_inter(c, &inter) != MPI_SUCCESS)
    return 0;
  if (inter && remote)
    PMPI_Comm_remote_size(c, &n);
  else
    PMPI_Comm_size(c, &n);
  return n;
}

// Whether this process is the root of a rooted collective on `c`, that is,
// whether the root-only arguments are significant here.
bool isRoot(MPI_Comm c, int root) {
  int inter = 0;
  if (PMPI_Comm_test_inter(c, &inter) != MPI_SUCCESS)
    return false;
  if (inter)
    return root == MPI_ROOT;
  int rank = -1;
  PMPI_Comm_rank(c, &rank);
  return rank == root;
}

// The entries of the root-only arrays of Gatherv and Scatterv: they are read
// at the root only, and elsewhere may be shorter than the group, or dummies.
int rootBlocks(MPI_Comm c, int root) {
  return isRoot(c, root) ? groupSize(c, true) : 0;
}

//===-- Arrays ------------------------------------------------------------===//

int nonNegative(int n) { return n < 0 ? 0 : n; }

// Storage for n converted elements, on the stack when n is small.
template <typename T, std::size_t N = 32> class Scratch {
public:
  explicit Scratch(int n) {
    if (n > static_cast<int>(N)) {
      heap_.resize(static_cast<std::size_t>(n));
      data_ = heap_.data();
    }
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  T *data() { return data_; }
  T &operator[](int i) { return data_[i]; }

private:
  T local_[N];
  std::vector<T> heap_;
  T *data_ = local_;
};

// A Fortran INTEGER array read as C ints, converted element by element.
class Integers {
public:
  Integers(const MPI_Fint *f, int n) : c_(n) {
    for (int i = 0; i < n; ++i)
      c_[i] = static_cast<int>(f[i]);
  }
  const int *get() { return c_.data(); }

private:
  Scratch<int> c_;
};

// A Fortran LOGICAL array read as C ints (0 or 1).
class Logicals {
public:
  Logicals(const MPI_Fint *f, int n) : c_(n) {
    for (int i = 0; i < n; ++i)
      c_[i] = logical(f + i) ? 1 : 0;
  }
  const int *get() { return c_.data(); }

private:
  Scratch<int> c_;
};

// The weights of a distributed graph: an INTEGER array, or the Fortran
// MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY, which become the C ones.
class Weights {
public:
  Weights(const MPI_Fint *f, int n) : c_(nonNegative(n)) {
    if (sentinels().unweighted.matches(f))
      special_ = MPI_UNWEIGHTED;
    else if (sentinels().weightsEmpty.matches(f))
      special_ = MPI_WEIGHTS_EMPTY;
    else
      for (int i = 0; i < n; ++i)
        c_[i] = static_cast<int>(f[i]);
  }
  const int *get() { return special_ ? special_ : c_.data(); }

private:
  const int *special_ = nullptr;
  Scratch<int> c_;
};

//===-- Arrays of the v and w collectives ---------------------------------===//

// Whether a Fortran INTEGER array can be given to C as an int array as it
// is: true wherever MPI_Fint is int, that is, unless MPI was built for
// 8-byte default INTEGERs.
constexpr bool kIntegersAreInts =
    sizeof(MPI_Fint) == sizeof(int) && std::is_integral_v<MPI_Fint> &&
    std::is_signed_v<MPI_Fint>;

// The C arrays one collective call reads: the counts, displacements and
// datatypes of its v and w forms. INTEGER arrays go through unconverted
// where they can (kIntegersAreInts); the converted ones, and the datatype
// arrays, are owned here. A nonblocking collective reads its arrays until
// it completes (MPI 3.1, section 5.12), so those of one go with its request
// (KeptArrays) instead of going when the entry point returns.
class Arrays {
public:
  const int *integers(const MPI_Fint *f, int n) {
    if constexpr (kIntegersAreInts) {
      return reinterpret_cast<const int *>(f);
    } else {
      std::vector<int> &c = ints_.emplace_back(nonNegative(n));
      for (int i = 0; i < n; ++i)
        c[i] = static_cast<int>(f[i]);
      return c.data();
    }
  }

  const MPI_Datatype *types(const MPI_Fint *f, int n) {
    std::vector<MPI_Datatype> &c = types_.emplace_back(nonNegative(n));
    for (int i = 0; i < n; ++i)
      c[i] = MPI_Type_f2c(f[i]);
    return c.data();
  }

  bool empty() const { return ints_.empty() && types_.empty(); }

private:
  // A std::deque: the arrays already handed out never move.
  std::deque<std::vector<int>> ints_;
  std::deque<std::vector<MPI_Datatype>> types_;
};

// The arrays of the nonblocking collectives started from Fortran, by the
// Fortran handle of their request, until the Fortran Wait, Test or
// Request_free that completes the request. A request completed from C
// keeps its arrays until the end of the program (and, should MPI hand its
// handle to a new request, until that one completes).
class KeptArrays {
public:
  void keep(MPI_Fint request, Arrays arrays) {
    if (arrays.empty())
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    byRequest_.insert_or_assign(request, std::move(arrays));
    any_.store(true, std::memory_order_relaxed);
  }

  void release(MPI_Fint request) {
    // Most programs never keep any: their completions take no lock.
    if (!any_.load(std::memory_order_relaxed))
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    byRequest_.erase(request);
  }

private:
  std::mutex mutex_;
  std::atomic<bool> any_{false};
  std::unordered_map<MPI_Fint, Arrays> byRequest_;
};

KeptArrays &keptArrays() {
  static KeptArrays k;
  return k;
}

// Called when the request whose Fortran handle was `request` is written
// back as MPI_REQUEST_NULL: it completed (or was freed).
void requestDone(MPI_Fint request, MPI_Request now) {
  if (now == MPI_REQUEST_NULL)
    keptArrays().release(request);
}

// The counts and displacements of one side of a v or w collective:
// displacements are INTEGERs (Displ int), or INTEGER(KIND=MPI_ADDRESS_KIND)
// (Displ MPI_Aint), which are MPI_Aint as they are.
template <typename Displ> struct Blocks {
  const int *counts;
  const Displ *displs;
};

Blocks<int> blocks(Arrays &a, const MPI_Fint *counts, const MPI_Fint *displs,
                   int n) {
  return {a.integers(counts, n), a.integers(displs, n)};
}

Blocks<MPI_Aint> blocks(Arrays &a, const MPI_Fint *counts,
                        const MPI_Aint *displs, int n) {
  return {a.integers(counts, n), displs};
}

// How many blocks each side of an exchange has: one per process of the
// (remote) group, or one per neighbour of the communicator's topology.
struct Sides {
  int sent, received;
};

Sides groupSides(MPI_Comm c) {
  int n = groupSize(c, true);
  return {n, n};
}

Sides neighbourSides(MPI_Comm c) {
  int in = 0, out = 0;
  ddtc::mpi::neighbourDegrees(c, in, out);
  return {out, in};
}

int receivedFromGroup(MPI_Comm c) { return groupSides(c).received; }
int receivedFromNeighbours(MPI_Comm c) { return neighbourSides(c).received; }

// An array of Fortran request handles, written back after the call: a
// completed nonpersistent request becomes MPI_REQUEST_NULL.
class Requests {
public:
  Requests(MPI_Fint *f, int n) : f_(f), n_(n), c_(n) {
    for (int i = 0; i < n; ++i)
      c_[i] = MPI_Request_f2c(f[i]);
  }
  MPI_Request *get() { return c_.data(); }
  void put(int i) {
    requestDone(f_[i], c_[i]);
    f_[i] = MPI_Request_c2f(c_[i]);
  }
  void putAll() {
    for (int i = 0; i < n_; ++i)
      put(i);
  }
  // The request a Waitany (Testany, Waitsome...) says it completed, when
  // `i` names one.
  void putCompleted(int i) {
    if (i != MPI_UNDEFINED && i >= 0 && i < n_)
      put(i);
  }

private:
  MPI_Fint *f_;
  int n_;
  Scratch<MPI_Request> c_;
};

// One Fortran status argument (or MPI_STATUS_IGNORE).
class StatusOut {
public:
  explicit StatusOut(MPI_Fint *f) : f_(isStatusIgnore(f) ? nullptr : f) {}
  MPI_Status *get() { return f_ ? &c_ : MPI_STATUS_IGNORE; }
  void put() {
    if (f_)
      MPI_Status_c2f(&c_, f_);
  }

private:
  MPI_Fint *f_;
  MPI_Status c_{};
};

// An array of Fortran statuses (or MPI_STATUSES_IGNORE).
class StatusesOut {
public:
  StatusesOut(MPI_Fint *f, int n)
      : f_(isStatusesIgnore(f) ? nullptr : f), c_(f_ ? n : 0) {}
  MPI_Status *get() { return f_ ? c_.data() : MPI_STATUSES_IGNORE; }
  void put(int i) {
    if (f_)
      MPI_Status_c2f(&c_[i], f_ + static_cast<std::size_t>(i) * kStatusSize);
  }
  void putAll(int n) {
    for (int i = 0; i < n; ++i)
      put(i);
  }

private:
  MPI_Fint *f_;
  Scratch<MPI_Status, 8> c_;
};

// Fortran indices count from 1.
MPI_Fint fortranIndex(int c) {
  return c == MPI_UNDEFINED ? MPI_UNDEFINED : static_cast<MPI_Fint>(c + 1);
}

//===-- Outputs -----------------------------------------------------------===//
//
// An output argument is a C value the call writes, converted back into the
// Fortran argument by put() once the call has succeeded: a failed call
// leaves the caller's variables as they were.

// How a handle (or an INTEGER) converts between C and Fortran.
struct AsComm {
  using C = MPI_Comm;
  static C null() { return MPI_COMM_NULL; }
  static MPI_Fint toFortran(C c) { return MPI_Comm_c2f(c); }
};
struct AsRequest {
  using C = MPI_Request;
  static C null() { return MPI_REQUEST_NULL; }
  static C toC(MPI_Fint f) { return MPI_Request_f2c(f); }
  static MPI_Fint toFortran(C c) { return MPI_Request_c2f(c); }
};
struct AsMessage {
  using C = MPI_Message;
  static C null() { return MPI_MESSAGE_NULL; }
  static C toC(MPI_Fint f) { return MPI_Message_f2c(f); }
  static MPI_Fint toFortran(C c) { return MPI_Message_c2f(c); }
};
struct AsType {
  using C = MPI_Datatype;
  static C toC(MPI_Fint f) { return MPI_Type_f2c(f); }
  static MPI_Fint toFortran(C c) { return MPI_Type_c2f(c); }
};
struct AsInt {
  using C = int;
  static C null() { return 0; }
  static C toC(MPI_Fint f) { return static_cast<int>(f); }
  static MPI_Fint toFortran(C c) { return static_cast<MPI_Fint>(c); }
};

// An argument the call only writes (a new communicator, request, count).
template <typename As> class Out {
public:
  explicit Out(MPI_Fint *f) : f_(f), c_(As::null()) {}
  typename As::C *get() { return &c_; }
  void put() { *f_ = As::toFortran(c_); }

protected:
  Out(MPI_Fint *f, typename As::C c) : f_(f), c_(c) {}

private:
  MPI_Fint *f_;
  typename As::C c_;
};

// An argument the call reads and writes: the request MPI_Wait frees, the
// message MPI_Mrecv takes, the position MPI_Pack advances.
template <typename As> class InOut : public Out<As> {
public:
  explicit InOut(MPI_Fint *f) : Out<As>(f, As::toC(*f)) {}
};

using CommOut = Out<AsComm>;
using RequestOut = Out<AsRequest>;
// A request the call may complete or free (Wait, Test, Request_free): the
// arrays kept for it go once it has.
class RequestInOut : public InOut<AsRequest> {
public:
  explicit RequestInOut(MPI_Fint *f) : InOut<AsRequest>(f), before_(*f) {}
  void put() {
    requestDone(before_, *get());
    InOut<AsRequest>::put();
  }

private:
  MPI_Fint before_;
};

using MessageOut = Out<AsMessage>;
using MessageInOut = InOut<AsMessage>;
using TypeInOut = InOut<AsType>;
using IntOut = Out<AsInt>;
using IntInOut = InOut<AsInt>;

// The flag of a call that may find nothing (Test, Iprobe).
class LogicalOut {
public:
  explicit LogicalOut(MPI_Fint *f) : f_(f) {}
  int *get() { return &c_; }
  bool isTrue() const { return c_ != 0; }
  void put() { setLogical(f_, c_); }

private:
  MPI_Fint *f_;
  int c_ = 0;
};

// Sets the error code of a call and, when it succeeded, writes its outputs
// back.
template <typename... Outs> void finish(MPI_Fint *ierr, int rc, Outs &...outs) {
  if (rc == MPI_SUCCESS)
    (outs.put(), ...);
  setError(ierr, rc);
}

// The same for a call that may find nothing: its flag is written back, and
// the other outputs only when it is set.
template <typename... Outs>
void finishIfFound(MPI_Fint *ierr, int rc, LogicalOut &flag, Outs &...outs) {
  if (rc == MPI_SUCCESS) {
    flag.put();
    if (flag.isTrue())
      (outs.put(), ...);
  }
  setError(ierr, rc);
}

// How a collective entry point runs its C call: Blocking, or Started, which
// writes the new request back and hands it the call's arrays. `call` takes
// the request argument of the nonblocking C function, or nothing.
class Blocking {
public:
  explicit Blocking(MPI_Fint *ierr) : ierr_(ierr) {}
  Arrays &arrays() { return arrays_; }
  template <typename Call> void run(Call call) { setError(ierr_, call()); }

private:
  MPI_Fint *ierr_;
  Arrays arrays_;
};

class Started {
public:
  Started(MPI_Fint *request, MPI_Fint *ierr) : request_(request), ierr_(ierr) {}
  Arrays &arrays() { return arrays_; }
  template <typename Call> void run(Call call) {
    RequestOut r(request_);
    int rc = call(r.get());
    if (rc == MPI_SUCCESS) {
      r.put();
      keptArrays().keep(*request_, std::move(arrays_));
    }
    setError(ierr_, rc);
  }

private:
  MPI_Fint *request_;
  MPI_Fint *ierr_;
  Arrays arrays_;
};

// The trailing Fortran arguments of an entry point run by Blocking or
// Started, and the arguments that make one.
#define DDTC_FORTRAN_TAIL_Blocking MPI_Fint *ierr
#define DDTC_FORTRAN_TAIL_Started MPI_Fint *request, MPI_Fint *ierr
#define DDTC_FORTRAN_RUN_Blocking ierr
#define DDTC_FORTRAN_RUN_Started request, ierr

// Whether a call on an array of requests wrote its outputs: also when it
// failed on some of them (MPI_ERR_IN_STATUS, their statuses say which).
bool wroteStatuses(int rc) {
  return rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS;
}

} // namespace

//===-- Entry points ------------------------------------------------------===//

// Exports the implementation ddtc_fortran_<name> under the Fortran names of
// MPI_<Name> (see the file comment).
#define DDTC_FORTRAN_ALIAS(impl, name)                                         \
  extern "C" __attribute__((alias(#impl), visibility("default")))              \
  decltype(impl) name;
#define DDTC_FORTRAN(lower, upper)                                             \
  DDTC_FORTRAN_ALIAS(ddtc_fortran_##lower, mpi_##lower##_)                     \
  DDTC_FORTRAN_ALIAS(ddtc_fortran_##lower, mpi_##lower##__)                    \
  DDTC_FORTRAN_ALIAS(ddtc_fortran_##lower, mpi_##lower)                        \
  DDTC_FORTRAN_ALIAS(ddtc_fortran_##lower, MPI_##upper)                        \
  DDTC_FORTRAN_ALIAS(ddtc_fortran_##lower, ompi_##lower##_f)

#define DDTC_FORTRAN_IMPL extern "C" __attribute__((visibility("hidden"))) void

//===-- Start and end -----------------------------------------------------===//

DDTC_FORTRAN_IMPL ddtc_fortran_init(MPI_Fint *ierr) {
  setError(ierr, MPI_Init(nullptr, nullptr));
}
DDTC_FORTRAN(init, INIT)

DDTC_FORTRAN_IMPL ddtc_fortran_init_thread(MPI_Fint *required,
                                           MPI_Fint *provided, MPI_Fint *ierr) {
  IntOut p(provided);
  finish(ierr, MPI_Init_thread(nullptr, nullptr, integer(required), p.get()),
         p);
}
DDTC_FORTRAN(init_thread, INIT_THREAD)

DDTC_FORTRAN_IMPL ddtc_fortran_finalize(MPI_Fint *ierr) {
  setError(ierr, MPI_Finalize());
}
DDTC_FORTRAN(finalize, FINALIZE)

//===-- Point to point ----------------------------------------------------===//

#define DDTC_FORTRAN_SEND(lower, upper, Name)                                  \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(void *buf, MPI_Fint *count,           \
                                         MPI_Fint *datatype, MPI_Fint *dest,   \
                                         MPI_Fint *tag, MPI_Fint *c,           \
                                         MPI_Fint *ierr) {                     \
    setError(ierr, MPI_##Name(buffer(buf), integer(count), type(datatype),     \
                              integer(dest), integer(tag), comm(c)));          \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_SEND(send, SEND, Send)
DDTC_FORTRAN_SEND(bsend, BSEND, Bsend)
DDTC_FORTRAN_SEND(ssend, SSEND, Ssend)
DDTC_FORTRAN_SEND(rsend, RSEND, Rsend)

// The nonblocking and persistent sends and receives: a buffer, a count, a
// type, a peer, a tag, a communicator and a new request.
#define DDTC_FORTRAN_ISEND(lower, upper, Name)                                 \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *peer,          \
      MPI_Fint *tag, MPI_Fint *c, MPI_Fint *request, MPI_Fint *ierr) {         \
    RequestOut r(request);                                                     \
    finish(ierr,                                                               \
           MPI_##Name(buffer(buf), integer(count), type(datatype),             \
                      integer(peer), integer(tag), comm(c), r.get()),          \
           r);                                                                 \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_ISEND(isend, ISEND, Isend)
DDTC_FORTRAN_ISEND(ibsend, IBSEND, Ibsend)
DDTC_FORTRAN_ISEND(issend, ISSEND, Issend)
DDTC_FORTRAN_ISEND(irsend, IRSEND, Irsend)
DDTC_FORTRAN_ISEND(send_init, SEND_INIT, Send_init)
DDTC_FORTRAN_ISEND(bsend_init, BSEND_INIT, Bsend_init)
DDTC_FORTRAN_ISEND(ssend_init, SSEND_INIT, Ssend_init)
DDTC_FORTRAN_ISEND(rsend_init, RSEND_INIT, Rsend_init)
DDTC_FORTRAN_ISEND(irecv, IRECV, Irecv)
DDTC_FORTRAN_ISEND(recv_init, RECV_INIT, Recv_init)

DDTC_FORTRAN_IMPL ddtc_fortran_recv(void *buf, MPI_Fint *count,
                                    MPI_Fint *datatype, MPI_Fint *source,
                                    MPI_Fint *tag, MPI_Fint *c,
                                    MPI_Fint *status, MPI_Fint *ierr) {
  StatusOut s(status);
  finish(ierr,
         MPI_Recv(buffer(buf), integer(count), type(datatype), integer(source),
                  integer(tag), comm(c), s.get()),
         s);
}
DDTC_FORTRAN(recv, RECV)

DDTC_FORTRAN_IMPL ddtc_fortran_sendrecv(
    void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, MPI_Fint *dest,
    MPI_Fint *sendtag, void *recvbuf, MPI_Fint *recvcount, MPI_Fint *recvtype,
    MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *c, MPI_Fint *status,
    MPI_Fint *ierr) {
  StatusOut s(status);
  finish(ierr,
         MPI_Sendrecv(buffer(sendbuf), integer(sendcount), type(sendtype),
                      integer(dest), integer(sendtag), buffer(recvbuf),
                      integer(recvcount), type(recvtype), integer(source),
                      integer(recvtag), comm(c), s.get()),
         s);
}
DDTC_FORTRAN(sendrecv, SENDRECV)

DDTC_FORTRAN_IMPL ddtc_fortran_sendrecv_replace(
    void *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *dest,
    MPI_Fint *sendtag, MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *c,
    MPI_Fint *status, MPI_Fint *ierr) {
  StatusOut s(status);
  finish(ierr,
         MPI_Sendrecv_replace(buffer(buf), integer(count), type(datatype),
                              integer(dest), integer(sendtag), integer(source),
                              integer(recvtag), comm(c), s.get()),
         s);
}
DDTC_FORTRAN(sendrecv_replace, SENDRECV_REPLACE)

//===-- Probes and matched receives ---------------------------------------===//

DDTC_FORTRAN_IMPL ddtc_fortran_probe(MPI_Fint *source, MPI_Fint *tag,
                                     MPI_Fint *c, MPI_Fint *status,
                                     MPI_Fint *ierr) {
  StatusOut s(status);
  finish(ierr, MPI_Probe(integer(source), integer(tag), comm(c), s.get()), s);
}
DDTC_FORTRAN(probe, PROBE)

DDTC_FORTRAN_IMPL ddtc_fortran_iprobe(MPI_Fint *source, MPI_Fint *tag,
                                      MPI_Fint *c, MPI_Fint *flag,
                                      MPI_Fint *status, MPI_Fint *ierr) {
  LogicalOut f(flag);
  StatusOut s(status);
  finishIfFound(
      ierr,
      MPI_Iprobe(integer(source), integer(tag), comm(c), f.get(), s.get()), f,
      s);
}
DDTC_FORTRAN(iprobe, IPROBE)

DDTC_FORTRAN_IMPL ddtc_fortran_mprobe(MPI_Fint *source, MPI_Fint *tag,
                                      MPI_Fint *c, MPI_Fint *message,
                                      MPI_Fint *status, MPI_Fint *ierr) {
  MessageOut m(message);
  StatusOut s(status);
  finish(ierr,
         MPI_Mprobe(integer(source), integer(tag), comm(c), m.get(), s.get()),
         m, s);
}
DDTC_FORTRAN(mprobe, MPROBE)

DDTC_FORTRAN_IMPL ddtc_fortran_improbe(MPI_Fint *source, MPI_Fint *tag,
                                       MPI_Fint *c, MPI_Fint *flag,
                                       MPI_Fint *message, MPI_Fint *status,
                                       MPI_Fint *ierr) {
  LogicalOut f(flag);
  MessageOut m(message);
  StatusOut s(status);
  finishIfFound(ierr,
                MPI_Improbe(integer(source), integer(tag), comm(c), f.get(),
                            m.get(), s.get()),
                f, m, s);
}
DDTC_FORTRAN(improbe, IMPROBE)

DDTC_FORTRAN_IMPL ddtc_fortran_mrecv(void *buf, MPI_Fint *count,
                                     MPI_Fint *datatype, MPI_Fint *message,
                                     MPI_Fint *status, MPI_Fint *ierr) {
  MessageInOut m(message);
  StatusOut s(status);
  finish(
      ierr,
      MPI_Mrecv(buffer(buf), integer(count), type(datatype), m.get(), s.get()),
      m, s);
}
DDTC_FORTRAN(mrecv, MRECV)

DDTC_FORTRAN_IMPL ddtc_fortran_imrecv(void *buf, MPI_Fint *count,
                                      MPI_Fint *datatype, MPI_Fint *message,
                                      MPI_Fint *request, MPI_Fint *ierr) {
  MessageInOut m(message);
  RequestOut r(request);
  finish(
      ierr,
      MPI_Imrecv(buffer(buf), integer(count), type(datatype), m.get(), r.get()),
      m, r);
}
DDTC_FORTRAN(imrecv, IMRECV)

//===-- Requests ----------------------------------------------------------===//

// Start, Request_free, Type_commit and Type_free: one handle, which the call
// reads and may change.
#define DDTC_FORTRAN_HANDLE(lower, upper, Name, HandleInOut)                   \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(MPI_Fint *handle, MPI_Fint *ierr) {   \
    HandleInOut h(handle);                                                     \
    finish(ierr, MPI_##Name(h.get()), h);                                      \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_HANDLE(start, START, Start, RequestInOut)

DDTC_FORTRAN_IMPL ddtc_fortran_startall(MPI_Fint *count, MPI_Fint *requests,
                                        MPI_Fint *ierr) {
  Requests r(requests, nonNegative(integer(count)));
  int rc = MPI_Startall(integer(count), r.get());
  if (rc == MPI_SUCCESS)
    r.putAll();
  setError(ierr, rc);
}
DDTC_FORTRAN(startall, STARTALL)

DDTC_FORTRAN_IMPL ddtc_fortran_wait(MPI_Fint *request, MPI_Fint *status,
                                    MPI_Fint *ierr) {
  RequestInOut r(request);
  StatusOut s(status);
  finish(ierr, MPI_Wait(r.get(), s.get()), r, s);
}
DDTC_FORTRAN(wait, WAIT)

DDTC_FORTRAN_IMPL ddtc_fortran_waitall(MPI_Fint *count, MPI_Fint *requests,
                                       MPI_Fint *statuses, MPI_Fint *ierr) {
  int n = nonNegative(integer(count));
  Requests r(requests, n);
  StatusesOut s(statuses, n);
  int rc = MPI_Waitall(integer(count), r.get(), s.get());
  if (wroteStatuses(rc)) {
    r.putAll();
    s.putAll(n);
  }
  setError(ierr, rc);
}
DDTC_FORTRAN(waitall, WAITALL)

DDTC_FORTRAN_IMPL ddtc_fortran_waitany(MPI_Fint *count, MPI_Fint *requests,
                                       MPI_Fint *index, MPI_Fint *status,
                                       MPI_Fint *ierr) {
  Requests r(requests, nonNegative(integer(count)));
  StatusOut s(status);
  int i = MPI_UNDEFINED;
  int rc = MPI_Waitany(integer(count), r.get(), &i, s.get());
  if (rc == MPI_SUCCESS) {
    r.putCompleted(i);
    *index = fortranIndex(i);
    s.put();
  }
  setError(ierr, rc);
}
DDTC_FORTRAN(waitany, WAITANY)

namespace {
// Waitsome and Testsome: the requests that completed, their (Fortran)
// indices and their statuses written back.
using SomeCall = int (*)(int, MPI_Request[], int *, int[], MPI_Status[]);
void completeSome(SomeCall call, MPI_Fint *incount, MPI_Fint *requests,
                  MPI_Fint *outcount, MPI_Fint *indices, MPI_Fint *statuses,
                  MPI_Fint *ierr) {
  int n = nonNegative(integer(incount));
  Requests r(requests, n);
  StatusesOut s(statuses, n);
  Scratch<int> c(n);
  int out = MPI_UNDEFINED;
  int rc = call(integer(incount), r.get(), &out, c.data(), s.get());
  if (wroteStatuses(rc)) {
    *outcount = static_cast<MPI_Fint>(out);
    for (int k = 0; out != MPI_UNDEFINED && k < out; ++k) {
      r.putCompleted(c[k]);
      indices[k] = fortranIndex(c[k]);
      s.put(k);
    }
  }
  setError(ierr, rc);
}
} // namespace

DDTC_FORTRAN_IMPL ddtc_fortran_waitsome(MPI_Fint *incount, MPI_Fint *requests,
                                        MPI_Fint *outcount, MPI_Fint *indices,
                                        MPI_Fint *statuses, MPI_Fint *ierr) {
  completeSome(MPI_Waitsome, incount, requests, outcount, indices, statuses,
               ierr);
}
DDTC_FORTRAN(waitsome, WAITSOME)

DDTC_FORTRAN_IMPL ddtc_fortran_test(MPI_Fint *request, MPI_Fint *flag,
                                    MPI_Fint *status, MPI_Fint *ierr) {
  RequestInOut r(request);
  LogicalOut f(flag);
  StatusOut s(status);
  finishIfFound(ierr, MPI_Test(r.get(), f.get(), s.get()), f, r, s);
}
DDTC_FORTRAN(test, TEST)

DDTC_FORTRAN_IMPL ddtc_fortran_testall(MPI_Fint *count, MPI_Fint *requests,
                                       MPI_Fint *flag, MPI_Fint *statuses,
                                       MPI_Fint *ierr) {
  int n = nonNegative(integer(count));
  Requests r(requests, n);
  LogicalOut f(flag);
  StatusesOut s(statuses, n);
  int rc = MPI_Testall(integer(count), r.get(), f.get(), s.get());
  if (wroteStatuses(rc)) {
    f.put();
    if (f.isTrue()) {
      r.putAll();
      s.putAll(n);
    }
  }
  setError(ierr, rc);
}
DDTC_FORTRAN(testall, TESTALL)

DDTC_FORTRAN_IMPL ddtc_fortran_testany(MPI_Fint *count, MPI_Fint *requests,
                                       MPI_Fint *index, MPI_Fint *flag,
                                       MPI_Fint *status, MPI_Fint *ierr) {
  Requests r(requests, nonNegative(integer(count)));
  LogicalOut f(flag);
  StatusOut s(status);
  int i = MPI_UNDEFINED;
  int rc = MPI_Testany(integer(count), r.get(), &i, f.get(), s.get());
  if (rc == MPI_SUCCESS) {
    // The index is MPI_UNDEFINED when nothing completed: written either way.
    f.put();
    *index = fortranIndex(i);
    if (f.isTrue()) {
      r.putCompleted(i);
      s.put();
    }
  }
  setError(ierr, rc);
}
DDTC_FORTRAN(testany, TESTANY)

DDTC_FORTRAN_IMPL ddtc_fortran_testsome(MPI_Fint *incount, MPI_Fint *requests,
                                        MPI_Fint *outcount, MPI_Fint *indices,
                                        MPI_Fint *statuses, MPI_Fint *ierr) {
  completeSome(MPI_Testsome, incount, requests, outcount, indices, statuses,
               ierr);
}
DDTC_FORTRAN(testsome, TESTSOME)

DDTC_FORTRAN_HANDLE(request_free, REQUEST_FREE, Request_free, RequestInOut)

DDTC_FORTRAN_IMPL ddtc_fortran_cancel(MPI_Fint *request, MPI_Fint *ierr) {
  MPI_Request r = MPI_Request_f2c(*request);
  setError(ierr, MPI_Cancel(&r));
}
DDTC_FORTRAN(cancel, CANCEL)

DDTC_FORTRAN_IMPL ddtc_fortran_request_get_status(MPI_Fint *request,
                                                  MPI_Fint *flag,
                                                  MPI_Fint *status,
                                                  MPI_Fint *ierr) {
  LogicalOut f(flag);
  StatusOut s(status);
  finishIfFound(
      ierr, MPI_Request_get_status(MPI_Request_f2c(*request), f.get(), s.get()),
      f, s);
}
DDTC_FORTRAN(request_get_status, REQUEST_GET_STATUS)

//===-- Statuses and datatypes --------------------------------------------===//

namespace {
// Get_count and Get_elements: a count of `datatype` read from a Fortran
// status.
using CountCall = int (*)(const MPI_Status *, MPI_Datatype, int *);
void countOf(CountCall call, MPI_Fint *status, MPI_Fint *datatype,
             MPI_Fint *count, MPI_Fint *ierr) {
  MPI_Status s{};
  IntOut n(count);
  int rc = MPI_Status_f2c(status, &s);
  if (rc == MPI_SUCCESS)
    rc = call(&s, type(datatype), n.get());
  finish(ierr, rc, n);
}
} // namespace

DDTC_FORTRAN_IMPL ddtc_fortran_get_count(MPI_Fint *status, MPI_Fint *datatype,
                                         MPI_Fint *count, MPI_Fint *ierr) {
  countOf(MPI_Get_count, status, datatype, count, ierr);
}
DDTC_FORTRAN(get_count, GET_COUNT)

DDTC_FORTRAN_IMPL ddtc_fortran_get_elements(MPI_Fint *status,
                                            MPI_Fint *datatype,
                                            MPI_Fint *count, MPI_Fint *ierr) {
  countOf(MPI_Get_elements, status, datatype, count, ierr);
}
DDTC_FORTRAN(get_elements, GET_ELEMENTS)

DDTC_FORTRAN_HANDLE(type_commit, TYPE_COMMIT, Type_commit, TypeInOut)
DDTC_FORTRAN_HANDLE(type_free, TYPE_FREE, Type_free, TypeInOut)

DDTC_FORTRAN_IMPL ddtc_fortran_pack(void *inbuf, MPI_Fint *incount,
                                    MPI_Fint *datatype, void *outbuf,
                                    MPI_Fint *outsize, MPI_Fint *position,
                                    MPI_Fint *c, MPI_Fint *ierr) {
  IntInOut pos(position);
  finish(ierr,
         MPI_Pack(buffer(inbuf), integer(incount), type(datatype), outbuf,
                  integer(outsize), pos.get(), comm(c)),
         pos);
}
DDTC_FORTRAN(pack, PACK)

DDTC_FORTRAN_IMPL ddtc_fortran_unpack(void *inbuf, MPI_Fint *insize,
                                      MPI_Fint *position, void *outbuf,
                                      MPI_Fint *outcount, MPI_Fint *datatype,
                                      MPI_Fint *c, MPI_Fint *ierr) {
  IntInOut pos(position);
  finish(ierr,
         MPI_Unpack(inbuf, integer(insize), pos.get(), buffer(outbuf),
                    integer(outcount), type(datatype), comm(c)),
         pos);
}
DDTC_FORTRAN(unpack, UNPACK)

DDTC_FORTRAN_IMPL ddtc_fortran_pack_size(MPI_Fint *incount, MPI_Fint *datatype,
                                         MPI_Fint *c, MPI_Fint *size,
                                         MPI_Fint *ierr) {
  IntOut n(size);
  finish(ierr,
         MPI_Pack_size(integer(incount), type(datatype), comm(c), n.get()), n);
}
DDTC_FORTRAN(pack_size, PACK_SIZE)

//===-- Collectives -------------------------------------------------------===//
//
// Each shape once, as a macro made twice: blocking (Mode Blocking) and
// nonblocking (Mode Started, one request argument more). `m` is the mode,
// `request...` the request argument of the C function, if any.

// The barrier too: without the progress thread the C wrapper runs it as
// MPI_Ibarrier, and a rank calling it from Fortran must take the same form
// as a rank calling it from C.
DDTC_FORTRAN_IMPL ddtc_fortran_barrier(MPI_Fint *c, MPI_Fint *ierr) {
  setError(ierr, MPI_Barrier(comm(c)));
}
DDTC_FORTRAN(barrier, BARRIER)

#define DDTC_FORTRAN_BCAST(lower, upper, Name, Mode)                           \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(void *buf, MPI_Fint *count,           \
                                         MPI_Fint *datatype, MPI_Fint *root,   \
                                         MPI_Fint *c,                          \
                                         DDTC_FORTRAN_TAIL_##Mode) {           \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(buffer(buf), integer(count), type(datatype),           \
                        integer(root), comm(c), request...);                   \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_BCAST(bcast, BCAST, Bcast, Blocking)
DDTC_FORTRAN_BCAST(ibcast, IBCAST, Ibcast, Started)

// Gather and Scatter: a buffer, a count and a type on each side, a root;
// the side that may be MPI_IN_PLACE is the one given placeBuffer.
#define DDTC_FORTRAN_ROOTED(lower, upper, Name, Mode, sendBuffer, recvBuffer)  \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,   \
      MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *c,    \
      DDTC_FORTRAN_TAIL_##Mode) {                                              \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(sendBuffer(sendbuf), integer(sendcount),               \
                        type(sendtype), recvBuffer(recvbuf),                   \
                        integer(recvcount), type(recvtype), integer(root),     \
                        comm(c), request...);                                  \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_ROOTED(gather, GATHER, Gather, Blocking, placeBuffer, buffer)
DDTC_FORTRAN_ROOTED(igather, IGATHER, Igather, Started, placeBuffer, buffer)
DDTC_FORTRAN_ROOTED(scatter, SCATTER, Scatter, Blocking, buffer, placeBuffer)
DDTC_FORTRAN_ROOTED(iscatter, ISCATTER, Iscatter, Started, buffer,
                    placeBuffer)

#define DDTC_FORTRAN_GATHERV(lower, upper, Name, Mode)                         \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,   \
      MPI_Fint *recvcounts, MPI_Fint *displs, MPI_Fint *recvtype,              \
      MPI_Fint *root, MPI_Fint *c, DDTC_FORTRAN_TAIL_##Mode) {                 \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    MPI_Comm cc = comm(c);                                                     \
    Blocks<int> recv = blocks(m.arrays(), recvcounts, displs,                  \
                              rootBlocks(cc, integer(root)));                  \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(placeBuffer(sendbuf), integer(sendcount),              \
                        type(sendtype), buffer(recvbuf), recv.counts,          \
                        recv.displs, type(recvtype), integer(root), cc,        \
                        request...);                                           \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_GATHERV(gatherv, GATHERV, Gatherv, Blocking)
DDTC_FORTRAN_GATHERV(igatherv, IGATHERV, Igatherv, Started)

#define DDTC_FORTRAN_SCATTERV(lower, upper, Name, Mode)                        \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *displs,                   \
      MPI_Fint *sendtype, void *recvbuf, MPI_Fint *recvcount,                  \
      MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *c,                         \
      DDTC_FORTRAN_TAIL_##Mode) {                                              \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    MPI_Comm cc = comm(c);                                                     \
    Blocks<int> sent = blocks(m.arrays(), sendcounts, displs,                  \
                              rootBlocks(cc, integer(root)));                  \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(buffer(sendbuf), sent.counts, sent.displs,             \
                        type(sendtype), placeBuffer(recvbuf),                  \
                        integer(recvcount), type(recvtype), integer(root), cc, \
                        request...);                                           \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_SCATTERV(scatterv, SCATTERV, Scatterv, Blocking)
DDTC_FORTRAN_SCATTERV(iscatterv, ISCATTERV, Iscatterv, Started)

// Allgather and Alltoall, and their neighbourhood forms: a send buffer (or
// MPI_IN_PLACE, which the neighbourhood ones do not allow), a count and a
// type, a receive buffer, a count and a type per block, a communicator.
#define DDTC_FORTRAN_ALL_TO_ALL(lower, upper, Name, Mode)                      \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,   \
      MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *c,                    \
      DDTC_FORTRAN_TAIL_##Mode) {                                              \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(placeBuffer(sendbuf), integer(sendcount),              \
                        type(sendtype), buffer(recvbuf), integer(recvcount),   \
                        type(recvtype), comm(c), request...);                  \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_ALL_TO_ALL(allgather, ALLGATHER, Allgather, Blocking)
DDTC_FORTRAN_ALL_TO_ALL(iallgather, IALLGATHER, Iallgather, Started)
DDTC_FORTRAN_ALL_TO_ALL(alltoall, ALLTOALL, Alltoall, Blocking)
DDTC_FORTRAN_ALL_TO_ALL(ialltoall, IALLTOALL, Ialltoall, Started)
DDTC_FORTRAN_ALL_TO_ALL(neighbor_allgather, NEIGHBOR_ALLGATHER,
                        Neighbor_allgather, Blocking)
DDTC_FORTRAN_ALL_TO_ALL(ineighbor_allgather, INEIGHBOR_ALLGATHER,
                        Ineighbor_allgather, Started)
DDTC_FORTRAN_ALL_TO_ALL(neighbor_alltoall, NEIGHBOR_ALLTOALL,
                        Neighbor_alltoall, Blocking)
DDTC_FORTRAN_ALL_TO_ALL(ineighbor_alltoall, INEIGHBOR_ALLTOALL,
                        Ineighbor_alltoall, Started)

// Allgatherv: a count and a type to send, counts and displacements per
// received block (`receivedBlocks` says how many).
#define DDTC_FORTRAN_ALL_GATHER_V(lower, upper, Name, Mode, receivedBlocks)    \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, void *recvbuf,   \
      MPI_Fint *recvcounts, MPI_Fint *displs, MPI_Fint *recvtype, MPI_Fint *c, \
      DDTC_FORTRAN_TAIL_##Mode) {                                              \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    MPI_Comm cc = comm(c);                                                     \
    Blocks<int> recv =                                                         \
        blocks(m.arrays(), recvcounts, displs, receivedBlocks(cc));            \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(placeBuffer(sendbuf), integer(sendcount),              \
                        type(sendtype), buffer(recvbuf), recv.counts,          \
                        recv.displs, type(recvtype), cc, request...);          \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_ALL_GATHER_V(allgatherv, ALLGATHERV, Allgatherv, Blocking,
                          receivedFromGroup)
DDTC_FORTRAN_ALL_GATHER_V(iallgatherv, IALLGATHERV, Iallgatherv, Started,
                          receivedFromGroup)
DDTC_FORTRAN_ALL_GATHER_V(neighbor_allgatherv, NEIGHBOR_ALLGATHERV,
                          Neighbor_allgatherv, Blocking, receivedFromNeighbours)
DDTC_FORTRAN_ALL_GATHER_V(ineighbor_allgatherv, INEIGHBOR_ALLGATHERV,
                          Ineighbor_allgatherv, Started, receivedFromNeighbours)

// Alltoallv: counts and displacements per block on each side (`sides` says
// how many), one type a side. With MPI_IN_PLACE the send arrays are not
// read: the receive ones stand in for them.
#define DDTC_FORTRAN_ALL_TO_ALL_V(lower, upper, Name, Mode, sides)             \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls,                  \
      MPI_Fint *sendtype, void *recvbuf, MPI_Fint *recvcounts,                 \
      MPI_Fint *rdispls, MPI_Fint *recvtype, MPI_Fint *c,                      \
      DDTC_FORTRAN_TAIL_##Mode) {                                              \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    MPI_Comm cc = comm(c);                                                     \
    Sides n = sides(cc);                                                       \
    void *send = placeBuffer(sendbuf);                                         \
    Blocks<int> received = blocks(m.arrays(), recvcounts, rdispls, n.received); \
    Blocks<int> sent = send == MPI_IN_PLACE                                    \
                           ? received                                          \
                           : blocks(m.arrays(), sendcounts, sdispls, n.sent);  \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(send, sent.counts, sent.displs, type(sendtype),        \
                        buffer(recvbuf), received.counts, received.displs,     \
                        type(recvtype), cc, request...);                       \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_ALL_TO_ALL_V(alltoallv, ALLTOALLV, Alltoallv, Blocking,
                          groupSides)
DDTC_FORTRAN_ALL_TO_ALL_V(ialltoallv, IALLTOALLV, Ialltoallv, Started,
                          groupSides)
DDTC_FORTRAN_ALL_TO_ALL_V(neighbor_alltoallv, NEIGHBOR_ALLTOALLV,
                          Neighbor_alltoallv, Blocking, neighbourSides)
DDTC_FORTRAN_ALL_TO_ALL_V(ineighbor_alltoallv, INEIGHBOR_ALLTOALLV,
                          Ineighbor_alltoallv, Started, neighbourSides)

// Alltoallw: the same with one type per block. The displacements are
// INTEGERs (Displ MPI_Fint) in the world form and
// INTEGER(KIND=MPI_ADDRESS_KIND)s (Displ MPI_Aint) in the neighbourhood one.
#define DDTC_FORTRAN_ALL_TO_ALL_W(lower, upper, Name, Mode, sides, Displ)      \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *sendbuf, MPI_Fint *sendcounts, Displ *sdispls,                     \
      MPI_Fint *sendtypes, void *recvbuf, MPI_Fint *recvcounts,                \
      Displ *rdispls, MPI_Fint *recvtypes, MPI_Fint *c,                        \
      DDTC_FORTRAN_TAIL_##Mode) {                                              \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    MPI_Comm cc = comm(c);                                                     \
    Sides n = sides(cc);                                                       \
    void *send = placeBuffer(sendbuf);                                         \
    bool inPlace = send == MPI_IN_PLACE;                                       \
    auto received = blocks(m.arrays(), recvcounts, rdispls, n.received);       \
    auto sent = inPlace ? received                                             \
                        : blocks(m.arrays(), sendcounts, sdispls, n.sent);     \
    const MPI_Datatype *rtypes = m.arrays().types(recvtypes, n.received);      \
    const MPI_Datatype *stypes =                                               \
        inPlace ? rtypes : m.arrays().types(sendtypes, n.sent);                \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(send, sent.counts, sent.displs, stypes,                \
                        buffer(recvbuf), received.counts, received.displs,     \
                        rtypes, cc, request...);                               \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_ALL_TO_ALL_W(alltoallw, ALLTOALLW, Alltoallw, Blocking,
                          groupSides, MPI_Fint)
DDTC_FORTRAN_ALL_TO_ALL_W(ialltoallw, IALLTOALLW, Ialltoallw, Started,
                          groupSides, MPI_Fint)
DDTC_FORTRAN_ALL_TO_ALL_W(neighbor_alltoallw, NEIGHBOR_ALLTOALLW,
                          Neighbor_alltoallw, Blocking, neighbourSides,
                          MPI_Aint)
DDTC_FORTRAN_ALL_TO_ALL_W(ineighbor_alltoallw, INEIGHBOR_ALLTOALLW,
                          Ineighbor_alltoallw, Started, neighbourSides,
                          MPI_Aint)

#define DDTC_FORTRAN_REDUCE(lower, upper, Name, Mode)                          \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype,       \
      MPI_Fint *o, MPI_Fint *root, MPI_Fint *c, DDTC_FORTRAN_TAIL_##Mode) {    \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(placeBuffer(sendbuf), buffer(recvbuf), integer(count), \
                        type(datatype), op(o), integer(root), comm(c),         \
                        request...);                                           \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_REDUCE(reduce, REDUCE, Reduce, Blocking)
DDTC_FORTRAN_REDUCE(ireduce, IREDUCE, Ireduce, Started)

// Allreduce, Scan, Exscan and Reduce_scatter_block: a send buffer (or
// MPI_IN_PLACE), a receive buffer, a count, a type, an operation and a
// communicator.
#define DDTC_FORTRAN_REDUCTION(lower, upper, Name, Mode)                       \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *sendbuf, void *recvbuf, MPI_Fint *count, MPI_Fint *datatype,       \
      MPI_Fint *o, MPI_Fint *c, DDTC_FORTRAN_TAIL_##Mode) {                    \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(placeBuffer(sendbuf), buffer(recvbuf), integer(count), \
                        type(datatype), op(o), comm(c), request...);           \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_REDUCTION(allreduce, ALLREDUCE, Allreduce, Blocking)
DDTC_FORTRAN_REDUCTION(iallreduce, IALLREDUCE, Iallreduce, Started)
DDTC_FORTRAN_REDUCTION(scan, SCAN, Scan, Blocking)
DDTC_FORTRAN_REDUCTION(iscan, ISCAN, Iscan, Started)
DDTC_FORTRAN_REDUCTION(exscan, EXSCAN, Exscan, Blocking)
DDTC_FORTRAN_REDUCTION(iexscan, IEXSCAN, Iexscan, Started)
DDTC_FORTRAN_REDUCTION(reduce_scatter_block, REDUCE_SCATTER_BLOCK,
                       Reduce_scatter_block, Blocking)
DDTC_FORTRAN_REDUCTION(ireduce_scatter_block, IREDUCE_SCATTER_BLOCK,
                       Ireduce_scatter_block, Started)

#define DDTC_FORTRAN_REDUCE_SCATTER(lower, upper, Name, Mode)                  \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *sendbuf, void *recvbuf, MPI_Fint *recvcounts, MPI_Fint *datatype,  \
      MPI_Fint *o, MPI_Fint *c, DDTC_FORTRAN_TAIL_##Mode) {                    \
    Mode m(DDTC_FORTRAN_RUN_##Mode);                                           \
    MPI_Comm cc = comm(c);                                                     \
    const int *counts =                                                        \
        m.arrays().integers(recvcounts, groupSize(cc, false));                 \
    m.run([&](auto... request) {                                               \
      return MPI_##Name(placeBuffer(sendbuf), buffer(recvbuf), counts,         \
                        type(datatype), op(o), cc, request...);                \
    });                                                                        \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_REDUCE_SCATTER(reduce_scatter, REDUCE_SCATTER, Reduce_scatter,
                            Blocking)
DDTC_FORTRAN_REDUCE_SCATTER(ireduce_scatter, IREDUCE_SCATTER, Ireduce_scatter,
                            Started)

//===-- Communicator constructors -----------------------------------------===//
//
// Through the C wrappers, so that a communicator made from Fortran gets its
// private duplicates (Comms.cpp) and with them the pipelined protocols.
// MPI_COMM_FREE needs no entry point: the duplicates go with the
// communicator's attribute, whose delete callback the MPI library runs.

DDTC_FORTRAN_IMPL ddtc_fortran_comm_dup(MPI_Fint *c, MPI_Fint *newcomm,
                                        MPI_Fint *ierr) {
  CommOut n(newcomm);
  finish(ierr, MPI_Comm_dup(comm(c), n.get()), n);
}
DDTC_FORTRAN(comm_dup, COMM_DUP)

DDTC_FORTRAN_IMPL ddtc_fortran_comm_dup_with_info(MPI_Fint *c, MPI_Fint *i,
                                                  MPI_Fint *newcomm,
                                                  MPI_Fint *ierr) {
  CommOut n(newcomm);
  finish(ierr, MPI_Comm_dup_with_info(comm(c), info(i), n.get()), n);
}
DDTC_FORTRAN(comm_dup_with_info, COMM_DUP_WITH_INFO)

DDTC_FORTRAN_IMPL ddtc_fortran_comm_split(MPI_Fint *c, MPI_Fint *color,
                                          MPI_Fint *key, MPI_Fint *newcomm,
                                          MPI_Fint *ierr) {
  CommOut n(newcomm);
  finish(ierr, MPI_Comm_split(comm(c), integer(color), integer(key), n.get()),
         n);
}
DDTC_FORTRAN(comm_split, COMM_SPLIT)

DDTC_FORTRAN_IMPL ddtc_fortran_comm_split_type(MPI_Fint *c, MPI_Fint *kind,
                                               MPI_Fint *key, MPI_Fint *i,
                                               MPI_Fint *newcomm,
                                               MPI_Fint *ierr) {
  CommOut n(newcomm);
  finish(ierr,
         MPI_Comm_split_type(comm(c), integer(kind), integer(key), info(i),
                             n.get()),
         n);
}
DDTC_FORTRAN(comm_split_type, COMM_SPLIT_TYPE)

DDTC_FORTRAN_IMPL ddtc_fortran_comm_create(MPI_Fint *c, MPI_Fint *g,
                                           MPI_Fint *newcomm, MPI_Fint *ierr) {
  CommOut n(newcomm);
  finish(ierr, MPI_Comm_create(comm(c), group(g), n.get()), n);
}
DDTC_FORTRAN(comm_create, COMM_CREATE)

DDTC_FORTRAN_IMPL ddtc_fortran_comm_create_group(MPI_Fint *c, MPI_Fint *g,
                                                 MPI_Fint *tag,
                                                 MPI_Fint *newcomm,
                                                 MPI_Fint *ierr) {
  CommOut n(newcomm);
  finish(ierr, MPI_Comm_create_group(comm(c), group(g), integer(tag), n.get()),
         n);
}
DDTC_FORTRAN(comm_create_group, COMM_CREATE_GROUP)

DDTC_FORTRAN_IMPL ddtc_fortran_cart_create(MPI_Fint *c, MPI_Fint *ndims,
                                           MPI_Fint *dims, MPI_Fint *periods,
                                           MPI_Fint *reorder, MPI_Fint *newcomm,
                                           MPI_Fint *ierr) {
  int nd = nonNegative(integer(ndims));
  Integers d(dims, nd);
  Logicals p(periods, nd);
  CommOut n(newcomm);
  finish(ierr,
         MPI_Cart_create(comm(c), integer(ndims), d.get(), p.get(),
                         logical(reorder), n.get()),
         n);
}
DDTC_FORTRAN(cart_create, CART_CREATE)

DDTC_FORTRAN_IMPL ddtc_fortran_cart_sub(MPI_Fint *c, MPI_Fint *remain,
                                        MPI_Fint *newcomm, MPI_Fint *ierr) {
  MPI_Comm cc = comm(c);
  int nd = 0;
  if (PMPI_Cartdim_get(cc, &nd) != MPI_SUCCESS)
    nd = 0;
  Logicals r(remain, nonNegative(nd));
  CommOut n(newcomm);
  finish(ierr, MPI_Cart_sub(cc, r.get(), n.get()), n);
}
DDTC_FORTRAN(cart_sub, CART_SUB)

DDTC_FORTRAN_IMPL ddtc_fortran_graph_create(MPI_Fint *c, MPI_Fint *nnodes,
                                            MPI_Fint *index, MPI_Fint *edges,
                                            MPI_Fint *reorder,
                                            MPI_Fint *newcomm, MPI_Fint *ierr) {
  int nodes = nonNegative(integer(nnodes));
  Integers ix(index, nodes);
  Integers e(edges,
             nodes ? nonNegative(static_cast<int>(index[nodes - 1])) : 0);
  CommOut n(newcomm);
  finish(ierr,
         MPI_Graph_create(comm(c), integer(nnodes), ix.get(), e.get(),
                          logical(reorder), n.get()),
         n);
}
DDTC_FORTRAN(graph_create, GRAPH_CREATE)

DDTC_FORTRAN_IMPL ddtc_fortran_dist_graph_create_adjacent(
    MPI_Fint *c, MPI_Fint *indegree, MPI_Fint *sources, MPI_Fint *sweights,
    MPI_Fint *outdegree, MPI_Fint *dests, MPI_Fint *dweights, MPI_Fint *i,
    MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr) {
  int in = nonNegative(integer(indegree)),
      out = nonNegative(integer(outdegree));
  Integers s(sources, in), d(dests, out);
  Weights sw(sweights, in), dw(dweights, out);
  CommOut n(newcomm);
  finish(ierr,
         MPI_Dist_graph_create_adjacent(
             comm(c), integer(indegree), s.get(), sw.get(), integer(outdegree),
             d.get(), dw.get(), info(i), logical(reorder), n.get()),
         n);
}
DDTC_FORTRAN(dist_graph_create_adjacent, DIST_GRAPH_CREATE_ADJACENT)

DDTC_FORTRAN_IMPL ddtc_fortran_dist_graph_create(
    MPI_Fint *c, MPI_Fint *count, MPI_Fint *sources, MPI_Fint *degrees,
    MPI_Fint *dests, MPI_Fint *weights, MPI_Fint *i, MPI_Fint *reorder,
    MPI_Fint *newcomm, MPI_Fint *ierr) {
  int nsources = nonNegative(integer(count)), edges = 0;
  for (int k = 0; k < nsources; ++k)
    edges += nonNegative(static_cast<int>(degrees[k]));
  Integers s(sources, nsources), deg(degrees, nsources), d(dests, edges);
  Weights w(weights, edges);
  CommOut n(newcomm);
  finish(ierr,
         MPI_Dist_graph_create(comm(c), integer(count), s.get(), deg.get(),
                               d.get(), w.get(), info(i), logical(reorder),
                               n.get()),
         n);
}
DDTC_FORTRAN(dist_graph_create, DIST_GRAPH_CREATE)

DDTC_FORTRAN_IMPL ddtc_fortran_intercomm_create(
    MPI_Fint *local, MPI_Fint *localLeader, MPI_Fint *peer,
    MPI_Fint *remoteLeader, MPI_Fint *tag, MPI_Fint *newcomm, MPI_Fint *ierr) {
  CommOut n(newcomm);
  finish(ierr,
         MPI_Intercomm_create(comm(local), integer(localLeader), comm(peer),
                              integer(remoteLeader), integer(tag), n.get()),
         n);
}
DDTC_FORTRAN(intercomm_create, INTERCOMM_CREATE)

DDTC_FORTRAN_IMPL ddtc_fortran_intercomm_merge(MPI_Fint *inter, MPI_Fint *high,
                                               MPI_Fint *newcomm,
                                               MPI_Fint *ierr) {
  CommOut n(newcomm);
  finish(ierr, MPI_Intercomm_merge(comm(inter), logical(high), n.get()), n);
}
DDTC_FORTRAN(intercomm_merge, INTERCOMM_MERGE)

//===-- MPI I/O -----------------------------------------------------------===//
//
// The reads and writes, whose C functions stage device buffers (FileIO.cpp).
// Opening, closing and the file views need no entry point: they touch no
// buffer. `Result` is StatusOut for a blocking call, RequestOut for a
// nonblocking one.

namespace {
MPI_File file(const MPI_Fint *f) { return MPI_File_f2c(*f); }
} // namespace

// At an explicit offset, an INTEGER(KIND=MPI_OFFSET_KIND), MPI_Offset as it
// is.
#define DDTC_FORTRAN_FILE_AT(lower, upper, Name, Result)                       \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,            \
      MPI_Fint *datatype, MPI_Fint *result, MPI_Fint *ierr) {                  \
    Result r(result);                                                          \
    finish(ierr,                                                               \
           MPI_##Name(file(fh), *offset, buffer(buf), integer(count),          \
                      type(datatype), r.get()),                                \
           r);                                                                 \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_FILE_AT(file_read_at, FILE_READ_AT, File_read_at, StatusOut)
DDTC_FORTRAN_FILE_AT(file_read_at_all, FILE_READ_AT_ALL, File_read_at_all,
                     StatusOut)
DDTC_FORTRAN_FILE_AT(file_write_at, FILE_WRITE_AT, File_write_at, StatusOut)
DDTC_FORTRAN_FILE_AT(file_write_at_all, FILE_WRITE_AT_ALL, File_write_at_all,
                     StatusOut)
DDTC_FORTRAN_FILE_AT(file_iread_at, FILE_IREAD_AT, File_iread_at, RequestOut)
DDTC_FORTRAN_FILE_AT(file_iread_at_all, FILE_IREAD_AT_ALL, File_iread_at_all,
                     RequestOut)
DDTC_FORTRAN_FILE_AT(file_iwrite_at, FILE_IWRITE_AT, File_iwrite_at,
                     RequestOut)
DDTC_FORTRAN_FILE_AT(file_iwrite_at_all, FILE_IWRITE_AT_ALL,
                     File_iwrite_at_all, RequestOut)

// At the individual or the shared file pointer.
#define DDTC_FORTRAN_FILE(lower, upper, Name, Result)                          \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(MPI_Fint *fh, void *buf,              \
                                         MPI_Fint *count, MPI_Fint *datatype,  \
                                         MPI_Fint *result, MPI_Fint *ierr) {   \
    Result r(result);                                                          \
    finish(ierr,                                                               \
           MPI_##Name(file(fh), buffer(buf), integer(count), type(datatype),   \
                      r.get()),                                                \
           r);                                                                 \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_FILE(file_read, FILE_READ, File_read, StatusOut)
DDTC_FORTRAN_FILE(file_read_all, FILE_READ_ALL, File_read_all, StatusOut)
DDTC_FORTRAN_FILE(file_write, FILE_WRITE, File_write, StatusOut)
DDTC_FORTRAN_FILE(file_write_all, FILE_WRITE_ALL, File_write_all, StatusOut)
DDTC_FORTRAN_FILE(file_read_shared, FILE_READ_SHARED, File_read_shared,
                  StatusOut)
DDTC_FORTRAN_FILE(file_write_shared, FILE_WRITE_SHARED, File_write_shared,
                  StatusOut)
DDTC_FORTRAN_FILE(file_read_ordered, FILE_READ_ORDERED, File_read_ordered,
                  StatusOut)
DDTC_FORTRAN_FILE(file_write_ordered, FILE_WRITE_ORDERED, File_write_ordered,
                  StatusOut)
DDTC_FORTRAN_FILE(file_iread, FILE_IREAD, File_iread, RequestOut)
DDTC_FORTRAN_FILE(file_iread_all, FILE_IREAD_ALL, File_iread_all, RequestOut)
DDTC_FORTRAN_FILE(file_iwrite, FILE_IWRITE, File_iwrite, RequestOut)
DDTC_FORTRAN_FILE(file_iwrite_all, FILE_IWRITE_ALL, File_iwrite_all,
                  RequestOut)
DDTC_FORTRAN_FILE(file_iread_shared, FILE_IREAD_SHARED, File_iread_shared,
                  RequestOut)
DDTC_FORTRAN_FILE(file_iwrite_shared, FILE_IWRITE_SHARED, File_iwrite_shared,
                  RequestOut)

// The split collectives: begin at an explicit offset or at a file pointer,
// and end, which returns the status.
#define DDTC_FORTRAN_FILE_BEGIN_AT(lower, upper, Name)                         \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(MPI_Fint *fh, MPI_Offset *offset,     \
                                         void *buf, MPI_Fint *count,           \
                                         MPI_Fint *datatype, MPI_Fint *ierr) { \
    finish(ierr, MPI_##Name(file(fh), *offset, buffer(buf), integer(count),    \
                            type(datatype)));                                  \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)
#define DDTC_FORTRAN_FILE_BEGIN(lower, upper, Name)                            \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(MPI_Fint *fh, void *buf,              \
                                         MPI_Fint *count, MPI_Fint *datatype,  \
                                         MPI_Fint *ierr) {                     \
    finish(ierr,                                                               \
           MPI_##Name(file(fh), buffer(buf), integer(count), type(datatype))); \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)
#define DDTC_FORTRAN_FILE_END(lower, upper, Name)                              \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(MPI_Fint *fh, void *buf,              \
                                         MPI_Fint *status, MPI_Fint *ierr) {   \
    StatusOut st(status);                                                      \
    finish(ierr, MPI_##Name(file(fh), buffer(buf), st.get()), st);             \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_FILE_BEGIN_AT(file_read_at_all_begin, FILE_READ_AT_ALL_BEGIN,
                           File_read_at_all_begin)
DDTC_FORTRAN_FILE_END(file_read_at_all_end, FILE_READ_AT_ALL_END,
                      File_read_at_all_end)
DDTC_FORTRAN_FILE_BEGIN_AT(file_write_at_all_begin, FILE_WRITE_AT_ALL_BEGIN,
                           File_write_at_all_begin)
DDTC_FORTRAN_FILE_END(file_write_at_all_end, FILE_WRITE_AT_ALL_END,
                      File_write_at_all_end)
DDTC_FORTRAN_FILE_BEGIN(file_read_all_begin, FILE_READ_ALL_BEGIN,
                        File_read_all_begin)
DDTC_FORTRAN_FILE_END(file_read_all_end, FILE_READ_ALL_END, File_read_all_end)
DDTC_FORTRAN_FILE_BEGIN(file_write_all_begin, FILE_WRITE_ALL_BEGIN,
                        File_write_all_begin)
DDTC_FORTRAN_FILE_END(file_write_all_end, FILE_WRITE_ALL_END,
                      File_write_all_end)
DDTC_FORTRAN_FILE_BEGIN(file_read_ordered_begin, FILE_READ_ORDERED_BEGIN,
                        File_read_ordered_begin)
DDTC_FORTRAN_FILE_END(file_read_ordered_end, FILE_READ_ORDERED_END,
                      File_read_ordered_end)
DDTC_FORTRAN_FILE_BEGIN(file_write_ordered_begin, FILE_WRITE_ORDERED_BEGIN,
                        File_write_ordered_begin)
DDTC_FORTRAN_FILE_END(file_write_ordered_end, FILE_WRITE_ORDERED_END,
                      File_write_ordered_end)

//===-- One-sided communication -------------------------------------------===//
//
// The C functions refuse device memory (OneSided.cpp); these entry points
// make a Fortran program's calls reach them. Displacements and sizes are
// INTEGER(KIND=MPI_ADDRESS_KIND), MPI_Aint as it is.

namespace {
MPI_Win win(const MPI_Fint *w) { return MPI_Win_f2c(*w); }
struct AsWin {
  using C = MPI_Win;
  static C null() { return MPI_WIN_NULL; }
  static MPI_Fint toFortran(C c) { return MPI_Win_c2f(c); }
};
using WinOut = Out<AsWin>;
} // namespace

DDTC_FORTRAN_IMPL ddtc_fortran_win_create(void *base, MPI_Aint *size,
                                          MPI_Fint *dispUnit, MPI_Fint *i,
                                          MPI_Fint *c, MPI_Fint *w,
                                          MPI_Fint *ierr) {
  WinOut out(w);
  finish(ierr,
         MPI_Win_create(buffer(base), *size, integer(dispUnit), info(i),
                        comm(c), out.get()),
         out);
}
DDTC_FORTRAN(win_create, WIN_CREATE)

DDTC_FORTRAN_IMPL ddtc_fortran_win_attach(MPI_Fint *w, void *base,
                                          MPI_Aint *size, MPI_Fint *ierr) {
  setError(ierr, MPI_Win_attach(win(w), buffer(base), *size));
}
DDTC_FORTRAN(win_attach, WIN_ATTACH)

// Put and Get: an origin buffer, its count and type, then the target's rank,
// displacement, count and type, and the window.
#define DDTC_FORTRAN_RMA(lower, upper, Name)                                   \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *origin, MPI_Fint *originCount, MPI_Fint *originType,               \
      MPI_Fint *rank, MPI_Aint *disp, MPI_Fint *targetCount,                   \
      MPI_Fint *targetType, MPI_Fint *w, MPI_Fint *ierr) {                     \
    setError(ierr,                                                             \
             MPI_##Name(buffer(origin), integer(originCount),                  \
                        type(originType), integer(rank), *disp,                \
                        integer(targetCount), type(targetType), win(w)));      \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)
#define DDTC_FORTRAN_RRMA(lower, upper, Name)                                  \
  DDTC_FORTRAN_IMPL ddtc_fortran_##lower(                                      \
      void *origin, MPI_Fint *originCount, MPI_Fint *originType,               \
      MPI_Fint *rank, MPI_Aint *disp, MPI_Fint *targetCount,                   \
      MPI_Fint *targetType, MPI_Fint *w, MPI_Fint *request, MPI_Fint *ierr) {  \
    RequestOut r(request);                                                     \
    finish(ierr,                                                               \
           MPI_##Name(buffer(origin), integer(originCount), type(originType),  \
                      integer(rank), *disp, integer(targetCount),              \
                      type(targetType), win(w), r.get()),                      \
           r);                                                                 \
  }                                                                            \
  DDTC_FORTRAN(lower, upper)

DDTC_FORTRAN_RMA(put, PUT, Put)
DDTC_FORTRAN_RMA(get, GET, Get)
DDTC_FORTRAN_RRMA(rput, RPUT, Rput)
DDTC_FORTRAN_RRMA(rget, RGET, Rget)

DDTC_FORTRAN_IMPL ddtc_fortran_accumulate(void *origin, MPI_Fint *originCount,
                                          MPI_Fint *originType, MPI_Fint *rank,
                                          MPI_Aint *disp, MPI_Fint *targetCount,
                                          MPI_Fint *targetType, MPI_Fint *o,
                                          MPI_Fint *w, MPI_Fint *ierr) {
  setError(ierr, MPI_Accumulate(buffer(origin), integer(originCount),
                                type(originType), integer(rank), *disp,
                                integer(targetCount), type(targetType), op(o),
                                win(w)));
}
DDTC_FORTRAN(accumulate, ACCUMULATE)

DDTC_FORTRAN_IMPL ddtc_fortran_raccumulate(
    void *origin, MPI_Fint *originCount, MPI_Fint *originType, MPI_Fint *rank,
    MPI_Aint *disp, MPI_Fint *targetCount, MPI_Fint *targetType, MPI_Fint *o,
    MPI_Fint *w, MPI_Fint *request, MPI_Fint *ierr) {
  RequestOut r(request);
  finish(ierr,
         MPI_Raccumulate(buffer(origin), integer(originCount), type(originType),
                         integer(rank), *disp, integer(targetCount),
                         type(targetType), op(o), win(w), r.get()),
         r);
}
DDTC_FORTRAN(raccumulate, RACCUMULATE)

DDTC_FORTRAN_IMPL ddtc_fortran_get_accumulate(
    void *origin, MPI_Fint *originCount, MPI_Fint *originType, void *result,
    MPI_Fint *resultCount, MPI_Fint *resultType, MPI_Fint *rank, MPI_Aint *disp,
    MPI_Fint *targetCount, MPI_Fint *targetType, MPI_Fint *o, MPI_Fint *w,
    MPI_Fint *ierr) {
  setError(ierr, MPI_Get_accumulate(buffer(origin), integer(originCount),
                                    type(originType), buffer(result),
                                    integer(resultCount), type(resultType),
                                    integer(rank), *disp, integer(targetCount),
                                    type(targetType), op(o), win(w)));
}
DDTC_FORTRAN(get_accumulate, GET_ACCUMULATE)

DDTC_FORTRAN_IMPL ddtc_fortran_rget_accumulate(
    void *origin, MPI_Fint *originCount, MPI_Fint *originType, void *result,
    MPI_Fint *resultCount, MPI_Fint *resultType, MPI_Fint *rank, MPI_Aint *disp,
    MPI_Fint *targetCount, MPI_Fint *targetType, MPI_Fint *o, MPI_Fint *w,
    MPI_Fint *request, MPI_Fint *ierr) {
  RequestOut r(request);
  finish(ierr,
         MPI_Rget_accumulate(buffer(origin), integer(originCount),
                             type(originType), buffer(result),
                             integer(resultCount), type(resultType),
                             integer(rank), *disp, integer(targetCount),
                             type(targetType), op(o), win(w), r.get()),
         r);
}
DDTC_FORTRAN(rget_accumulate, RGET_ACCUMULATE)

DDTC_FORTRAN_IMPL ddtc_fortran_fetch_and_op(void *origin, void *result,
                                            MPI_Fint *datatype, MPI_Fint *rank,
                                            MPI_Aint *disp, MPI_Fint *o,
                                            MPI_Fint *w, MPI_Fint *ierr) {
  setError(ierr,
           MPI_Fetch_and_op(buffer(origin), buffer(result), type(datatype),
                            integer(rank), *disp, op(o), win(w)));
}
DDTC_FORTRAN(fetch_and_op, FETCH_AND_OP)

DDTC_FORTRAN_IMPL ddtc_fortran_compare_and_swap(void *origin, void *compare,
                                                void *result,
                                                MPI_Fint *datatype,
                                                MPI_Fint *rank, MPI_Aint *disp,
                                                MPI_Fint *w, MPI_Fint *ierr) {
  setError(ierr,
           MPI_Compare_and_swap(buffer(origin), buffer(compare), buffer(result),
                                type(datatype), integer(rank), *disp, win(w)));
}
DDTC_FORTRAN(compare_and_swap, COMPARE_AND_SWAP)
