//===- RecordWindowKernel.cpp - Window pack for records of several runs ---===//
//
// A block step: locate the block's first packed byte A, find where its point
// starts and how many packed bytes are left in its row, and, when the
// block's bytes [A, B) stay in that row, load their source span into the
// shared window. Then each thread assembles its chunks piece by piece from
// the window: packed byte a is byte z = zA + (a - A) of the points from A's
// on, so point k = z / pointBytes of them and byte z - k * pointBytes of
// that point, whose run the chain of the point's runs finds; its window
// byte is w0 + k * stride + (the run's offset + its byte) - offA.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/RecordWindowKernel.h"

#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/RecordUnpackKernel.h"
#include "ddtc/Target/CUDA/WindowKernel.h"

#include <algorithm>
#include <cassert>

namespace ddtc {

namespace {

/// `<prefix>_run(p, z, b, len)`: the run of byte z of a point (0 <= z <
/// pointBytes): its origin offset from the point's first run is returned,
/// the byte's place in it is set in b and its length in len.
void emitRunSearch(const KernelPlan &plan, const std::string &p,
                   std::ostream &os) {
  const Segment &seg = plan.layout.segments.front();
  os << "__device__ __forceinline__ long long " << p << "_run(const " << p
     << "_params &p, long long z,\n"
     << "    long long &b, long long &len) {\n"
     << "  b = z;\n"
     << "  len = p.s0_rl0;\n";
  for (size_t j = seg.runs.size(); j-- > 1;) {
    const std::string J = std::to_string(j);
    os << "  if (z >= p.s0_rp" << J << ") {\n"
       << "    b = z - p.s0_rp" << J << ";\n"
       << "    len = p.s0_rl" << J << ";\n"
       << "    return p.s0_ro" << J << ";\n"
       << "  }\n";
  }
  os << "  return 0;\n}\n\n";
}

} // namespace

bool isRecordWindowPlan(const KernelPlan &plan) {
  if (plan.family != KernelFamily::Strided || plan.tileDim >= 0 ||
      plan.width >= 8 || plan.layout.segments.size() != 1)
    return false;
  const Segment &seg = plan.layout.segments.front();
  if (!hasOrderedRecord(plan) ||
      static_cast<int64_t>(seg.runs.size()) > kMaxPointRuns)
    return false;
  const int64_t pb = seg.pointBytes();
  const int64_t span = getPointSpan(plan);
  const int64_t stride = getWindowRunStride(plan);
  return span <= stride && stride <= 2 * pb &&
         getRecordWindowVectors(plan) <= kRecordWindowMaxVectors;
}

int64_t getRecordWindowVectors(const KernelPlan &plan) {
  const Segment &seg = plan.layout.segments.front();
  const int64_t t = int64_t(plan.threadsPerBlock) * kWindowChunks * 16;
  // A block's bytes touch at most t / pointBytes + 2 points; the window
  // starts up to 15 bytes before an aligned vector.
  const int64_t points = t / std::max<int64_t>(seg.pointBytes(), 1) + 2;
  return (points * getWindowRunStride(plan) + 15 + 15) / 16;
}

void emitRecordWindowPack(const KernelPlan &plan, const std::string &p,
                          std::ostream &os) {
  assert(isRecordWindowPlan(plan) && "a record window plan");
  const Segment &seg = plan.layout.segments.front();
  const size_t nd = seg.dims.size();
  const int64_t wv = getRecordWindowVectors(plan);
  const std::string K = std::to_string(kWindowChunks);
  // Point bytes, their divisor and the distance between points of a row.
  const std::string pb = nd == 0 ? "p.size" : "p.s0_pb";
  const std::string pbDiv = pb + "_mul, " + pb + "_shift";
  const std::string stride =
      nd == 0 ? "p.extent" : "p.s0_st" + std::to_string(nd - 1);
  emitRunSearch(plan, p, os);
  emitWindowBlockStart(os, p, wv);
  os << "    // A is byte zA of its point; rowLeft packed bytes from A on are "
        "its row's.\n"
     << "    const long long rA = A - ddtc_div(A, p.size_mul, p.size_shift) "
        "* p.size;\n";
  if (nd == 0) {
    os << "    const long long zA = rA;\n"
       << "    const long long rowLeft = B - A; // the instances are the row\n";
  } else {
    os << "    const long long ptA = ddtc_div(rA, " << pbDiv << ");\n"
       << "    const long long zA = rA - ptA * " << pb << ";\n";
    if (nd == 1) {
      os << "    const long long rowLeft = p.size - rA;\n";
    } else {
      const std::string n = "p.s0_n" + std::to_string(nd - 1);
      os << "    const long long inner = ptA - ddtc_div(ptA, " << n << "_mul, "
         << n << "_shift) * " << n << ";\n"
         << "    const long long rowLeft = (" << n << " - inner) * " << pb
         << " - zA;\n";
    }
  }
  os << "    bool windowed = rowLeft >= B - A;\n"
     << "    long long bA, lA;\n"
     << "    // A's offset from its point's first run.\n"
     << "    const long long offA = " << p << "_run(p, zA, bA, lA) + bA;\n"
     << "    const long long zB = zA + (B - 1 - A);\n"
     << "    const long long kB = ddtc_div(zB, " << pbDiv << ");\n"
     << "    long long bB, lB;\n"
     << "    const long long offB = " << p << "_run(p, zB - kB * " << pb
     << ", bB, lB) + bB;\n"
     << "    const unsigned char *r_lo = origin + oA;\n"
     << "    const unsigned char *r_hi =\n"
     << "        origin + (oA - offA) + kB * " << stride << " + offB + 1;\n";
  emitWindowFill(os, wv, plan.threadsPerBlock);
  os << "    __syncthreads();\n"
     << "    if (windowed) {\n"
     << "      // Window byte of A's source byte.\n"
     << "      const long long w0 = (long long)((unsigned long long)r_lo & "
        "15) + 16;\n"
     << "      #pragma unroll\n"
     << "      for (int c = 0; c < " << K << "; ++c) {\n"
     << "        const long long q0 = (g0 + threadIdx.x + c * bd) * 16 - pa;\n"
     << "        long long a = ddtc_max(q0, A);\n"
     << "        const long long b = ddtc_min(q0 + 16, B);\n"
     << "        if (a >= b)\n"
     << "          continue;\n"
     << "        const unsigned f0 = (unsigned)(a - q0);\n"
     << "        unsigned f = f0;\n"
     << "        ulonglong2 r;\n"
     << "        r.x = 0;\n"
     << "        r.y = 0;\n"
     << "        long long z = zA + (a - A);\n"
     << "        #pragma unroll 1\n"
     << "        for (;;) {\n"
     << "          // The piece of the chunk in one run: point k from A's, "
        "its run's byte bz.\n"
     << "          const long long k = ddtc_div(z, " << pbDiv << ");\n"
     << "          long long bz, lz;\n"
     << "          const long long ro = " << p << "_run(p, z - k * " << pb
     << ", bz, lz);\n"
     << "          const long long n = ddtc_min(lz - bz, b - a);\n"
     << "          const unsigned u =\n"
     << "              (unsigned)(w0 + k * " << stride
     << " + ro + bz - offA);\n"
     << "          r = ddtc_merge(r, ddtc_win16(win, u - f), f, (unsigned)n);\n"
     << "          f += (unsigned)n;\n"
     << "          a += n;\n"
     << "          z += n;\n"
     << "          if (a >= b)\n"
     << "            break;\n"
     << "        }\n"
     << "        ddtc_store_chunk(packed + (q0 - p.lo), r, f0, f);\n"
     << "      }\n"
     << "    } else {\n";
  emitWindowFallback(os, p);
  os << "    }\n";
  emitWindowBlockEnd(os);
}

} // namespace ddtc
