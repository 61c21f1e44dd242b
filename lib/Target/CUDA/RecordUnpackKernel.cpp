//===- RecordUnpackKernel.cpp - Destination-aligned unpack of records -----===//
//
// Slot s is vector k = s % slots of point r = s / slots: origin offsets
// [v, v + 16), v = o - ((origin + o) & 15) + 16 k, with o the origin offset
// of the point's first byte (a locate of its first packed byte). Run j of
// the point holds origin offsets [o + ro_j, o + ro_j + rl_j) and packed
// bytes [q + rp_j, q + rp_j + rl_j), q = r * pointBytes; its piece in the
// vector is the intersection, clipped to the call's [lo, hi). The pieces'
// packed bytes are consecutive, at most 16 of them: one load of the 16
// packed bytes from the first piece's, then one store sequence per piece
// (ddtc_scatter), so a warp's stores cover consecutive vectors.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/RecordUnpackKernel.h"

#include "ddtc/Target/CUDA/CUDAEmitter.h"

#include <cassert>

namespace ddtc {

bool hasOrderedRecord(const KernelPlan &plan) {
  if (plan.layout.segments.size() != 1)
    return false;
  const Segment &seg = plan.layout.segments.front();
  if (seg.runs.size() < 2)
    return false;
  for (size_t j = 1; j < seg.runs.size(); ++j)
    if (seg.runs[j - 1].offset + seg.runs[j - 1].length > seg.runs[j].offset)
      return false;
  return true;
}

int64_t getPointSpan(const KernelPlan &plan) {
  const Segment &seg = plan.layout.segments.front();
  return seg.runs.back().offset + seg.runs.back().length -
         seg.runs.front().offset;
}

void emitRecordAlignedUnpack(const KernelPlan &plan, const std::string &p,
                             std::ostream &os) {
  assert(hasOrderedRecord(plan) && "a record of ordered runs");
  const Segment &seg = plan.layout.segments.front();
  const size_t runs = seg.runs.size();
  // The point's packed bytes: a segment without dimensions is one point an
  // instance.
  const std::string pb = seg.dims.empty() ? "p.size" : "p.s0_pb";
  const std::string R = std::to_string(runs);
  printKernelHead(os, p, false);
  os << "    const " << p << "_params p) {\n"
     << "  if (p.lo >= p.hi)\n"
     << "    return;\n"
     << "  const long long step = (long long)gridDim.x * blockDim.x;\n"
     << "  // Points [r0, r1) hold the packed bytes [lo, hi); point r gets "
        "the slots\n"
     << "  // [r * run_slots, (r + 1) * run_slots), one aligned destination "
        "vector each.\n"
     << "  const long long r0 = ddtc_div(p.lo, " << pb << "_mul, " << pb
     << "_shift);\n"
     << "  const long long r1 = ddtc_div(p.hi - 1, " << pb << "_mul, " << pb
     << "_shift) + 1;\n"
     << "  const long long slot_end = r1 * p.run_slots;\n"
     << "  const unsigned char *packed_end = packed + (p.hi - p.lo);\n"
     << "  for (long long s = r0 * p.run_slots + (long long)blockIdx.x * "
        "blockDim.x +\n"
     << "                     threadIdx.x;\n"
     << "       s < slot_end; s += step) {\n"
     << "    const long long r = ddtc_div(s, p.run_slots_mul, "
        "p.run_slots_shift);\n"
     << "    const long long k = s - r * p.run_slots;\n"
     << "    const long long q = r * " << pb << ";\n"
     << "    long long left, span, rlen, st;\n"
     << "    const long long o = " << p << "_locate(p, q, left, span, rlen, "
        "st);\n"
     << "    const long long v =\n"
     << "        o - (long long)(((unsigned long long)origin + o) & 15) + 16 "
        "* k;\n"
     << "    // Piece j: packed bytes [a[j], a[j] + n[j]) at vector byte "
        "f[j].\n"
     << "    long long a[" << R << "];\n"
     << "    unsigned f[" << R << "], n[" << R << "];\n"
     << "    long long first = -1, last = 0;\n";
  for (size_t j = 0; j < runs; ++j) {
    const std::string J = std::to_string(j);
    const std::string ro = j == 0 ? "0" : "p.s0_ro" + J;
    const std::string rp = j == 0 ? "0" : "p.s0_rp" + J;
    os << "    {\n"
       << "      const long long x0 = ddtc_max(o + " << ro << ", v);\n"
       << "      const long long x1 = ddtc_min(o + " << ro << " + p.s0_rl" << J
       << ", v + 16);\n"
       << "      const long long b0 = ddtc_max(q + " << rp << " + (x0 - o - "
       << ro << "), p.lo);\n"
       << "      const long long b1 = ddtc_min(q + " << rp << " + (x1 - o - "
       << ro << "), p.hi);\n"
       << "      n[" << J << "] = 0;\n"
       << "      if (b0 < b1) {\n"
       << "        a[" << J << "] = b0;\n"
       << "        n[" << J << "] = (unsigned)(b1 - b0);\n"
       << "        f[" << J << "] = (unsigned)(b0 - (q + " << rp << ") + o + "
       << ro << " - v);\n"
       << "        first = first < 0 ? b0 : first;\n"
       << "        last = b1;\n"
       << "      }\n"
       << "    }\n";
  }
  os << "    if (first < 0)\n"
     << "      continue;\n"
     << "    // The pieces' packed bytes [first, last), at most 16: one load.\n"
     << "    const unsigned char *src = packed + (first - p.lo);\n"
     << "    ulonglong2 t;\n"
     << "    if (first + 16 <= p.hi) {\n"
     << "      t = ddtc_load16(src, packed, packed_end);\n"
     << "    } else {\n"
     << "      t.x = 0;\n"
     << "      t.y = 0;\n"
     << "      ddtc_gather(t, 0, src, (unsigned)(last - first), packed, "
        "packed_end);\n"
     << "    }\n"
     << "    #pragma unroll\n"
     << "    for (int j = 0; j < " << R << "; ++j)\n"
     << "      if (n[j] > 0)\n"
     << "        ddtc_scatter(origin + v + f[j], t, (unsigned)(a[j] - first), "
        "n[j]);\n"
     << "  }\n"
     << "}\n\n";
}

} // namespace ddtc
