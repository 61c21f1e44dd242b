//===- ddtc-mpi-bench.cu - MPI ping-pong of device derived datatypes ------===//
//
// Two ranks. For every layout (vectors, cube faces and a slab, a lower
// triangle, particle structs, a vector received as contiguous) and message
// size, built with MPI type constructors as an application would, measures
// the one-way time of a ping-pong (half the round trip, timed with MPI_Wtime
// around whole round trips, median of --reps) of:
//   ddtc  MPI_Send/MPI_Recv of device buffers with the derived type: goes
//         through libddtc-mpi when it is preloaded;
//   a     the packed bytes as contiguous bytes in malloc'ed host memory
//         through PMPI_Send/PMPI_Recv: the ceiling of a host-staged path;
//   b     what works with an MPI that cannot read device memory: cudaMemcpy
//         of the whole true extent to a malloc'ed host mirror, PMPI_Send of
//         the derived type from it; the receiver PMPI_Recv's into its mirror
//         and copies the whole true extent back to the device;
//   c     a hand-written staged transfer: pack on the GPU (cudaMemcpy2D for
//         2-d strided layouts, ddtc_pack otherwise, nothing for contiguous
//         ones) into device scratch, cudaMemcpy to pinned host memory,
//         PMPI_Send of MPI_PACKED bytes; the receiver reverses it. No
//         overlap.
// Before timing, every path moves one message each way into a buffer
// poisoned with 0xA5 and the whole buffer is compared with what MPI_Pack and
// MPI_Unpack give on the host; a failing path is not timed.
// Also the cost added to host buffers by the interposition (8 B ping-pong
// through MPI_Send/MPI_Recv against PMPI_Send/PMPI_Recv).
// Prints a table and writes JSON (rewritten after every point).
// --contend F times every repetition also while a busy kernel holds part of
// the GPU (Contention.cu). --halo runs a 3-d halo exchange instead
// (HaloExchange.cpp).
//===----------------------------------------------------------------------===//

#include <mpi.h>

#include "BenchSupport.h"
#include "Contention.h"
#include "HaloExchange.h"
#include "ddtc/ddtc.h"

#include <cuda_runtime.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

extern char **environ;

using namespace bench;

namespace {

constexpr int kTagData = 11, kTagRef = 12, kTagCheck = 13, kTagInfo = 14;
constexpr unsigned char kPoison = 0xA5;
constexpr int kWarmup = 3;
/// A timed repetition runs whole round trips for at least this long, so that
/// small messages are not measured one round trip at a time.
constexpr double kRepTargetUs = 1000.0;
constexpr int kMaxIters = 1000;
/// --contend: the busy kernel's time limit is this many times an
/// uncontended repetition (its fastest warm-up round trip times the round
/// trips per repetition), within these bounds.
constexpr double kBusyLimitFactor = 50, kBusyLimitMinUs = 100e3,
                 kBusyLimitMaxUs = 5e6;
/// --contend: the most the ddtc path may lose to the busy kernel.
constexpr double kContentionTarget = 0.10;

/// --refs device: (a) is a contiguous device buffer of the packed size
/// through libddtc-mpi, (c) the ddtc path forced through host memory (the
/// copy-in/copy-out pipeline) with ddtc_mpi_set_protocol.
bool gDeviceRefs = false;
/// --host-a pinned: (a)'s host bytes are pinned (cudaHostAlloc), like the
/// layer's own staging, instead of malloc'ed: what the MPI library's copy
/// costs from memory of that kind.
bool gPinnedA = false;
int (*gSetProtocol)(const char *) = nullptr;
/// libddtc-mpi's model of a device message to a peer (negative: none).
double (*gPredict)(long long, int) = nullptr;
/// The same for a message of a given type (its kernels' rate follows its
/// layout), where the layer has it.
double (*gPredictType)(long long, int, MPI_Datatype) = nullptr;

/// Runs `f` with the layer's protocol set to `name` (back to auto after).
template <typename F> void withProtocol(const char *name, F f) {
  if (gSetProtocol)
    gSetProtocol(name);
  f();
  if (gSetProtocol)
    gSetProtocol("auto");
}
#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess)                                                   \
      die("%s failed: %s (%s:%d)", #call, cudaGetErrorString(err_), __FILE__,  \
          __LINE__);                                                           \
  } while (0)

#define CHECK_DDTC(call)                                                       \
  do {                                                                         \
    ddtc_status st_ = (call);                                                  \
    if (st_ != DDTC_SUCCESS)                                                   \
      die("%s failed: %s: %s", #call, ddtc_status_name(st_),                   \
          ddtc_last_error());                                                  \
  } while (0)

/// Fills n bytes with a pattern that differs from byte to byte and from
/// seed to seed; never zero and never the poison.
__global__ void fillKernel(unsigned char *p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned long long x = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    unsigned char v = (unsigned char)(x | 1);
    p[i] = v == 0xA5 ? 0x5B : v;
  }
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

/// How the hand-written staged path (c) gathers one rank's type on the GPU.
enum class Gather { Contiguous, TwoD, Pack };

const char *gatherName(Gather g) {
  switch (g) {
  case Gather::Contiguous:
    return "memcpy";
  case Gather::TwoD:
    return "memcpy2d";
  case Gather::Pack:
    return "ddtc_pack";
  }
  return "?";
}

/// One rank's datatype of one (layout, size).
struct Instance {
  MPI_Datatype type = MPI_DATATYPE_NULL; // committed
  std::string spec;                      // the same type in .ddt, binding t
  Gather gather = Gather::Pack;
  // Gather::TwoD: rows of `width` bytes, `pitch` apart, `offset` bytes from
  // the buffer origin. Gather::Contiguous: the packed bytes at `offset`.
  int64_t width = 0, height = 0, pitch = 0, offset = 0;
  std::string params; // JSON object
};

struct LayoutDef {
  std::string name, description;
  int64_t kmax;                          // largest size parameter
  std::function<double(int64_t)> packed; // packed bytes for a parameter
  std::function<Instance(int64_t k, int rank, int64_t maxSpan)> build;
};

void commit(MPI_Datatype &t) {
  checkMpi(MPI_Type_commit(&t), "MPI_Type_commit");
}

Instance vectorOf(int64_t count, int64_t blockBytes) {
  Instance in;
  int elems = (int)(blockBytes / 8);
  checkMpi(MPI_Type_vector((int)count, elems, 2 * elems, MPI_DOUBLE, &in.type),
           "MPI_Type_vector");
  commit(in.type);
  in.spec = "t = vector(" + std::to_string(count) + ", " +
            std::to_string(elems) + ", " + std::to_string(2 * elems) +
            ", double)";
  in.gather = Gather::TwoD;
  in.width = blockBytes;
  in.height = count;
  in.pitch = 2 * blockBytes;
  in.offset = 0;
  in.params = JObj()
                  .i64("count", count)
                  .i64("block_bytes", blockBytes)
                  .i64("stride_bytes", 2 * blockBytes)
                  .text();
  return in;
}

Instance subarrayOf(const int64_t sizes[3], const int64_t sub[3],
                    const int64_t start[3]) {
  Instance in;
  int s[3], u[3], t[3];
  for (int i = 0; i < 3; ++i)
    s[i] = (int)sizes[i], u[i] = (int)sub[i], t[i] = (int)start[i];
  checkMpi(
      MPI_Type_create_subarray(3, s, u, t, MPI_ORDER_C, MPI_DOUBLE, &in.type),
      "MPI_Type_create_subarray");
  commit(in.type);
  auto list = [](const int64_t v[3]) {
    return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " +
           std::to_string(v[2]) + "]";
  };
  in.spec = "t = subarray(" + list(sizes) + ", " + list(sub) + ", " +
            list(start) + ", C, double)";
  in.params = JObj()
                  .add("sizes", list(sizes))
                  .add("subsizes", list(sub))
                  .add("starts", list(start))
                  .str("order", "C")
                  .str("element", "double")
                  .text();
  return in;
}

/// The x dimension of the array whose x face is sent: the cube's n while the
/// n^3 array fits in maxSpan bytes, else as many as fit (at least 2).
int64_t xDepth(int64_t n, int64_t maxSpan) {
  if ((double)n * n * n * 8 <= (double)maxSpan)
    return n;
  int64_t m = maxSpan / (n * n * 8);
  return std::max<int64_t>(2, std::min(m, n));
}

struct Particle {
  double pos[3];
  float vel[3];
  int id;
  char flag;
};

std::vector<LayoutDef> layouts() {
  std::vector<LayoutDef> out;
  for (int64_t block : {16, 256, 4096}) {
    std::string name =
        block == 4096 ? "vector-4KiB" : "vector-" + std::to_string(block) + "B";
    out.push_back(
        {name,
         "MPI_Type_vector of doubles: blocks of " + std::to_string(block) +
             " B, stride 2x the block",
         (int64_t(1) << 31) / block,
         [block](int64_t k) { return double(k * block); },
         [block](int64_t k, int, int64_t) { return vectorOf(k, block); }});
  }
  out.push_back(
      {"cube-x-face",
       "the x face (fastest index fixed: doubles 8*m B apart) of an n*n*m "
       "array of doubles, m = n while n^3 doubles fit in --max-span, "
       "MPI_Type_create_subarray",
       46000, [](int64_t n) { return 8.0 * n * n; },
       [](int64_t n, int, int64_t maxSpan) {
         int64_t m = xDepth(n, maxSpan), s = m >= 2 ? 1 : 0;
         int64_t sizes[3] = {n, n, m}, sub[3] = {n, n, 1}, start[3] = {0, 0, s};
         Instance in = subarrayOf(sizes, sub, start);
         in.gather = Gather::TwoD;
         in.width = 8;
         in.height = n * n;
         in.pitch = m * 8;
         in.offset = s * 8;
         return in;
       }});
  out.push_back(
      {"cube-z-face",
       "the z face (slowest index fixed: one contiguous plane) of an n^3 "
       "array of doubles, MPI_Type_create_subarray",
       46000, [](int64_t n) { return 8.0 * n * n; },
       [](int64_t n, int, int64_t) {
         int64_t s = n >= 2 ? 1 : 0;
         int64_t sizes[3] = {n, n, n}, sub[3] = {1, n, n}, start[3] = {s, 0, 0};
         Instance in = subarrayOf(sizes, sub, start);
         in.gather = Gather::Contiguous;
         in.offset = s * n * n * 8;
         return in;
       }});
  out.push_back(
      {"cube-slab",
       "an interior slab of an n^3 array of doubles: min(4, n-2) planes of "
       "(n-2)^2 doubles at [1, 1, 1], MPI_Type_create_subarray",
       46000, [](int64_t r) { return 8.0 * std::min<int64_t>(4, r) * r * r; },
       [](int64_t r, int, int64_t) {
         int64_t n = r + 2, d = std::min<int64_t>(4, r);
         int64_t sizes[3] = {n, n, n}, sub[3] = {d, r, r}, start[3] = {1, 1, 1};
         Instance in = subarrayOf(sizes, sub, start);
         in.gather = Gather::Pack;
         return in;
       }});
  out.push_back(
      {"lower-triangular",
       "the lower triangle (with the diagonal) of an n x n column-major matrix "
       "of doubles, MPI_Type_indexed of n columns",
       30000, [](int64_t n) { return 4.0 * n * (n + 1); },
       [](int64_t n, int, int64_t) {
         Instance in;
         std::vector<int> lens(n), displs(n);
         std::string l, d;
         for (int64_t j = 0; j < n; ++j) {
           lens[j] = (int)(n - j);
           displs[j] = (int)(j * n + j);
           l += (j ? ", " : "") + std::to_string(lens[j]);
           d += (j ? ", " : "") + std::to_string(displs[j]);
         }
         checkMpi(MPI_Type_indexed((int)n, lens.data(), displs.data(),
                                   MPI_DOUBLE, &in.type),
                  "MPI_Type_indexed");
         commit(in.type);
         in.spec = "t = indexed([" + l + "], [" + d + "], double)";
         in.gather = Gather::Pack;
         in.params = JObj().i64("n", n).str("element", "double").text();
         return in;
       }});
  out.push_back(
      {"particles",
       "count particles {double pos[3]; float vel[3]; int id; char flag;} "
       "(41 B of data, sizeof 48): MPI_Type_create_struct, "
       "MPI_Type_create_resized to sizeof, MPI_Type_contiguous",
       (int64_t(1) << 31) / 48, [](int64_t k) { return 41.0 * k; },
       [](int64_t k, int, int64_t) {
         Instance in;
         int lens[4] = {3, 3, 1, 1};
         MPI_Aint displs[4] = {offsetof(Particle, pos), offsetof(Particle, vel),
                               offsetof(Particle, id),
                               offsetof(Particle, flag)};
         MPI_Datatype types[4] = {MPI_DOUBLE, MPI_FLOAT, MPI_INT, MPI_CHAR};
         MPI_Datatype one, sized;
         checkMpi(MPI_Type_create_struct(4, lens, displs, types, &one),
                  "MPI_Type_create_struct");
         checkMpi(MPI_Type_create_resized(one, 0, sizeof(Particle), &sized),
                  "MPI_Type_create_resized");
         checkMpi(MPI_Type_contiguous((int)k, sized, &in.type),
                  "MPI_Type_contiguous");
         commit(in.type);
         checkMpi(MPI_Type_free(&one), "MPI_Type_free");
         checkMpi(MPI_Type_free(&sized), "MPI_Type_free");
         in.spec = "p = struct([3, 3, 1, 1], [" + std::to_string(displs[0]) +
                   ", " + std::to_string(displs[1]) + ", " +
                   std::to_string(displs[2]) + ", " +
                   std::to_string(displs[3]) +
                   "], [double, float, int, char])\nt = contiguous(" +
                   std::to_string(k) + ", resized(0, " +
                   std::to_string(sizeof(Particle)) + ", p))";
         in.gather = Gather::Pack;
         in.params = JObj()
                         .i64("count", k)
                         .i64("struct_bytes", (int64_t)sizeof(Particle))
                         .i64("data_bytes", 41)
                         .text();
         return in;
       }});
  out.push_back(
      {"vector-to-contig",
       "rank 0: MPI_Type_vector of doubles, blocks of 64 B, stride 128 B; "
       "rank 1: MPI_Type_contiguous of as many doubles (the same signature)",
       (int64_t(1) << 31) / 128, [](int64_t k) { return 64.0 * k; },
       [](int64_t k, int rank, int64_t) {
         if (rank == 0)
           return vectorOf(k, 64);
         Instance in;
         checkMpi(MPI_Type_contiguous((int)(8 * k), MPI_DOUBLE, &in.type),
                  "MPI_Type_contiguous");
         commit(in.type);
         in.spec = "t = contiguous(" + std::to_string(8 * k) + ", double)";
         in.gather = Gather::Contiguous;
         in.offset = 0;
         in.params = JObj().i64("count", 8 * k).str("element", "double").text();
         return in;
       }});
  return out;
}

/// The size parameter whose packed bytes are closest to target (in ratio).
int64_t chooseParam(const LayoutDef &l, double target) {
  int64_t lo = 1, hi = l.kmax;
  if (l.packed(hi) < target)
    return hi;
  while (lo < hi) { // smallest k with packed(k) >= target
    int64_t mid = lo + (hi - lo) / 2;
    if (l.packed(mid) >= target)
      hi = mid;
    else
      lo = mid + 1;
  }
  if (lo > 1 && target / l.packed(lo - 1) < l.packed(lo) / target)
    return lo - 1;
  return lo;
}

//===----------------------------------------------------------------------===//
// One rank's buffers and the four ways to move them
//===----------------------------------------------------------------------===//

enum Method { DDTC = 0, A = 1, B = 2, C = 3, NumMethods = 4 };
const char *kMethodNames[NumMethods] = {"ddtc", "a", "b", "c"};

struct Side {
  Instance in;
  ddtc_type dt = nullptr; // for Gather::Pack
  int64_t packed = 0, trueLb = 0, trueExt = 0, alloc = 0;
  unsigned char *dev = nullptr;     // the application buffer, origin at 0
  unsigned char *scratch = nullptr; // device, packed bytes (c)
  unsigned char *pinned = nullptr;  // pinned host, packed bytes (c)
  unsigned char *mirror = nullptr;  // malloc'ed host copy of dev (b)
  unsigned char *hostA = nullptr;   // malloc'ed host, packed bytes (a)
  std::string cError;               // why (c) cannot run, if it cannot
  std::string gatherNote;           // why (c) does not gather as planned

  void release() {
    if (in.type != MPI_DATATYPE_NULL)
      checkMpi(MPI_Type_free(&in.type), "MPI_Type_free");
    if (dt)
      ddtc_type_free(&dt);
    if (dev)
      CHECK_CUDA(cudaFree(dev));
    if (scratch)
      CHECK_CUDA(cudaFree(scratch));
    if (pinned)
      CHECK_CUDA(cudaFreeHost(pinned));
    std::free(mirror);
    if (gPinnedA && hostA)
      CHECK_CUDA(cudaFreeHost(hostA));
    else
      std::free(hostA);
    dev = scratch = pinned = mirror = hostA = nullptr;
  }
};

/// Reads the size and true extent of the side's type: the buffer spans
/// [0, true lb + true extent) from the origin.
void measure(Side &s) {
  MPI_Count size = 0, lb = 0, ext = 0;
  checkMpi(PMPI_Type_size_x(s.in.type, &size), "MPI_Type_size_x");
  checkMpi(PMPI_Type_get_true_extent_x(s.in.type, &lb, &ext),
           "MPI_Type_get_true_extent_x");
  if (lb < 0)
    die("a type with a negative true lower bound (%lld)", (long long)lb);
  s.packed = size;
  s.trueLb = lb;
  s.trueExt = ext;
  s.alloc = lb + ext;
}

/// Allocates the buffers and makes the ddtc type of path (c).
void setup(Side &s) {
  CHECK_CUDA(cudaMalloc(&s.dev, s.alloc));
  CHECK_CUDA(cudaMalloc(&s.scratch, s.packed));
  CHECK_CUDA(cudaHostAlloc(&s.pinned, s.packed, cudaHostAllocDefault));
  s.mirror = (unsigned char *)std::malloc(s.alloc);
  if (gPinnedA)
    CHECK_CUDA(cudaHostAlloc(&s.hostA, s.packed, cudaHostAllocPortable));
  else
    s.hostA = (unsigned char *)std::malloc(s.packed);
  if (!s.mirror || !s.hostA)
    die("out of host memory (%lld bytes)", (long long)s.alloc);
  std::memset(s.mirror, kPoison, s.alloc);
  std::memset(s.hostA, 0x3C, s.packed);
  if (s.in.gather == Gather::TwoD) {
    // Where the runtime refuses the 2-d copy (too many rows, say), the
    // hand-written path packs with ddtc instead.
    cudaError_t err = cudaMemcpy2DAsync(
        s.scratch, s.in.width, s.dev + s.in.offset, s.in.pitch, s.in.width,
        s.in.height, cudaMemcpyDeviceToDevice);
    if (err == cudaSuccess)
      err = cudaStreamSynchronize(cudaStreamLegacy);
    if (err != cudaSuccess) {
      cudaGetLastError();
      s.gatherNote = std::string("cudaMemcpy2D refused (") +
                     cudaGetErrorString(err) + "), ddtc_pack instead";
      s.in.gather = Gather::Pack;
    }
  }
  if (s.in.gather == Gather::Pack) {
    ddtc_status st = ddtc_type_from_spec(s.in.spec.c_str(), "t", &s.dt);
    if (st == DDTC_SUCCESS)
      st = ddtc_type_commit(s.dt);
    if (st == DDTC_SUCCESS)
      st = ddtc_type_wait(s.dt);
    int64_t dsize = -1, dlb = -1, dext = -1;
    if (st == DDTC_SUCCESS)
      st = ddtc_type_size(s.dt, &dsize);
    if (st == DDTC_SUCCESS)
      st = ddtc_type_true_extent(s.dt, &dlb, &dext);
    if (st != DDTC_SUCCESS)
      s.cError = std::string("ddtc type: ") + ddtc_status_name(st) + ": " +
                 ddtc_last_error();
    else if (dsize != s.packed || dlb != s.trueLb || dext != s.trueExt)
      s.cError = "the ddtc type differs from the MPI type in size or extent";
  }
}

/// Sends the whole buffer of one message with method m.
void sendWith(Method m, Side &s, int peer) {
  switch (m) {
  case DDTC:
    checkMpi(MPI_Send(s.dev, 1, s.in.type, peer, kTagData, MPI_COMM_WORLD),
             "MPI_Send (device buffer, derived type)");
    break;
  case A:
    if (gDeviceRefs)
      checkMpi(MPI_Send(s.scratch, (int)s.packed, MPI_BYTE, peer, kTagData,
                        MPI_COMM_WORLD),
               "MPI_Send (contiguous device bytes)");
    else
      checkMpi(PMPI_Send(s.hostA, (int)s.packed, MPI_BYTE, peer, kTagData,
                         MPI_COMM_WORLD),
               "PMPI_Send (host bytes)");
    break;
  case B:
    CHECK_CUDA(cudaMemcpy(s.mirror + s.trueLb, s.dev + s.trueLb, s.trueExt,
                          cudaMemcpyDeviceToHost));
    checkMpi(PMPI_Send(s.mirror, 1, s.in.type, peer, kTagData, MPI_COMM_WORLD),
             "PMPI_Send (host mirror, derived type)");
    break;
  case C:
    if (gDeviceRefs) {
      withProtocol("pipeline", [&] {
        checkMpi(MPI_Send(s.dev, 1, s.in.type, peer, kTagData, MPI_COMM_WORLD),
                 "MPI_Send (device buffer, through host memory)");
      });
      break;
    }
    switch (s.in.gather) {
    case Gather::Contiguous:
      CHECK_CUDA(cudaMemcpy(s.pinned, s.dev + s.in.offset, s.packed,
                            cudaMemcpyDeviceToHost));
      break;
    case Gather::TwoD:
      CHECK_CUDA(cudaMemcpy2DAsync(s.scratch, s.in.width, s.dev + s.in.offset,
                                   s.in.pitch, s.in.width, s.in.height,
                                   cudaMemcpyDeviceToDevice));
      CHECK_CUDA(
          cudaMemcpy(s.pinned, s.scratch, s.packed, cudaMemcpyDeviceToHost));
      break;
    case Gather::Pack:
      CHECK_DDTC(ddtc_pack(s.dt, s.dev, 1, 0, s.packed, s.scratch, nullptr, 0));
      CHECK_CUDA(
          cudaMemcpy(s.pinned, s.scratch, s.packed, cudaMemcpyDeviceToHost));
      break;
    }
    checkMpi(PMPI_Send(s.pinned, (int)s.packed, MPI_PACKED, peer, kTagData,
                       MPI_COMM_WORLD),
             "PMPI_Send (pinned, MPI_PACKED)");
    break;
  default:
    break;
  }
}

/// Receives one message with method m; returns the bytes the status holds
/// (MPI_Get_count with MPI_BYTE) for the ddtc path, else -1.
int64_t recvWith(Method m, Side &s, int peer, bool wantCount = false) {
  MPI_Status st;
  int64_t got = -1;
  switch (m) {
  case DDTC:
    checkMpi(MPI_Recv(s.dev, 1, s.in.type, peer, kTagData, MPI_COMM_WORLD, &st),
             "MPI_Recv (device buffer, derived type)");
    if (wantCount) {
      int n = -1;
      checkMpi(MPI_Get_count(&st, MPI_BYTE, &n), "MPI_Get_count");
      got = st.MPI_SOURCE == peer && st.MPI_TAG == kTagData ? n : -2;
    }
    break;
  case A:
    if (gDeviceRefs)
      checkMpi(MPI_Recv(s.scratch, (int)s.packed, MPI_BYTE, peer, kTagData,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE),
               "MPI_Recv (contiguous device bytes)");
    else
      checkMpi(PMPI_Recv(s.hostA, (int)s.packed, MPI_BYTE, peer, kTagData,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE),
               "PMPI_Recv (host bytes)");
    break;
  case B:
    checkMpi(PMPI_Recv(s.mirror, 1, s.in.type, peer, kTagData, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE),
             "PMPI_Recv (host mirror, derived type)");
    CHECK_CUDA(cudaMemcpy(s.dev + s.trueLb, s.mirror + s.trueLb, s.trueExt,
                          cudaMemcpyHostToDevice));
    break;
  case C:
    if (gDeviceRefs) {
      // The receiver follows whatever protocol the sender chose.
      checkMpi(MPI_Recv(s.dev, 1, s.in.type, peer, kTagData, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE),
               "MPI_Recv (device buffer, through host memory)");
      break;
    }
    checkMpi(PMPI_Recv(s.pinned, (int)s.packed, MPI_PACKED, peer, kTagData,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE),
             "PMPI_Recv (pinned, MPI_PACKED)");
    switch (s.in.gather) {
    case Gather::Contiguous:
      CHECK_CUDA(cudaMemcpy(s.dev + s.in.offset, s.pinned, s.packed,
                            cudaMemcpyHostToDevice));
      break;
    case Gather::TwoD:
      CHECK_CUDA(
          cudaMemcpy(s.scratch, s.pinned, s.packed, cudaMemcpyHostToDevice));
      CHECK_CUDA(cudaMemcpy2DAsync(s.dev + s.in.offset, s.in.pitch, s.scratch,
                                   s.in.width, s.in.width, s.in.height,
                                   cudaMemcpyDeviceToDevice));
      break;
    case Gather::Pack:
      CHECK_CUDA(
          cudaMemcpy(s.scratch, s.pinned, s.packed, cudaMemcpyHostToDevice));
      CHECK_DDTC(
          ddtc_unpack(s.dt, s.dev, 1, 0, s.packed, s.scratch, nullptr, 0));
      break;
    }
    CHECK_CUDA(cudaStreamSynchronize(nullptr));
    break;
  default:
    break;
  }
  return got;
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

/// What one direction of a check found: wrong bytes of the type, bytes
/// outside the type that were overwritten, the first wrong byte, the count
/// the status reported.
struct CheckResult {
  int64_t wrongType = 0, wrongOutside = 0, first = -1, statusBytes = -1;
  int64_t expectBytes = -1;
  bool ok() const {
    return wrongType == 0 && wrongOutside == 0 &&
           (statusBytes == -1 || statusBytes == expectBytes);
  }
  std::string text(const char *dir) const {
    std::ostringstream os;
    os << dir << ":";
    if (wrongType)
      os << " " << wrongType << " bytes of the type wrong;";
    if (wrongOutside)
      os << " " << wrongOutside << " bytes outside the type overwritten;";
    if (first >= 0)
      os << " first wrong byte at offset " << first << ";";
    if (statusBytes == -2)
      os << " status with the wrong source or tag;";
    else if (statusBytes != -1 && statusBytes != expectBytes)
      os << " status holds " << statusBytes << " bytes, expected "
         << expectBytes << ";";
    return os.str();
  }
};

/// Compares the device buffer with `want` (the poison outside the type).
CheckResult compareDevice(const Side &s, const unsigned char *want) {
  std::unique_ptr<unsigned char[]> got(new unsigned char[s.alloc]);
  CHECK_CUDA(cudaStreamSynchronize(cudaStreamLegacy));
  CHECK_CUDA(cudaMemcpy(got.get(), s.dev, s.alloc, cudaMemcpyDeviceToHost));
  CheckResult r;
  if (std::memcmp(got.get(), want, s.alloc) == 0)
    return r;
  for (int64_t i = 0; i < s.alloc; ++i) {
    if (got[i] == want[i])
      continue;
    if (r.first < 0)
      r.first = i;
    // The pattern never holds the poison, so the poison marks the bytes
    // outside the type.
    if (want[i] == kPoison)
      ++r.wrongOutside;
    else
      ++r.wrongType;
  }
  return r;
}

void poison(Side &s) {
  CHECK_CUDA(cudaMemset(s.dev, kPoison, s.alloc));
  std::memset(s.mirror, kPoison, s.alloc);
  CHECK_CUDA(cudaStreamSynchronize(cudaStreamLegacy));
}

void fillPattern(Side &s, unsigned seed) {
  fillKernel<<<1024, 256>>>(s.dev, s.alloc, seed);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaStreamSynchronize(cudaStreamLegacy));
}

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

struct Timing {
  bool timed = false;
  std::string check = "not checked";
  std::string detail;
  double us = NAN, minUs = NAN, maxUs = NAN;
  int iters = 0;
  std::vector<double> samples;
  // --contend: the same repetitions with the busy kernel running; samples in
  // which it ended by its time limit before the round trips did.
  std::vector<double> busySamples;
  double busyUs = NAN, busyLimitUs = NAN;
  int busyExpired = 0;
  /// The contended time over the uncontended one, minus 1.
  double loss() const { return ratio(busyUs, us) - 1; }
};

/// One round trip of method m started by rank 0; returns its seconds on
/// rank 0.
double roundTrip(Method m, Side &s, int rank, int iters) {
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      sendWith(m, s, 1);
      recvWith(m, s, 1);
    } else {
      recvWith(m, s, 0);
      sendWith(m, s, 0);
    }
  }
  return MPI_Wtime() - t0;
}

/// Times the methods marked in `run`, interleaved rep by rep. Fills the
/// one-way microseconds on rank 0. With a busy kernel (busy not null), every
/// repetition is also timed while it runs, the two in alternating order.
void timeMethods(Side &s, int rank, int reps, const bool run[NumMethods],
                 Timing out[NumMethods], Contention *busy) {
  int iters[NumMethods] = {0, 0, 0, 0};
  // The busy kernel's time limit per repetition: far beyond an uncontended
  // repetition, so that only transfers that wait for it reach the limit.
  double limitUs[NumMethods] = {0, 0, 0, 0};
  for (int m = 0; m < NumMethods; ++m) {
    if (!run[m])
      continue;
    double best = 1e30;
    for (int w = 0; w < kWarmup; ++w)
      best = std::min(best, roundTrip((Method)m, s, rank, 1));
    int it = (int)std::ceil(kRepTargetUs / std::max(best * 1e6, 1e-3));
    iters[m] = std::max(1, std::min(kMaxIters, it));
    limitUs[m] = std::min(kBusyLimitMaxUs,
                          std::max(kBusyLimitMinUs,
                                   kBusyLimitFactor * iters[m] * best * 1e6));
  }
  checkMpi(PMPI_Bcast(iters, NumMethods, MPI_INT, 0, MPI_COMM_WORLD),
           "MPI_Bcast");
  checkMpi(PMPI_Bcast(limitUs, NumMethods, MPI_DOUBLE, 0, MPI_COMM_WORLD),
           "MPI_Bcast");
  for (int m = 0; m < NumMethods; ++m)
    if (run[m] && iters[m] > 1)
      roundTrip((Method)m, s, rank, std::min(iters[m], 20));
  for (int r = 0; r < reps; ++r)
    for (int m = 0; m < NumMethods; ++m) {
      if (!run[m])
        continue;
      for (int k = 0; k < (busy ? 2 : 1); ++k) {
        bool contended = busy && (r + k) % 2 == 1;
        if (contended) {
          busy->begin(limitUs[m]);
          checkMpi(PMPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        }
        double us = roundTrip((Method)m, s, rank, iters[m]) * 1e6 /
                    (2.0 * iters[m]);
        if (!contended) {
          out[m].samples.push_back(us);
          continue;
        }
        int whole = busy->end() ? 1 : 0;
        checkMpi(PMPI_Allreduce(MPI_IN_PLACE, &whole, 1, MPI_INT, MPI_MIN,
                                MPI_COMM_WORLD),
                 "MPI_Allreduce");
        out[m].busySamples.push_back(us);
        out[m].busyExpired += !whole;
      }
    }
  for (int m = 0; m < NumMethods; ++m) {
    if (!run[m])
      continue;
    out[m].timed = true;
    out[m].iters = iters[m];
    out[m].us = median(out[m].samples);
    out[m].minUs =
        *std::min_element(out[m].samples.begin(), out[m].samples.end());
    out[m].maxUs =
        *std::max_element(out[m].samples.begin(), out[m].samples.end());
    if (busy) {
      out[m].busyUs = median(out[m].busySamples);
      out[m].busyLimitUs = limitUs[m];
    }
  }
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

struct Point {
  double predictedUs = NAN; ///< the layer's model, for the ddtc path
  std::string layout;
  int64_t target = 0, packed = 0, span = 0, alloc0 = 0, alloc1 = 0;
  std::string params0, params1, gather0, gather1, spec0;
  std::string check = "passed", detail;
  Timing t[NumMethods];
};

struct HostCost {
  bool measured = false;
  int iters = 0, reps = 0;
  std::vector<double> mpiUs, pmpiUs;
  double mpiMedian = NAN, pmpiMedian = NAN, diffOneWay = NAN, perCall = NAN;
};

/// Whether a point is a message of at most 1 KiB: by the size it aimed at,
/// unless its packed bytes are more than 2x off.
bool smallMessage(int64_t target, int64_t packed) {
  bool near = packed * 2 >= target && packed <= 2 * target;
  return (near ? target : packed) <= 1024;
}

std::string pointJson(const Point &p) {
  JObj o;
  o.str("layout", p.layout)
      .i64("target_bytes", p.target)
      .i64("packed_bytes", p.packed)
      .i64("true_extent_bytes", p.span)
      .add("buffer_bytes", "[" + jint(p.alloc0) + ", " + jint(p.alloc1) + "]")
      .add("params", jarr({p.params0, p.params1}))
      .add("c_method", jarr({jstr(p.gather0), jstr(p.gather1)}))
      .str("check", p.check)
      .str("check_detail", p.detail);
  for (int m = 0; m < NumMethods; ++m)
    o.num(std::string(kMethodNames[m]) + "_us", p.t[m].us);
  for (int m = 0; m < NumMethods; ++m)
    o.num(std::string(kMethodNames[m]) + "_GBps",
          ratio((double)p.packed, p.t[m].us) / 1e3);
  double d = p.t[DDTC].us;
  o.num("predicted_us", p.predictedUs)
      .num("model_error", std::isfinite(p.predictedUs) && std::isfinite(d)
                              ? (p.predictedUs - d) / d
                              : NAN);
  o.num("ddtc_vs_a_bandwidth", ratio(p.t[A].us, d))
      .num("speedup_vs_b", ratio(p.t[B].us, d))
      .num("speedup_vs_c", ratio(p.t[C].us, d));
  for (int m = 0; m < NumMethods; ++m)
    o.num(std::string(kMethodNames[m]) + "_contended_us", p.t[m].busyUs)
        .num(std::string(kMethodNames[m]) + "_contention_loss",
             p.t[m].loss());
  JObj methods;
  for (int m = 0; m < NumMethods; ++m) {
    const Timing &t = p.t[m];
    methods.add(kMethodNames[m], JObj()
                                     .boolean("timed", t.timed)
                                     .str("check", t.check)
                                     .str("check_detail", t.detail)
                                     .num("median_us", t.us)
                                     .num("min_us", t.minUs)
                                     .num("max_us", t.maxUs)
                                     .i64("round_trips_per_rep", t.iters)
                                     .add("one_way_us", jnums(t.samples))
                                     .num("contended_median_us", t.busyUs)
                                     .num("contention_loss", t.loss())
                                     .add("contended_one_way_us",
                                          jnums(t.busySamples))
                                     .num("busy_time_limit_us", t.busyLimitUs)
                                     .i64("contended_reps_past_limit",
                                          t.busyExpired)
                                     .text());
  }
  o.add("methods", methods.text());
  return o.text();
}

struct Report {
  JObj environment, options;
  HostCost host;
  std::vector<Point> points;
  std::vector<std::string> failures; // JSON objects
  std::string path;
  double start = 0;

  void write(bool complete, const std::string &abortReason = "") const {
    if (path.empty())
      return;
    JObj root;
    root.str("benchmark", "ddtc-mpi-bench")
        .i64("schema_version", 1)
        .boolean("complete", complete)
        .num("elapsed_s", MPI_Wtime() - start);
    if (!abortReason.empty())
      root.str("aborted", abortReason);
    root.add("environment", environment.text(1))
        .add("options", options.text(1));
    JObj h;
    h.boolean("measured", host.measured)
        .i64("message_bytes", 8)
        .i64("round_trips_per_rep", host.iters)
        .i64("reps", host.reps)
        .add("mpi_one_way_us", jnums(host.mpiUs))
        .add("pmpi_one_way_us", jnums(host.pmpiUs))
        .num("mpi_one_way_median_us", host.mpiMedian)
        .num("pmpi_one_way_median_us", host.pmpiMedian)
        .num("added_one_way_us", host.diffOneWay)
        .num("added_per_call_us", host.perCall)
        .str("definition",
             "one-way = round-trip time / 2 of an 8-byte ping-pong of "
             "malloc'ed buffers (MPI_DOUBLE); added_one_way_us = median "
             "one-way through MPI_Send/MPI_Recv minus median one-way through "
             "PMPI_Send/PMPI_Recv; each one-way trip puts one send and one "
             "receive call on the critical path, so added_per_call_us = "
             "added_one_way_us / 2");
    root.add("host_added_cost", h.text(1));
    std::vector<std::string> pts, small;
    for (const Point &p : points) {
      pts.push_back(pointJson(p));
      if (smallMessage(p.target, p.packed) && p.t[DDTC].timed && p.t[A].timed)
        small.push_back(JObj()
                            .str("layout", p.layout)
                            .i64("packed_bytes", p.packed)
                            .num("ddtc_us", p.t[DDTC].us)
                            .num("a_us", p.t[A].us)
                            .num("ddtc_minus_a_us", p.t[DDTC].us - p.t[A].us)
                            .text());
    }
    root.add("points", jarr(pts, 1))
        .add("small_messages", jarr(small, 1))
        .add("failures", jarr(failures, 1));
    int checked = 0, failed = 0;
    for (const Point &p : points) {
      checked += p.check != "not checked";
      failed += p.check == "FAILED";
    }
    root.add("summary", JObj()
                            .i64("points", (int64_t)points.size())
                            .i64("checked", checked)
                            .i64("failed", failed)
                            .text());
    writeFileAtomically(path, root.text(0) + "\n");
  }
};

//===----------------------------------------------------------------------===//
// Options and environment
//===----------------------------------------------------------------------===//

int64_t parseBytes(const std::string &s) {
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string suf = end ? end : "";
  for (auto &c : suf)
    c = (char)std::toupper((unsigned char)c);
  double mul = 1;
  if (suf == "" || suf == "B")
    mul = 1;
  else if (suf == "K" || suf == "KB" || suf == "KIB")
    mul = 1024;
  else if (suf == "M" || suf == "MB" || suf == "MIB")
    mul = 1024.0 * 1024;
  else if (suf == "G" || suf == "GB" || suf == "GIB")
    mul = 1024.0 * 1024 * 1024;
  else
    return -1;
  if (!(v > 0))
    return -1;
  return (int64_t)std::llround(v * mul);
}

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      out.push_back(item);
  return out;
}

void usage(const std::vector<LayoutDef> &defs) {
  std::printf(
      "usage: mpirun -np 2 [-x LD_PRELOAD=BUILD/lib/libddtc-mpi.so] "
      "ddtc-mpi-bench [options]\n\n"
      "Ping-pong between 2 ranks of CUDA device buffers described by MPI\n"
      "derived datatypes, for several layouts and message sizes. One-way\n"
      "time = half the round trip (MPI_Wtime around whole round trips,\n"
      "median of --reps repetitions after warm-up), bandwidth = packed bytes\n"
      "/ one-way time, for:\n"
      "  ddtc  MPI_Send/MPI_Recv of the device buffers with the derived type\n"
      "        (intercepted by libddtc-mpi when it is preloaded)\n"
      "  a     the packed bytes, contiguous in malloc'ed host memory,\n"
      "        PMPI_Send/PMPI_Recv (the ceiling of a host-staged path)\n"
      "  b     cudaMemcpy of the whole true extent to a malloc'ed host\n"
      "        mirror, PMPI_Send/PMPI_Recv of the derived type, cudaMemcpy of\n"
      "        the whole true extent back to the device\n"
      "  c     pack on the GPU (cudaMemcpy2D for 2-d strided layouts,\n"
      "        ddtc_pack otherwise), cudaMemcpy to pinned memory, PMPI_Send "
      "of\n"
      "        MPI_PACKED; the receiver reverses it; no overlap\n"
      "Every path is first checked: one message each way into a buffer\n"
      "poisoned with 0xA5, compared byte for byte with MPI_Pack/MPI_Unpack\n"
      "on the host; a failing path is not timed (exit status 1 if any\n"
      "failed). Also the cost added to host buffers: an 8 B ping-pong through\n"
      "MPI_Send/MPI_Recv against PMPI_Send/PMPI_Recv.\n\n"
      "options:\n"
      "  --sizes LIST      packed sizes to aim at, comma-separated, suffixes\n"
      "                    K/KiB, M/MiB allowed (default 8 B and 16 B to\n"
      "                    64 MiB in powers of 4); each layout's parameters\n"
      "                    are scaled to come closest, the actual packed "
      "bytes\n"
      "                    are reported, repeated sizes measured once\n"
      "  --layouts LIST    layouts to run, comma-separated (default all)\n"
      "  --reps N          timed repetitions per point (default 20)\n"
      "  --max-bytes B     leave out sizes above B packed bytes (default 64M)\n"
      "  --max-span B      largest buffer per rank (default 1G): the x-face\n"
      "                    array gets fewer x planes beyond it; points "
      "needing\n"
      "                    more are left out\n"
      "  --host-iters N    round trips per repetition of the host-buffer\n"
      "                    cost (default 10000)\n"
      "  --host-reps N     its repetitions (default 7)\n"
      "  --no-ddtc         measure only a, b and c (for an MPI library\n"
      "                    without libddtc-mpi)\n"
      "  --time LIST       time only these paths (ddtc, a, b, c; comma-\n"
      "                    separated; every path is still checked)\n"
      "  --refs host|device  host (default): a, b, c as above; device: a is\n"
      "                    the packed bytes as a contiguous device buffer\n"
      "                    through libddtc-mpi (the ceiling between GPUs), c\n"
      "                    the ddtc path kept to host memory (no CUDA IPC)\n"
      "  --host-a malloc|pinned  where (a)'s host bytes live: malloc'ed\n"
      "                    (default) or pinned with cudaHostAlloc, as the\n"
      "                    layer's own staging is\n"
      "  --contend F       time every repetition twice: as above, and while\n"
      "                    a busy kernel holds F (0..1) of each GPU's SMs\n"
      "                    (an application sharing the GPU; one block of\n"
      "                    1024 threads and most of the shared memory per\n"
      "                    SM, launched by one rank per GPU), in alternating\n"
      "                    order; prints both and the loss (contended /\n"
      "                    uncontended - 1, target <= 10%% for ddtc). The\n"
      "                    kernel ends by itself when the repetition is over,\n"
      "                    at the latest after 50x an uncontended repetition\n"
      "                    (0.1-5 s): a transfer waiting for it is slow and\n"
      "                    counted, never hung\n"
      "  --halo [N]        instead of the ping-pong: a 3-d halo exchange of\n"
      "                    an N^3 cube of doubles (default N 512, even), each\n"
      "                    rank owning N/2 x N x N plus one ghost layer in\n"
      "                    device memory; 6 MPI_Isend of subarray faces, 6\n"
      "                    MPI_Irecv into the ghosts, MPI_Waitall (periodic:\n"
      "                    every neighbour is the other rank), against the\n"
      "                    same 12 messages as contiguous device buffers;\n"
      "                    checked (every ghost, the interior untouched,\n"
      "                    edges and corners not written) before and after\n"
      "                    timing; prints the medians and their ratio\n"
      "                    (target <= 1.3); --reps exchanges of each\n"
      "                    (default 50)\n"
      "  --halo-layout ZxYxX  the halo exchange with each rank's block given\n"
      "                    (z planes of y rows of x doubles), e.g. 8x16x16\n"
      "                    for a quick check\n"
      "  --json FILE       write every number and the environment to FILE\n"
      "  --help            this text\n\n"
      "layouts:\n");
  for (const LayoutDef &l : defs)
    std::printf("  %-18s %s\n", l.name.c_str(), l.description.c_str());
  std::printf(
      "\nEach rank uses GPU OMPI_COMM_WORLD_LOCAL_RANK mod the device count\n"
      "(both ranks may share one). Exits 77 without a GPU, 2 unless run on\n"
      "exactly 2 ranks, 1 when a check failed.\n");
}

std::string readFirstLine(const char *path) {
  std::ifstream f(path);
  std::string line;
  if (f)
    std::getline(f, line);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\n'))
    line.pop_back();
  return line;
}

/// The file that provides a symbol as the program resolves it.
std::string providerOf(const char *symbol) {
  void *p = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info;
  if (p && dladdr(p, &info) && info.dli_fname)
    return info.dli_fname;
  return "";
}

int localRank() {
  for (const char *v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                        "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
    if (const char *s = std::getenv(v))
      return std::atoi(s);
  return 0;
}

int worldRankFromEnv() {
  for (const char *v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char *s = std::getenv(v))
      return std::atoi(s);
  return 0;
}

void exchangeString(std::string &s, int from, int to, int rank) {
  if (rank == from) {
    int n = (int)s.size();
    checkMpi(PMPI_Send(&n, 1, MPI_INT, to, kTagInfo, MPI_COMM_WORLD),
             "MPI_Send");
    checkMpi(PMPI_Send(s.data(), n, MPI_CHAR, to, kTagInfo, MPI_COMM_WORLD),
             "MPI_Send");
  } else if (rank == to) {
    int n = 0;
    checkMpi(PMPI_Recv(&n, 1, MPI_INT, from, kTagInfo, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE),
             "MPI_Recv");
    s.assign(n, '\0');
    checkMpi(PMPI_Recv(&s[0], n, MPI_CHAR, from, kTagInfo, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE),
             "MPI_Recv");
  }
}

//===----------------------------------------------------------------------===//
// The host-buffer cost
//===----------------------------------------------------------------------===//

double hostPingPong(bool intercepted, double *buf, int rank, int iters) {
  int peer = 1 - rank;
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    if (intercepted) {
      if (rank == 0) {
        MPI_Send(buf, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD);
        MPI_Recv(buf, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        MPI_Send(buf, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD);
      }
    } else {
      if (rank == 0) {
        PMPI_Send(buf, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD);
        PMPI_Recv(buf, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD,
                  MPI_STATUS_IGNORE);
      } else {
        PMPI_Recv(buf, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD,
                  MPI_STATUS_IGNORE);
        PMPI_Send(buf, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD);
      }
    }
  }
  return MPI_Wtime() - t0;
}

void measureHostCost(HostCost &h, int rank, int iters, int reps) {
  double *buf = (double *)std::malloc(sizeof(double));
  *buf = 1.0;
  h.iters = iters;
  h.reps = reps;
  checkMpi(PMPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  hostPingPong(true, buf, rank, std::max(100, iters / 10));
  hostPingPong(false, buf, rank, std::max(100, iters / 10));
  for (int r = 0; r < reps; ++r) {
    // Alternate which goes first, so drift hits both alike.
    for (int k = 0; k < 2; ++k) {
      bool intercepted = (r + k) % 2 == 0;
      double sec = hostPingPong(intercepted, buf, rank, iters);
      double us = sec * 1e6 / (2.0 * iters);
      (intercepted ? h.mpiUs : h.pmpiUs).push_back(us);
    }
  }
  std::free(buf);
  h.measured = true;
  h.mpiMedian = median(h.mpiUs);
  h.pmpiMedian = median(h.pmpiUs);
  h.diffOneWay = h.mpiMedian - h.pmpiMedian;
  h.perCall = h.diffOneWay / 2;
}

} // namespace

//===----------------------------------------------------------------------===//
// main
//===----------------------------------------------------------------------===//

int main(int argc, char **argv) {
  std::vector<LayoutDef> defs = layouts();
  std::vector<int64_t> sizes;
  std::vector<std::string> only;
  int reps = 20, hostIters = 10000, hostReps = 7;
  int64_t maxBytes = 64ll << 20, maxSpan = 1ll << 30;
  bool noDdtc = false;
  // --time: the paths timed (all checked); leaving some out shows whether
  // what they leave behind (host traffic, idle GPU) slows the others.
  bool timed[NumMethods] = {true, true, true, true};
  double contend = 0; // --contend
  bool halo = false;   // --halo, --halo-layout
  HaloOptions haloOpt;
  std::string haloError;
  haloShapeOfCube(512, haloOpt.shape, haloError);
  haloOpt.cube = 512;
  bool repsGiven = false;
  std::string jsonPath;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *what) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ddtc-mpi-bench: %s needs a value (see --help)\n",
                     what);
        std::exit(2);
      }
      return argv[++i];
    };
    auto bytes = [&](const char *what) {
      std::string v = value(what);
      int64_t b = parseBytes(v);
      if (b <= 0) {
        std::fprintf(stderr, "ddtc-mpi-bench: bad byte count '%s' for %s\n",
                     v.c_str(), what);
        std::exit(2);
      }
      return b;
    };
    auto positive = [&](const char *what) {
      std::string v = value(what);
      int n = std::atoi(v.c_str());
      if (n <= 0) {
        std::fprintf(stderr, "ddtc-mpi-bench: bad value '%s' for %s\n",
                     v.c_str(), what);
        std::exit(2);
      }
      return n;
    };
    // An option of two values: whether it is `yes` (else `no`).
    auto either = [&](const char *what, const char *no, const char *yes) {
      std::string v = value(what);
      if (v != no && v != yes) {
        std::fprintf(stderr, "ddtc-mpi-bench: %s takes %s or %s, not '%s'\n",
                     what, no, yes, v.c_str());
        std::exit(2);
      }
      return v == yes;
    };
    if (a == "--help" || a == "-h") {
      usage(defs);
      return 0;
    } else if (a == "--sizes") {
      std::string v = value("--sizes");
      for (const std::string &s : splitList(v)) {
        int64_t b = parseBytes(s);
        if (b <= 0) {
          std::fprintf(stderr, "ddtc-mpi-bench: bad size '%s'\n", s.c_str());
          return 2;
        }
        sizes.push_back(b);
      }
    } else if (a == "--layouts") {
      for (const std::string &s : splitList(value("--layouts"))) {
        if (std::none_of(defs.begin(), defs.end(),
                         [&](const LayoutDef &l) { return l.name == s; })) {
          std::fprintf(stderr,
                       "ddtc-mpi-bench: unknown layout '%s' (see --help)\n",
                       s.c_str());
          return 2;
        }
        only.push_back(s);
      }
    } else if (a == "--reps") {
      reps = positive("--reps");
      repsGiven = true;
    } else if (a == "--max-bytes") {
      maxBytes = bytes("--max-bytes");
    } else if (a == "--max-span") {
      maxSpan = bytes("--max-span");
    } else if (a == "--host-iters") {
      hostIters = positive("--host-iters");
    } else if (a == "--host-reps") {
      hostReps = positive("--host-reps");
    } else if (a == "--no-ddtc") {
      noDdtc = true;
    } else if (a == "--time") {
      std::string list = value("--time");
      std::fill(timed, timed + NumMethods, false);
      std::stringstream ls(list);
      std::string name;
      while (std::getline(ls, name, ',')) {
        int m = 0;
        while (m < NumMethods && name != kMethodNames[m])
          ++m;
        if (m == NumMethods) {
          std::fprintf(stderr,
                       "ddtc-mpi-bench: --time %s: '%s' is not a path "
                       "(ddtc, a, b or c, comma-separated)\n",
                       list.c_str(), name.c_str());
          return 2;
        }
        timed[m] = true;
      }
    } else if (a == "--contend") {
      contend = std::atof(value("--contend").c_str());
      if (!(contend > 0 && contend < 1)) {
        std::fprintf(stderr, "ddtc-mpi-bench: --contend takes a fraction of "
                             "the SMs between 0 and 1\n");
        return 2;
      }
    } else if (a == "--halo") {
      halo = true;
      // The edge is optional: a value follows when it starts with a digit.
      if (i + 1 < argc && std::isdigit((unsigned char)argv[i + 1][0])) {
        haloOpt.cube = std::atoll(argv[++i]);
        if (!haloShapeOfCube(haloOpt.cube, haloOpt.shape, haloError)) {
          std::fprintf(stderr, "ddtc-mpi-bench: --halo: %s\n",
                       haloError.c_str());
          return 2;
        }
      }
    } else if (a == "--halo-layout") {
      halo = true;
      if (!parseHaloShape(value("--halo-layout"), haloOpt.shape, haloError)) {
        std::fprintf(stderr, "ddtc-mpi-bench: --halo-layout: %s\n",
                     haloError.c_str());
        return 2;
      }
      haloOpt.cube = 0;
    } else if (a == "--refs") {
      gDeviceRefs = either("--refs", "host", "device");
    } else if (a == "--host-a") {
      gPinnedA = either("--host-a", "malloc", "pinned");
    } else if (a == "--json") {
      jsonPath = value("--json");
    } else {
      std::fprintf(stderr,
                   "ddtc-mpi-bench: unknown argument '%s' (see --help)\n",
                   a.c_str());
      return 2;
    }
  }
  if (halo && (contend > 0 || gDeviceRefs || noDdtc)) {
    std::fprintf(stderr,
                 "ddtc-mpi-bench: --contend applies to the ping-pong, not "
                 "--halo; --halo needs libddtc-mpi and takes no --refs or "
                 "--no-ddtc\n");
    return 2;
  }
  if (maxBytes > (1ll << 30) || maxSpan > (int64_t(1) << 31) - 1) {
    std::fprintf(stderr, "ddtc-mpi-bench: --max-bytes is at most 1G and "
                         "--max-span below 2G (int counts)\n");
    return 2;
  }
  if (sizes.empty()) {
    sizes.push_back(8);
    for (int64_t b = 16; b <= (64ll << 20); b *= 4)
      sizes.push_back(b);
  }
  sizes.erase(std::remove_if(sizes.begin(), sizes.end(),
                             [&](int64_t b) { return b > maxBytes; }),
              sizes.end());
  if (!only.empty())
    defs.erase(std::remove_if(defs.begin(), defs.end(),
                              [&](const LayoutDef &l) {
                                return std::find(only.begin(), only.end(),
                                                 l.name) == only.end();
                              }),
               defs.end());

  // The GPU comes first: without one there is nothing to measure.
  int deviceCount = 0;
  cudaError_t cerr = cudaGetDeviceCount(&deviceCount);
  if (cerr != cudaSuccess || deviceCount == 0) {
    if (worldRankFromEnv() == 0)
      std::printf("ddtc-mpi-bench: no CUDA device (%s); this benchmark needs "
                  "a GPU\n",
                  cerr != cudaSuccess ? cudaGetErrorString(cerr)
                                      : "no device found");
    std::fflush(stdout);
    return 77;
  }
  int device = localRank() % deviceCount;
  CHECK_CUDA(cudaSetDevice(device));
  CHECK_CUDA(cudaFree(nullptr));

  int rank = initTwoRanks(&argc, &argv, "ddtc-mpi-bench",
                          " (run it with mpirun -np 2)");
  if (rank < 0)
    return 2;
  int peer = 1 - rank;

  // Is MPI_Send interposed (by libddtc-mpi)?
  std::string sendFrom = providerOf("MPI_Send"),
              pmpiFrom = providerOf("PMPI_Send");
  bool interposed = !sendFrom.empty() && sendFrom != pmpiFrom;
  if (!interposed && !noDdtc) {
    if (rank == 0)
      std::fprintf(
          stderr,
          "ddtc-mpi-bench: MPI_Send is not intercepted (it comes from %s): "
          "device buffers would go to an MPI library that may not read GPU "
          "memory. Run with -x LD_PRELOAD=BUILD/lib/libddtc-mpi.so, or pass "
          "--no-ddtc to measure only the baselines.\n",
          sendFrom.c_str());
    MPI_Finalize();
    return 2;
  }
  if (gDeviceRefs) {
    gPredict = reinterpret_cast<double (*)(long long, int)>(
        dlsym(RTLD_DEFAULT, "ddtc_mpi_predict_us"));
    gPredictType = reinterpret_cast<double (*)(long long, int, MPI_Datatype)>(
        dlsym(RTLD_DEFAULT, "ddtc_mpi_predict_type_us"));
    gSetProtocol = reinterpret_cast<int (*)(const char *)>(
        dlsym(RTLD_DEFAULT, "ddtc_mpi_set_protocol"));
    if (noDdtc || !gSetProtocol) {
      if (rank == 0)
        std::fprintf(stderr, "ddtc-mpi-bench: --refs device needs "
                             "libddtc-mpi (ddtc_mpi_set_protocol) and the "
                             "ddtc path\n");
      MPI_Finalize();
      return 2;
    }
  }
  CHECK_DDTC(ddtc_init());

  Report rep;
  if (rank == 0)
    rep.path = jsonPath;
  bool ranksShareGpu = false;
  {
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
    char bus[32] = "";
    cudaDeviceGetPCIBusId(bus, sizeof bus, device);
    std::string mine = JObj()
                           .i64("rank", rank)
                           .i64("device", device)
                           .i64("device_count", deviceCount)
                           .str("gpu", prop.name)
                           .str("pci_bus_id", bus)
                           .str("host",
                                [] {
                                  char h[256] = "";
                                  gethostname(h, sizeof h - 1);
                                  return std::string(h);
                                }())
                           .text();
    std::string other = mine;
    exchangeString(other, 1, 0, rank);
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0, mpiVer = 0, mpiSub = 0;
    PMPI_Get_library_version(lib, &len);
    PMPI_Get_version(&mpiVer, &mpiSub);
    std::string libs(lib, len);
    while (!libs.empty() &&
           (libs.back() == '\n' || libs.back() == ' ' || libs.back() == '\0'))
      libs.pop_back();
    JObj ddtcEnv, mcaEnv, cudaEnv;
    for (char **e = environ; *e; ++e) {
      std::string kv = *e;
      size_t eq = kv.find('=');
      if (eq == std::string::npos)
        continue;
      std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
      if (k.rfind("DDTC_MPI_", 0) == 0)
        ddtcEnv.str(k, v);
      else if (k.rfind("CUDA_MPS_", 0) == 0 || k == "CUDA_VISIBLE_DEVICES")
        cudaEnv.str(k, v);
      else if (k.rfind("OMPI_MCA_", 0) == 0 &&
               k.find("ess_") == std::string::npos &&
               k.find("orte_") == std::string::npos)
        mcaEnv.str(k, v);
    }
    std::string cmd;
    for (int i = 0; i < argc; ++i)
      cmd += (i ? " " : "") + std::string(argv[i]);
    rep.environment.str("gpu", prop.name)
        .str("nvidia_driver", readFirstLine("/proc/driver/nvidia/version"))
        .i64("cuda_driver_version", driver)
        .i64("cuda_runtime_version", runtime)
        .str("mpi_library_version", libs)
        .str("mpi_standard",
             std::to_string(mpiVer) + "." + std::to_string(mpiSub))
        .str("ddtc_version", ddtc_version())
        .add("ranks", jarr({mine, other}))
        .boolean("ranks_share_gpu", false)
        .str("mpi_send_from", sendFrom)
        .str("pmpi_send_from", pmpiFrom)
        .boolean("mpi_send_intercepted", interposed)
        .str("ld_preload",
             std::getenv("LD_PRELOAD") ? std::getenv("LD_PRELOAD") : "")
        .add("ddtc_mpi_env", ddtcEnv.text())
        .add("ompi_mca_env", mcaEnv.text())
        .add("cuda_env", cudaEnv.text())
        .str("command", cmd);
    // Same GPU when both ranks name the same bus id (rank 0 has both).
    int share = other.find("\"pci_bus_id\": " + jstr(bus)) != std::string::npos;
    checkMpi(PMPI_Bcast(&share, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    ranksShareGpu = share != 0;
    if (rank == 0) {
      for (auto &f : rep.environment.f)
        if (f.first == "ranks_share_gpu")
          f.second = share ? "true" : "false";
      std::printf("ddtc-mpi-bench: %s; %s\n", prop.name, libs.c_str());
      std::printf("MPI_Send from %s%s\n", sendFrom.c_str(),
                  interposed ? " (intercepted)" : " (not intercepted)");
      std::printf("ranks share one GPU: %s\n", share ? "yes" : "no");
    }
    std::vector<std::string> sz, ln;
    for (int64_t b : sizes)
      sz.push_back(jint(b));
    for (const LayoutDef &l : defs)
      ln.push_back(
          JObj().str("name", l.name).str("description", l.description).text());
    rep.options.i64("reps", reps)
        .i64("warmup_round_trips", kWarmup)
        .num("rep_target_us", kRepTargetUs)
        .i64("max_round_trips_per_rep", kMaxIters)
        .add("target_sizes", jarr(sz))
        .i64("max_bytes", maxBytes)
        .i64("max_span", maxSpan)
        .boolean("ddtc_path", !noDdtc)
        .add("layouts", jarr(ln, 2))
        .str("references", gDeviceRefs ? "device" : "host")
        .num("contend_fraction_of_sms", contend)
        .str("a", gDeviceRefs
                      ? "the packed bytes as a contiguous device buffer "
                        "(MPI_BYTE) through libddtc-mpi"
                      : gPinnedA ? "the packed bytes in pinned host memory "
                                   "(cudaHostAlloc) through PMPI_Send/PMPI_Recv"
                                 : "the packed bytes in malloc'ed host memory "
                                   "through PMPI_Send/PMPI_Recv")
        .str("b", "cudaMemcpy of the whole true extent to a malloc'ed host "
                  "mirror, PMPI_Send of the derived type, and back")
        .str("c", gDeviceRefs
                      ? "the derived type from device memory through "
                        "libddtc-mpi with its host-memory protocols only "
                        "(ddtc_mpi_set_protocol(\"pipeline\"))"
                      : "hand-written staging: pack on the GPU, cudaMemcpy "
                        "to pinned memory, PMPI_Send of MPI_PACKED, and back");
  }
  if (halo) {
    haloOpt.reps = repsGiven ? reps : 50;
    haloOpt.jsonPath = jsonPath;
    haloOpt.environment = rep.environment;
    DeviceMemory memory;
    memory.alloc = [](size_t n) {
      void *p = nullptr;
      CHECK_CUDA(cudaMalloc(&p, n));
      return p;
    };
    memory.free = [](void *p) { CHECK_CUDA(cudaFree(p)); };
    memory.toDevice = [](void *d, const void *s, size_t n) {
      CHECK_CUDA(cudaMemcpy(d, s, n, cudaMemcpyHostToDevice));
    };
    memory.toHost = [](void *d, const void *s, size_t n) {
      CHECK_CUDA(cudaMemcpy(d, s, n, cudaMemcpyDeviceToHost));
    };
    int status = runHaloExchange(haloOpt, memory, rank);
    ddtc_finalize();
    MPI_Finalize();
    return status;
  }

  int exitCode = 0;
  const double start = MPI_Wtime();
  rep.start = start;
  gOnAbort = [&](const std::string &why) {
    if (rank == 0)
      rep.write(false, why);
  };

  // The cost interposition adds to host buffers.
  if (!noDdtc) {
    measureHostCost(rep.host, rank, hostIters, hostReps);
    if (rank == 0) {
      std::printf("host buffers, 8 B ping-pong: MPI_Send/MPI_Recv %.3f us "
                  "one-way, PMPI_Send/PMPI_Recv %.3f us; added %.3f us per "
                  "one-way trip = %.3f us per call (median of %d x %d round "
                  "trips)\n",
                  rep.host.mpiMedian, rep.host.pmpiMedian, rep.host.diffOneWay,
                  rep.host.perCall, hostReps, hostIters);
      rep.write(false);
    }
  }

  // The busy kernel is set up once, before any is launched, and torn down
  // after the last one ended: nothing is allocated or freed while it runs.
  Contention contention;
  if (contend > 0) {
    contention.setUp(contend, device, rank == 0 || !ranksShareGpu);
    if (rank == 0)
      std::printf("--contend %.2f: every repetition is also timed while a "
                  "busy kernel holds %d of the %d SMs of %s (blocks of 1024 "
                  "threads); busy us = ddtc's one-way time then, loss = busy "
                  "/ ddtc - 1 (target <= %.0f%%)\n",
                  contend, contention.blocks(), contention.sms(),
                  ranksShareGpu ? "the GPU both ranks share (launched by "
                                  "rank 0)"
                                : "each rank's GPU",
                  100 * kContentionTarget);
  }
  if (rank == 0) {
    std::printf("\n%-18s %10s %9s %8s %9s %7s %10s %9s %7s %7s", "layout",
                "bytes", "ddtc us", "GB/s", "a us", "ddtc/a", "b us", "c us",
                "vs b", "vs c");
    if (contend > 0)
      std::printf(" %9s %7s", "busy us", "loss");
    std::printf("  check\n");
    std::fflush(stdout);
  }
  auto cell = [](double v, const char *fmt, int width) {
    char b[64];
    if (std::isfinite(v))
      std::snprintf(b, sizeof b, fmt, width, v);
    else
      std::snprintf(b, sizeof b, "%*s", width, "-");
    return std::string(b);
  };

  unsigned seed = 1;
  for (const LayoutDef &l : defs) {
    std::vector<int64_t> done;
    for (int64_t target : sizes) {
      int64_t k = chooseParam(l, (double)target);
      int64_t packedGuess = (int64_t)l.packed(k);
      if (std::find(done.begin(), done.end(), packedGuess) != done.end())
        continue;
      done.push_back(packedGuess);

      Side s;
      s.in = l.build(k, rank, maxSpan);
      measure(s);
      int64_t largest = s.alloc;
      checkMpi(PMPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_INT64_T, MPI_MAX,
                              MPI_COMM_WORLD),
               "MPI_Allreduce");
      if (largest > maxSpan) {
        if (rank == 0)
          std::printf("%-18s %10lld  left out: a %lld-byte buffer is above "
                      "--max-span\n",
                      l.name.c_str(), (long long)s.packed, (long long)largest);
        s.release();
        continue;
      }
      setup(s);
      // Both ranks must agree on the packed size; rank 1 reports its side.
      int64_t info[4] = {s.packed, s.alloc, s.cError.empty() ? 1 : 0, 0};
      int64_t otherInfo[4] = {0, 0, 0, 0};
      checkMpi(PMPI_Sendrecv(info, 4, MPI_INT64_T, peer, kTagInfo, otherInfo, 4,
                             MPI_INT64_T, peer, kTagInfo, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE),
               "MPI_Sendrecv");
      if (otherInfo[0] != s.packed)
        die("%s: the ranks' types differ in size (%lld and %lld bytes)",
            l.name.c_str(), (long long)s.packed, (long long)otherInfo[0]);
      bool cOk = info[2] && otherInfo[2];
      std::string cError = s.cError;
      exchangeString(cError, 1, 0, rank);
      if (cError.empty())
        cError = s.cError;

      Point p;
      p.layout = l.name;
      p.target = target;
      p.packed = s.packed;
      p.span = s.trueExt;
      p.alloc0 = rank == 0 ? s.alloc : otherInfo[1];
      p.alloc1 = rank == 1 ? s.alloc : otherInfo[1];
      {
        std::string mine = s.in.params.empty() ? "{}" : s.in.params;
        std::string g = gatherName(s.in.gather);
        if (!s.gatherNote.empty())
          g += ": " + s.gatherNote;
        std::string otherParams = mine, otherGather = g;
        exchangeString(otherParams, 1, 0, rank);
        exchangeString(otherGather, 1, 0, rank);
        p.params0 = mine;
        p.params1 = otherParams;
        p.gather0 = g;
        p.gather1 = otherGather;
        if (rank == 0)
          p.span = s.trueExt;
      }

      // The reference: rank 0's pattern packed by MPI on the host; each rank
      // unpacks it into a poisoned copy of its buffer.
      std::unique_ptr<unsigned char[]> packedRef(new unsigned char[s.packed]);
      if (rank == 0) {
        fillPattern(s, seed);
        std::unique_ptr<unsigned char[]> host(new unsigned char[s.alloc]);
        CHECK_CUDA(
            cudaMemcpy(host.get(), s.dev, s.alloc, cudaMemcpyDeviceToHost));
        int pos = 0;
        checkMpi(PMPI_Pack(host.get(), 1, s.in.type, packedRef.get(),
                           (int)s.packed, &pos, MPI_COMM_WORLD),
                 "MPI_Pack");
        if (pos != s.packed)
          die("MPI_Pack wrote %d bytes, expected %lld", pos,
              (long long)s.packed);
        checkMpi(PMPI_Send(packedRef.get(), (int)s.packed, MPI_BYTE, 1, kTagRef,
                           MPI_COMM_WORLD),
                 "MPI_Send");
      } else {
        checkMpi(PMPI_Recv(packedRef.get(), (int)s.packed, MPI_BYTE, 0, kTagRef,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 "MPI_Recv");
      }
      std::unique_ptr<unsigned char[]> want(new unsigned char[s.alloc]);
      std::memset(want.get(), kPoison, s.alloc);
      {
        int pos = 0;
        checkMpi(PMPI_Unpack(packedRef.get(), (int)s.packed, &pos, want.get(),
                             1, s.in.type, MPI_COMM_WORLD),
                 "MPI_Unpack");
      }
      packedRef.reset();

      // Check each path one message each way.
      bool run[NumMethods] = {!noDdtc, true, true, cOk};
      if (!cOk) {
        p.t[C].check = "unavailable";
        p.t[C].detail = cError;
      }
      p.t[A].check = "not checked";
      std::vector<Method> toCheck;
      if (!noDdtc)
        toCheck.push_back(DDTC);
      toCheck.push_back(B);
      if (cOk)
        toCheck.push_back(C);
      for (Method m : toCheck) {
        CheckResult forward, back;
        if (rank == 0)
          fillPattern(s, seed);
        else
          poison(s);
        checkMpi(PMPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        if (rank == 0) {
          sendWith(m, s, 1);
        } else {
          forward.statusBytes = recvWith(m, s, 0, m == DDTC);
          forward.expectBytes = s.packed;
          CheckResult c = compareDevice(s, want.get());
          forward.wrongType = c.wrongType;
          forward.wrongOutside = c.wrongOutside;
          forward.first = c.first;
        }
        // The way back: rank 1 returns what it received.
        if (rank == 0)
          poison(s);
        checkMpi(PMPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        if (rank == 1) {
          sendWith(m, s, 0);
        } else {
          back.statusBytes = recvWith(m, s, 1, m == DDTC);
          back.expectBytes = s.packed;
          CheckResult c = compareDevice(s, want.get());
          back.wrongType = c.wrongType;
          back.wrongOutside = c.wrongOutside;
          back.first = c.first;
        }
        int64_t fw[5] = {forward.wrongType, forward.wrongOutside, forward.first,
                         forward.statusBytes, forward.expectBytes};
        if (rank == 1) {
          checkMpi(PMPI_Send(fw, 5, MPI_INT64_T, 0, kTagCheck, MPI_COMM_WORLD),
                   "MPI_Send");
        } else {
          checkMpi(PMPI_Recv(fw, 5, MPI_INT64_T, 1, kTagCheck, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE),
                   "MPI_Recv");
          forward.wrongType = fw[0];
          forward.wrongOutside = fw[1];
          forward.first = fw[2];
          forward.statusBytes = fw[3];
          forward.expectBytes = fw[4];
        }
        int ok = forward.ok() && back.ok();
        checkMpi(PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
        p.t[m].check = ok ? "passed" : "FAILED";
        if (!ok) {
          run[m] = false;
          if (rank == 0) {
            std::string d;
            if (!forward.ok())
              d += forward.text("rank 0 -> rank 1");
            if (!back.ok())
              d += std::string(d.empty() ? "" : " ") +
                   back.text("rank 1 -> rank 0");
            p.t[m].detail = d;
            std::printf("CHECK FAILED %s %lld bytes, path %s: %s\n",
                        l.name.c_str(), (long long)s.packed, kMethodNames[m],
                        d.c_str());
            std::fflush(stdout);
            rep.failures.push_back(JObj()
                                       .str("layout", l.name)
                                       .i64("packed_bytes", s.packed)
                                       .str("path", kMethodNames[m])
                                       .str("detail", d)
                                       .text());
          }
        }
      }
      want.reset();
      if (noDdtc)
        p.check = "not checked";
      else
        p.check = p.t[DDTC].check;
      p.detail = p.t[DDTC].detail;
      bool anyFailed = false;
      for (Method m : toCheck)
        anyFailed |= p.t[m].check == "FAILED";
      if (anyFailed)
        exitCode = 1;
      // A failing ddtc path leaves the whole point untimed.
      if (!noDdtc && p.t[DDTC].check != "passed")
        run[A] = run[B] = run[C] = false;

      checkMpi(PMPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
      for (int m = 0; m < NumMethods; ++m)
        run[m] = run[m] && timed[m];
      if (run[DDTC] || run[A] || run[B] || run[C]) {
        timeMethods(s, rank, reps, run, p.t,
                    contend > 0 ? &contention : nullptr);
      }
      checkMpi(PMPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
      // The model's prediction for rank 0's side's type, while it lives
      // (MPI_Type_free sets the handle to MPI_DATATYPE_NULL, which stands
      // for a type whose pack reads only its own bytes).
      if (rank == 0 && (gPredict || gPredictType)) {
        double pred = gPredictType
                          ? gPredictType((long long)p.packed, 1, s.in.type)
                          : gPredict((long long)p.packed, 1);
        if (pred >= 0)
          p.predictedUs = pred;
      }
      s.release();
      ++seed;

      if (rank == 0) {
        double d = p.t[DDTC].us;
        std::string busyCells;
        if (contend > 0)
          busyCells = " " + cell(p.t[DDTC].busyUs, "%*.2f", 9) + " " +
                      cell(100 * p.t[DDTC].loss(), "%+*.1f%%", 6);
        std::printf(
            "%-18s %10lld %s %s %s %s %s %s %s %s%s  %s%s\n", l.name.c_str(),
            (long long)p.packed, cell(d, "%*.2f", 9).c_str(),
            cell(ratio((double)p.packed, d) / 1e3, "%*.3f", 8).c_str(),
            cell(p.t[A].us, "%*.2f", 9).c_str(),
            cell(ratio(p.t[A].us, d), "%*.3f", 7).c_str(),
            cell(p.t[B].us, "%*.2f", 10).c_str(),
            cell(p.t[C].us, "%*.2f", 9).c_str(),
            cell(ratio(p.t[B].us, d), "%*.2f", 7).c_str(),
            cell(ratio(p.t[C].us, d), "%*.2f", 7).c_str(), busyCells.c_str(),
            p.check.c_str(),
            std::isfinite(p.predictedUs)
                ? ("  model " + cell(p.predictedUs, "%*.1f", 0) + " us (" +
                   cell(100 * (p.predictedUs - d) / d, "%+*.0f", 0) + "%)")
                      .c_str()
                : "");
        std::fflush(stdout);
        rep.points.push_back(std::move(p));
        rep.write(false);
      }
    }
  }

  if (rank == 0) {
    if (!noDdtc) {
      std::printf("\none-way latency of messages <= 1 KiB packed (ddtc vs a):"
                  "\n%-18s %8s %9s %9s %9s\n",
                  "layout", "bytes", "ddtc us", "a us", "diff us");
      for (const Point &p : rep.points)
        if (smallMessage(p.target, p.packed) && p.t[DDTC].timed && p.t[A].timed)
          std::printf("%-18s %8lld %9.2f %9.2f %9.2f\n", p.layout.c_str(),
                      (long long)p.packed, p.t[DDTC].us, p.t[A].us,
                      p.t[DDTC].us - p.t[A].us);
      std::printf("host buffers: added %.3f us per call (%.3f us per one-way "
                  "trip)\n",
                  rep.host.perCall, rep.host.diffOneWay);
      std::vector<double> errors;
      for (const Point &p : rep.points)
        if (std::isfinite(p.predictedUs) && std::isfinite(p.t[DDTC].us))
          errors.push_back(std::fabs(p.predictedUs - p.t[DDTC].us) /
                           p.t[DDTC].us);
      if (!errors.empty())
        std::printf("model of the IPC path: %zu points, |predicted - "
                    "measured| / measured: median %.0f%%, max %.0f%%\n",
                    errors.size(), 100 * median(errors),
                    100 * *std::max_element(errors.begin(), errors.end()));
    }
    if (contend > 0) {
      // The loss of the ddtc path per point, and the worst.
      const Point *worst = nullptr;
      int measured = 0, over = 0, expired = 0;
      for (const Point &p : rep.points) {
        for (int m = 0; m < NumMethods; ++m)
          expired += p.t[m].busyExpired;
        double loss = p.t[DDTC].loss();
        if (!std::isfinite(loss))
          continue;
        ++measured;
        over += loss > kContentionTarget;
        if (!worst || loss > worst->t[DDTC].loss())
          worst = &p;
      }
      if (worst)
        std::printf("contention: ddtc loses more than %.0f%% at %d of %d "
                    "points; worst %+.1f%% (%s, %lld bytes: %.2f us busy vs "
                    "%.2f us)\n",
                    100 * kContentionTarget, over, measured,
                    100 * worst->t[DDTC].loss(), worst->layout.c_str(),
                    (long long)worst->packed, worst->t[DDTC].busyUs,
                    worst->t[DDTC].us);
      if (expired)
        std::printf("contention: in %d repetitions the busy kernel reached "
                    "its time limit before the round trips ended: those "
                    "transfers waited for it\n",
                    expired);
    }
    int failed = 0;
    for (const Point &p : rep.points)
      failed += p.check == "FAILED";
    std::printf("%zu points, %zu path failures (%d points with the ddtc path "
                "failing)\n",
                rep.points.size(), rep.failures.size(), failed);
    rep.write(true);
    std::printf("%.1f s\n", MPI_Wtime() - start);
    if (!jsonPath.empty())
      std::printf("wrote %s\n", jsonPath.c_str());
  }
  gOnAbort = nullptr;
  contention.tearDown();
  ddtc_finalize();
  MPI_Finalize();
  return exitCode;
}
