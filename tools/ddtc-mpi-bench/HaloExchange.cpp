//===- HaloExchange.cpp - ddtc-mpi-bench --halo: a 3-d halo exchange ------===//
//
// Geometry: dimension d (0 = z, 1 = y, 2 = x) of the padded block has
// S[d] + 2 entries; the interior is [1, S[d]]. Side 0 is low, 1 high. The
// face (d, side) is the interior plane at 1 or S[d], the ghost (d, side) the
// plane at 0 or S[d] + 1, both over the interior extent of the other two
// dimensions (edges and corners are not exchanged). The ghost (d, side)
// receives the peer's face (d, 1 - side), sent with the tag of that face.
//===----------------------------------------------------------------------===//

#include "HaloExchange.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace bench {
namespace {

constexpr int kTagFace = 40; // + 2 * d + side of the face sent
constexpr unsigned char kPoisonByte = 0xA5;
constexpr double kTargetRatio = 1.3;
const char *const kDimNames[3] = {"z", "y", "x"};

/// The value rank `r` stores at linear index i of its block (or of its
/// contiguous send buffer): positive integers, exact in a double and
/// different for every (rank, index); the poison (bytes 0xA5) is negative.
double patternValue(int r, int64_t i) {
  return 1.0 + (double)r * 2147483648.0 + (double)i;
}

double poisonValue() {
  double v;
  std::memset(&v, kPoisonByte, sizeof v);
  return v;
}

bool sameBits(double a, double b) { return std::memcmp(&a, &b, 8) == 0; }

struct Geometry {
  int64_t S[3], P[3]; // interior and padded sizes
  int64_t elements = 0;
  int64_t faceElems[3];      // of a face normal to d
  int64_t refOffset[6] = {}; // message i = 2d + side in the contiguous
  int64_t refElements = 0;   // buffers, in doubles

  explicit Geometry(const HaloShape &s) {
    S[0] = s.z, S[1] = s.y, S[2] = s.x;
    for (int d = 0; d < 3; ++d)
      P[d] = S[d] + 2;
    elements = P[0] * P[1] * P[2];
    for (int d = 0; d < 3; ++d)
      faceElems[d] = S[(d + 1) % 3] * S[(d + 2) % 3];
    for (int i = 0; i < 6; ++i) {
      refOffset[i] = refElements;
      refElements += faceElems[i / 2];
    }
  }
  int64_t index(const int64_t c[3]) const {
    return (c[0] * P[1] + c[1]) * P[2] + c[2];
  }
  int64_t facePlane(int d, int side) const { return side ? S[d] : 1; }
  int64_t ghostPlane(int d, int side) const { return side ? S[d] + 1 : 0; }
  int64_t faceBytes(int d) const { return 8 * faceElems[d]; }
  int64_t sendBytes() const { return 8 * refElements; }
};

/// A value of the pattern as "rank r's (z, y, x)" (coordinates in the
/// padded block), or "the poison", or the number itself.
std::string describeValue(const Geometry &g, double v) {
  if (sameBits(v, poisonValue()))
    return "the poison";
  char b[128];
  double k = v - 1;
  if (k >= 0 && k < 2 * 2147483648.0 && k == std::floor(k)) {
    int r = k >= 2147483648.0;
    int64_t i = (int64_t)(k - r * 2147483648.0);
    if (i < g.elements) {
      int64_t x = i % g.P[2], y = i / g.P[2] % g.P[1], z = i / g.P[2] / g.P[1];
      std::snprintf(b, sizeof b,
                    "rank %d's (%" PRId64 ", %" PRId64 ", %" PRId64 ")", r, z,
                    y, x);
      return b;
    }
  }
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

/// The subarray type of the plane `plane` of dimension d over the interior
/// of the other two.
MPI_Datatype planeType(const Geometry &g, int d, int64_t plane) {
  int sizes[3], sub[3], start[3];
  for (int k = 0; k < 3; ++k) {
    sizes[k] = (int)g.P[k];
    sub[k] = k == d ? 1 : (int)g.S[k];
    start[k] = k == d ? (int)plane : 1;
  }
  MPI_Datatype t;
  checkMpi(MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C,
                                    MPI_DOUBLE, &t),
           "MPI_Type_create_subarray");
  checkMpi(MPI_Type_commit(&t), "MPI_Type_commit");
  return t;
}

/// What a check of one rank found.
struct Found {
  int64_t wrongInterior = 0, wrongGhost = 0, wrongEdges = 0, wrongCounts = 0;
  int64_t first = -1; // index of the first wrong double
  std::string where;  // the first wrong double, said for people
  bool ok() const {
    return !wrongInterior && !wrongGhost && !wrongEdges && !wrongCounts;
  }
};

class Exchange {
public:
  Exchange(const HaloOptions &o, const DeviceMemory &m, int rank)
      : opt(o), mem(m), g(o.shape), rank(rank), peer(1 - rank) {
    for (int i = 0; i < 6; ++i)
      faceType[i] = ghostType[i] = MPI_DATATYPE_NULL;
  }
  ~Exchange() { release(); }

  int run();

private:
  const HaloOptions &opt;
  const DeviceMemory &mem;
  Geometry g;
  int rank, peer;
  double *block = nullptr;   // device: the padded block
  double *sendRef = nullptr; // device: the 6 contiguous messages
  double *recvRef = nullptr;
  MPI_Datatype faceType[6], ghostType[6];
  std::vector<double> initial; // host: the pattern with poisoned ghosts

  void setUp();
  void release();
  void exchange(bool typed, MPI_Status statuses[12]);
  Found checkTyped(const MPI_Status *statuses);
  Found checkContiguous(const MPI_Status *statuses);
  double timeOnce(bool typed);
  std::string report(const char *what, const Found &f) const;
};

void Exchange::setUp() {
  for (int d = 0; d < 3; ++d)
    for (int side = 0; side < 2; ++side) {
      faceType[2 * d + side] = planeType(g, d, g.facePlane(d, side));
      ghostType[2 * d + side] = planeType(g, d, g.ghostPlane(d, side));
    }
  // The interior holds the pattern, every ghost byte the poison.
  initial.assign(g.elements, poisonValue());
  int64_t c[3];
  for (c[0] = 1; c[0] <= g.S[0]; ++c[0])
    for (c[1] = 1; c[1] <= g.S[1]; ++c[1])
      for (c[2] = 1; c[2] <= g.S[2]; ++c[2]) {
        int64_t i = g.index(c);
        initial[i] = patternValue(rank, i);
      }
  block = (double *)mem.alloc(8 * g.elements);
  sendRef = (double *)mem.alloc(g.sendBytes());
  recvRef = (double *)mem.alloc(g.sendBytes());
  std::vector<double> ref(g.refElements);
  for (int64_t i = 0; i < g.refElements; ++i)
    ref[i] = patternValue(rank, i);
  mem.toDevice(sendRef, ref.data(), g.sendBytes());
}

void Exchange::release() {
  for (MPI_Datatype *t : {faceType, ghostType})
    for (int i = 0; i < 6; ++i)
      if (t[i] != MPI_DATATYPE_NULL)
        MPI_Type_free(&t[i]);
  if (block)
    mem.free(block);
  if (sendRef)
    mem.free(sendRef);
  if (recvRef)
    mem.free(recvRef);
  block = sendRef = recvRef = nullptr;
}

/// One exchange: 6 receives into the ghosts, 6 sends of the faces, Waitall.
/// typed: the subarray types on the block; else the contiguous buffers.
void Exchange::exchange(bool typed, MPI_Status statuses[12]) {
  MPI_Request req[12];
  for (int d = 0; d < 3; ++d)
    for (int side = 0; side < 2; ++side) {
      int i = 2 * d + side;
      int recvTag = kTagFace + 2 * d + (1 - side);
      if (typed) {
        checkMpi(MPI_Irecv(block, 1, ghostType[i], peer, recvTag,
                           MPI_COMM_WORLD, &req[i]),
                 "MPI_Irecv (ghost face, subarray)");
      } else {
        checkMpi(MPI_Irecv(recvRef + g.refOffset[i], (int)g.faceBytes(d),
                           MPI_BYTE, peer, recvTag, MPI_COMM_WORLD, &req[i]),
                 "MPI_Irecv (contiguous device bytes)");
      }
    }
  for (int d = 0; d < 3; ++d)
    for (int side = 0; side < 2; ++side) {
      int i = 2 * d + side;
      if (typed)
        checkMpi(MPI_Isend(block, 1, faceType[i], peer, kTagFace + i,
                           MPI_COMM_WORLD, &req[6 + i]),
                 "MPI_Isend (face, subarray)");
      else
        checkMpi(MPI_Isend(sendRef + g.refOffset[i], (int)g.faceBytes(d),
                           MPI_BYTE, peer, kTagFace + i, MPI_COMM_WORLD,
                           &req[6 + i]),
                 "MPI_Isend (contiguous device bytes)");
    }
  checkMpi(MPI_Waitall(12, req, statuses), "MPI_Waitall");
}

/// Counts the receives whose status reports another source or byte count
/// than the face's.
int64_t wrongCounts(const Geometry &g, const MPI_Status *statuses, int peer) {
  int64_t wrong = 0;
  if (!statuses) // not kept for timed exchanges
    return 0;
  for (int i = 0; i < 6; ++i) {
    int n = -1;
    checkMpi(MPI_Get_count(&statuses[i], MPI_BYTE, &n), "MPI_Get_count");
    wrong += n != g.faceBytes(i / 2) || statuses[i].MPI_SOURCE != peer;
  }
  return wrong;
}

/// Reads the block back: interior untouched, every ghost face the peer's
/// face, edges and corners still the poison.
Found Exchange::checkTyped(const MPI_Status *statuses) {
  Found f;
  f.wrongCounts = wrongCounts(g, statuses, peer);
  std::vector<double> got(g.elements);
  mem.toHost(got.data(), block, 8 * g.elements);
  const double poison = poisonValue();
  int64_t c[3];
  for (c[0] = 0; c[0] < g.P[0]; ++c[0])
    for (c[1] = 0; c[1] < g.P[1]; ++c[1])
      for (c[2] = 0; c[2] < g.P[2]; ++c[2]) {
        int64_t i = g.index(c);
        int ghostDims = 0, d = -1;
        for (int k = 0; k < 3; ++k)
          if (c[k] == 0 || c[k] == g.S[k] + 1)
            ++ghostDims, d = k;
        double want;
        if (ghostDims == 0) {
          want = patternValue(rank, i);
        } else if (ghostDims == 1) {
          int64_t src[3] = {c[0], c[1], c[2]};
          src[d] = c[d] == 0 ? g.S[d] : 1; // the peer's opposite face
          want = patternValue(peer, g.index(src));
        } else {
          want = poison;
        }
        if (sameBits(got[i], want))
          continue;
        if (f.first < 0) {
          char b[96];
          std::snprintf(b, sizeof b,
                        "(z, y, x) = (%" PRId64 ", %" PRId64 ", %" PRId64 ")",
                        c[0], c[1], c[2]);
          f.where = std::string(b) + " holds " + describeValue(g, got[i]) +
                    ", expected " + describeValue(g, want);
          f.first = i;
        }
        (ghostDims == 0   ? f.wrongInterior
         : ghostDims == 1 ? f.wrongGhost
                          : f.wrongEdges)++;
      }
  return f;
}

/// Reads the contiguous receive buffers back: message i holds the peer's
/// message of the opposite face.
Found Exchange::checkContiguous(const MPI_Status *statuses) {
  Found f;
  f.wrongCounts = wrongCounts(g, statuses, peer);
  std::vector<double> got(g.refElements);
  mem.toHost(got.data(), recvRef, g.sendBytes());
  for (int i = 0; i < 6; ++i) {
    int opposite = i ^ 1;
    for (int64_t k = 0; k < g.faceElems[i / 2]; ++k) {
      int64_t at = g.refOffset[i] + k;
      double want = patternValue(peer, g.refOffset[opposite] + k);
      if (!sameBits(got[at], want)) {
        if (f.first < 0) {
          char b[160];
          std::snprintf(
              b, sizeof b,
              "message %s %s, double %" PRId64 ", holds %.17g, expected %.17g",
              kDimNames[i / 2], i % 2 ? "high" : "low", k, got[at], want);
          f.where = b;
          f.first = at;
        }
        ++f.wrongGhost;
      }
    }
  }
  return f;
}

std::string Exchange::report(const char *what, const Found &f) const {
  if (f.ok())
    return "";
  char b[512];
  std::snprintf(b, sizeof b,
                "rank %d, %s: %" PRId64 " interior doubles changed, %" PRId64
                " received doubles wrong, %" PRId64
                " edge or corner doubles overwritten, %" PRId64
                " receives with a wrong count or source%s%s",
                rank, what, f.wrongInterior, f.wrongGhost, f.wrongEdges,
                f.wrongCounts,
                f.where.empty() ? "" : "; first wrong: ", f.where.c_str());
  return b;
}

/// The slower rank's seconds of one exchange, started together.
double Exchange::timeOnce(bool typed) {
  MPI_Status st[12];
  checkMpi(PMPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  double t0 = MPI_Wtime();
  exchange(typed, st);
  double t = MPI_Wtime() - t0;
  checkMpi(
      PMPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
      "MPI_Allreduce");
  return t;
}

/// Rank 0 gets both ranks' problems ("" where a rank found none).
std::string gatherProblems(const std::string &mine, int rank) {
  std::string all = mine;
  int n = (int)mine.size();
  if (rank == 1) {
    checkMpi(PMPI_Send(&n, 1, MPI_INT, 0, kTagFace - 1, MPI_COMM_WORLD),
             "MPI_Send");
    checkMpi(
        PMPI_Send(mine.data(), n, MPI_CHAR, 0, kTagFace - 1, MPI_COMM_WORLD),
        "MPI_Send");
    return "";
  }
  checkMpi(PMPI_Recv(&n, 1, MPI_INT, 1, kTagFace - 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
           "MPI_Recv");
  std::string other(n, '\0');
  checkMpi(PMPI_Recv(&other[0], n, MPI_CHAR, 1, kTagFace - 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
           "MPI_Recv");
  if (!other.empty())
    all += (all.empty() ? "" : "; ") + other;
  return all;
}

int Exchange::run() {
  setUp();
  const HaloShape &s = opt.shape;
  if (rank == 0) {
    std::printf("halo exchange, 2 ranks: ");
    if (opt.cube)
      std::printf("a %" PRId64 "^3 cube of doubles split along z, ", opt.cube);
    std::printf("each rank %" PRId64 " x %" PRId64 " x %" PRId64
                " (z y x) doubles plus one ghost layer (%.1f MB per rank); "
                "periodic, so every neighbour is the other rank\n",
                s.z, s.y, s.x, 8e-6 * g.elements);
    std::printf("faces per exchange and rank, 6 MPI_Isend of subarrays + 6 "
                "MPI_Irecv into the ghosts, MPI_Waitall:");
    for (int d = 0; d < 3; ++d)
      std::printf(" %s 2 x %" PRId64 " B%s", kDimNames[d], g.faceBytes(d),
                  d < 2 ? "," : "");
    std::printf(" = %" PRId64 " B each way; reference: the same 12 messages "
                "as contiguous device buffers (MPI_BYTE)\n",
                g.sendBytes());
    std::fflush(stdout);
  }

  // Check first: one exchange of each kind from a fresh block, every double
  // read back. After timing the buffers are read as the last timed
  // exchanges left them, which must be the same.
  auto verify = [&](const char *when, const MPI_Status *typedSt,
                    const MPI_Status *contigSt, std::string &detail) {
    std::string problems = report(when, checkTyped(typedSt));
    std::string ref =
        report((std::string(when) + ", contiguous reference").c_str(),
               checkContiguous(contigSt));
    if (!ref.empty())
      problems += (problems.empty() ? "" : "; ") + ref;
    detail = gatherProblems(problems, rank);
    int ok = detail.empty();
    checkMpi(PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return ok != 0;
  };
  std::string before, after;
  mem.toDevice(block, initial.data(), 8 * g.elements);
  {
    std::vector<double> poisoned(g.refElements, poisonValue());
    mem.toDevice(recvRef, poisoned.data(), g.sendBytes());
  }
  checkMpi(PMPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  MPI_Status typedSt[12], contigSt[12];
  exchange(true, typedSt);
  exchange(false, contigSt);
  bool okBefore = verify("before timing", typedSt, contigSt, before);
  std::vector<double> typedUs, contigUs;
  bool okAfter = false;
  if (okBefore) {
    for (int w = 0; w < opt.warmup; ++w) {
      timeOnce(true);
      timeOnce(false);
    }
    for (int r = 0; r < opt.reps; ++r) {
      // Alternate which goes first, so that drift hits both alike.
      for (int k = 0; k < 2; ++k) {
        bool typed = (r + k) % 2 == 0;
        (typed ? typedUs : contigUs).push_back(1e6 * timeOnce(typed));
      }
    }
    okAfter = verify("after timing", nullptr, nullptr, after);
  }

  double mh = median(typedUs), mc = median(contigUs), q = ratio(mh, mc);
  bool passed = okBefore && okAfter;
  if (rank == 0) {
    std::string check = passed ? "passed" : "FAILED";
    if (!okBefore)
      std::printf("CHECK FAILED before timing: %s\n", before.c_str());
    else if (!okAfter)
      std::printf("CHECK FAILED after timing: %s\n", after.c_str());
    std::printf("\n%-14s %10s %10s %10s %10s %7s %8s  %s\n", "halo", "bytes",
                "typed us", "contig us", "min us", "ratio", "target", "check");
    char name[64];
    std::snprintf(name, sizeof name, "halo-%s",
                  opt.cube ? std::to_string(opt.cube).c_str()
                           : s.text().c_str());
    auto cell = [](double v, const char *fmt, int width) {
      char b[32];
      if (std::isfinite(v))
        std::snprintf(b, sizeof b, fmt, width, v);
      else
        std::snprintf(b, sizeof b, "%*s", width, "-");
      return std::string(b);
    };
    double minH = typedUs.empty()
                      ? NAN
                      : *std::min_element(typedUs.begin(), typedUs.end());
    std::printf("%-14s %10" PRId64 " %s %s %s %s %8s  %s\n", name,
                g.sendBytes(), cell(mh, "%*.2f", 10).c_str(),
                cell(mc, "%*.2f", 10).c_str(), cell(minH, "%*.2f", 10).c_str(),
                cell(q, "%*.3f", 7).c_str(), "<= 1.3", check.c_str());
    std::printf("halo exchange: typed / contiguous = %s (median of %d "
                "exchanges each, the slower rank's MPI_Wtime from a "
                "barrier to MPI_Waitall); target <= %.1f: %s\n",
                cell(q, "%*.3f", 0).c_str(), (int)typedUs.size(), kTargetRatio,
                !std::isfinite(q)   ? "not measured"
                : q <= kTargetRatio ? "met"
                                    : "missed");
    std::printf("halo exchange checks %s\n", passed ? "passed" : "FAILED");
    std::fflush(stdout);

    if (!opt.jsonPath.empty()) {
      std::vector<std::string> faces;
      for (int d = 0; d < 3; ++d)
        for (int side = 0; side < 2; ++side)
          faces.push_back(JObj()
                              .str("dim", kDimNames[d])
                              .str("side", side ? "high" : "low")
                              .i64("bytes", g.faceBytes(d))
                              .i64("face_plane", g.facePlane(d, side))
                              .i64("ghost_plane", g.ghostPlane(d, side))
                              .text());
      JObj h;
      h.add("block_zyx",
            "[" + jint(s.z) + ", " + jint(s.y) + ", " + jint(s.x) + "]")
          .i64("cube", opt.cube)
          .i64("padded_bytes_per_rank", 8 * g.elements)
          .i64("bytes_each_way", g.sendBytes())
          .add("faces", jarr(faces, 2))
          .str("check_before_timing", okBefore ? "passed" : "FAILED")
          .str("check_after_timing", !okBefore ? "not run"
                                     : okAfter ? "passed"
                                               : "FAILED")
          .str("check_detail", !okBefore ? before : after)
          .num("typed_median_us", mh)
          .num("contig_median_us", mc)
          .num("typed_over_contig", q)
          .num("target_ratio", kTargetRatio)
          .add("target_met", std::isfinite(q)
                                 ? (q <= kTargetRatio ? "true" : "false")
                                 : "null")
          .add("typed_us", jnums(typedUs))
          .add("contig_us", jnums(contigUs))
          .str("definition",
               "one sample = the slower rank's MPI_Wtime from a barrier to "
               "the end of MPI_Waitall of 6 MPI_Irecv into the ghost faces "
               "and 6 MPI_Isend of the faces (typed: MPI_Type_create_subarray "
               "on the block; contig: contiguous device buffers of the same "
               "bytes, MPI_BYTE); typed and contig alternate, medians");
      JObj root;
      root.str("benchmark", opt.program)
          .i64("schema_version", 1)
          .str("mode", "halo")
          .boolean("complete", true)
          .add("environment", opt.environment.text(1))
          .add("options", JObj()
                              .i64("reps", opt.reps)
                              .i64("warmup_exchanges", opt.warmup)
                              .text(1))
          .add("halo", h.text(1));
      writeFileAtomically(opt.jsonPath, root.text(0) + "\n");
      std::printf("wrote %s\n", opt.jsonPath.c_str());
    }
  }
  release();
  return passed ? 0 : 1;
}

} // namespace

std::string HaloShape::text() const {
  return std::to_string(z) + "x" + std::to_string(y) + "x" + std::to_string(x);
}

bool checkHaloShape(const HaloShape &s, std::string &error) {
  if (s.z < 1 || s.y < 1 || s.x < 1) {
    error = "every dimension of the block must be at least 1";
    return false;
  }
  double padded = double(s.z + 2) * double(s.y + 2) * double(s.x + 2);
  if (padded > 2147483648.0) {
    error = "the block with its ghost layer (" + std::to_string(s.z + 2) +
            " x " + std::to_string(s.y + 2) + " x " + std::to_string(s.x + 2) +
            ") must hold at most 2^31 doubles";
    return false;
  }
  return true;
}

bool haloShapeOfCube(int64_t n, HaloShape &shape, std::string &error) {
  if (n < 2 || n % 2) {
    error = "the cube's edge must be even and at least 2 (each rank owns "
            "half of it), not " +
            std::to_string(n);
    return false;
  }
  HaloShape s;
  s.z = n / 2;
  s.y = s.x = n;
  if (!checkHaloShape(s, error))
    return false;
  shape = s;
  return true;
}

bool parseHaloShape(const std::string &text, HaloShape &shape,
                    std::string &error) {
  int64_t v[3];
  const char *p = text.c_str();
  for (int k = 0; k < 3; ++k) {
    char *end = nullptr;
    if (*p < '0' || *p > '9') {
      error = "expected ZxYxX (three positive integers), not '" + text + "'";
      return false;
    }
    long long n = std::strtoll(p, &end, 10);
    if (end == p || n <= 0 || (k < 2 && *end != 'x') ||
        (k == 2 && *end != '\0')) {
      error = "expected ZxYxX (three positive integers), not '" + text + "'";
      return false;
    }
    v[k] = n;
    p = end + (k < 2 ? 1 : 0);
  }
  HaloShape s;
  s.z = v[0], s.y = v[1], s.x = v[2];
  if (!checkHaloShape(s, error))
    return false;
  shape = s;
  return true;
}

int runHaloExchange(const HaloOptions &options, const DeviceMemory &memory,
                    int rank) {
  Exchange e(options, memory, rank);
  return e.run();
}

} // namespace bench
