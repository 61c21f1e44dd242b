//===- UnitsChunkKernel.cpp - Work units of short runs, a chunk a thread --===//
//
// Block g of the grid-stride loop takes items [g * G, g * G + n) after
// first_item (G = kChunkUnitsGroup). Item i is unit i % units of instance
// i / units: packed bytes [at_i, at_i + length) of the stream, packed byte k
// of it at origin offset k + delta_i. The block writes at_i and delta_i of
// its items, and the end of the last, to shared memory; their packed bytes
// are consecutive (units cover an instance in packed order), so the group
// is one range [at_0, at_n) of the stream. Each item lists itself as the
// first item of the chunks starting inside it (first_s). The threads take
// the range's 16-byte chunks, aligned in the packed buffer, a block apart:
// a thread reads its chunk's first item there (past the listed chunks, a
// binary search in shared memory) and walks the items from it to the
// chunk's end. The unpack of units of whole aligned words under 32 bytes
// takes a word a thread the same way. The chunks at the two ends of a
// group store only their bytes; the neighbouring group stores the rest.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/UnitsChunkKernel.h"

#include "ddtc/Target/CUDA/CUDAEmitter.h"

#include <algorithm>
#include <cassert>

namespace ddtc {

bool unitsByChunks(const KernelPlan &plan) {
  if (plan.family != KernelFamily::Units || plan.units.empty())
    return false;
  return plan.layout.size <
         kChunkUnitsMaxMean * static_cast<int64_t>(plan.units.size());
}

int64_t getChunkUnitsGroup(const KernelPlan &plan) {
  const int64_t units = std::max<int64_t>(1, plan.units.size());
  const int64_t bytes = plan.threadsPerBlock * 16 * kChunkUnitsPerThread;
  int64_t group = kChunkUnitsGroup;
  // The group's units hold group x size / units bytes on average.
  while (group > 32 && group * plan.layout.size > bytes * units)
    group /= 2;
  return group;
}

namespace {

/// Statements at `ind` for one piece of a pack chunk: bytes [f, f + m) of r
/// from s, which lies inside the unit's origin bytes [slo, shi).
void emitPackPiece(int64_t w, const std::string &ind, std::ostream &os) {
  if (w == 4 || w == 8) {
    // Whole words at word-aligned places (every piece of a unit's wide
    // body): one load per word of the chunk, predicated, where ddtc_gather
    // would join aligned vectors with variable shifts.
    const char *T = cudaWordType(w);
    os << ind << "if (((f | m | (unsigned)(unsigned long long)s) & " << w - 1
       << ") == 0) {\n"
       << ind << "  const unsigned char *vec = s - f;\n"
       << ind << "  #pragma unroll\n"
       << ind << "  for (unsigned i = 0; i < 16; i += " << w << ")\n"
       << ind << "    if (i >= f && i < f + m)\n"
       << ind << "      ddtc_put(r, i, *(const " << T << " *)(vec + i));\n"
       << ind << "} else ";
  } else {
    os << ind;
  }
  os << "if (m == 16) {\n"
     << ind << "  r = ddtc_load16(s, slo, shi);\n"
     << ind << "} else {\n"
     << ind << "  ddtc_gather(r, f, s, m, slo, shi);\n"
     << ind << "}\n";
}

/// Statements at `ind` for one piece of an unpack chunk: bytes [f, f + m)
/// of r stored at d.
void emitUnpackPiece(int64_t w, const std::string &ind, std::ostream &os) {
  if (w >= 2 && w <= 8) {
    // Whole words at word-aligned places: one predicated store per word of
    // the chunk, where ddtc_scatter would take a sequence of narrow stores.
    const char *T = cudaWordType(w);
    os << ind << "if (((f | m | (unsigned)(unsigned long long)d) & " << w - 1
       << ") == 0) {\n"
       << ind << "  unsigned char *vec = d - f;\n"
       << ind << "  #pragma unroll\n"
       << ind << "  for (unsigned i = 0; i < 16; i += " << w << ")\n"
       << ind << "    if (i >= f && i < f + m)\n"
       << ind << "      *(" << T << " *)(vec + i) = (" << T
       << ")(i < 8 ? r.x >> (8 * i) : r.y >> (8 * (i - 8)));\n"
       << ind << "} else {\n"
       << ind << "  ddtc_scatter(d, r, f, m);\n"
       << ind << "}\n";
    return;
  }
  os << ind << "ddtc_scatter(d, r, f, m);\n";
}

/// Statements at `ind` that set k to the first item of the chunk holding
/// packed byte `at` (from first_s), or past the listed chunks to the last
/// item starting at or before c0 (binary search): an item at or before the
/// one holding c0, which the walks after it step forward from.
void emitFirstItem(const std::string &at, const std::string &ind,
                   std::ostream &os) {
  const std::string S = std::to_string(kChunkUnitsSlots);
  os << ind << "const long long j = (" << at << " - cb) >> 4;\n"
     << ind << "int k = 0, kh = n - 1;\n"
     << ind << "if (j < " << S << ")\n"
     << ind << "  k = kh = first_s[j];\n"
     << ind << "#pragma unroll 1\n"
     << ind << "while (k < kh) {\n"
     << ind << "  const int mid = (k + kh + 1) >> 1;\n"
     << ind << "  if (at_s[mid] <= c0)\n"
     << ind << "    k = mid;\n"
     << ind << "  else\n"
     << ind << "    kh = mid - 1;\n"
     << ind << "}\n";
}

/// The unpack's loop over the group's words of `w` bytes (4 or 8) for plans
/// whose units are whole aligned words (p.word_unpack): a thread a word,
/// one load and one store, consecutive threads on consecutive packed words;
/// a word cut by a, b or an item's end, or at a misaligned destination,
/// goes byte by byte.
void emitWordUnpack(int64_t w, std::ostream &os) {
  const std::string W = std::to_string(w);
  const char *T = cudaWordType(w);
  os << "    if (p.word_unpack) {\n"
     << "      for (long long wq = cb + " << W << " * (long long)threadIdx.x; "
        "wq < b;\n"
     << "           wq += " << W << " * (long long)blockDim.x) {\n"
     << "        const long long c0 = ddtc_max(wq, a), c1 = ddtc_min(wq + " << W
     << ", b);\n"
     << "        // The item holding c0: at or after its chunk's first item.\n";
  emitFirstItem("wq", "        ", os);
  os << "        #pragma unroll 1\n"
     << "        while (at_s[k + 1] <= c0)\n"
     << "          ++k;\n"
     << "        unsigned char *d = origin + (delta_s[k] + c0);\n"
     << "        if (c0 == wq && c1 == wq + " << W << " && at_s[k + 1] >= c1 &&\n"
     << "            ((unsigned long long)d & " << w - 1 << ") == 0) {\n"
     << "          *(" << T << " *)d = *(const " << T << " *)(pk + wq);\n"
     << "          continue;\n"
     << "        }\n"
     << "        #pragma unroll 1\n"
     << "        for (long long q = c0; q < c1; ++k) {\n"
     << "          const long long e = ddtc_min(at_s[k + 1], c1);\n"
     << "          #pragma unroll 1\n"
     << "          for (long long i = q; i < e; ++i)\n"
     << "            origin[delta_s[k] + i] = pk[i];\n"
     << "          q = ddtc_max(q, e);\n"
     << "        }\n"
     << "      }\n"
     << "      continue;\n"
     << "    }\n";
}

} // namespace

bool unitsWordUnpack(const KernelPlan &plan) {
  const int64_t w = plan.width;
  // Without a byte path every run starts at a multiple of the width in
  // every instance and is a multiple of it long (alignAccesses), so every
  // unit is a wide body at aligned packed and origin offsets: no need to
  // look at the table, which computeLaunch would do at every call.
  return unitsByChunks(plan) && (w == 4 || w == 8) && !plan.needsBytePath &&
         plan.layout.size % w == 0 && plan.layout.extent % w == 0 &&
         plan.layout.size <
             kWordUnpackMaxMean * static_cast<int64_t>(plan.units.size());
}

void emitUnitsChunkKernel(const KernelPlan &plan, const std::string &p,
                          bool pack, std::ostream &os) {
  assert(plan.family == KernelFamily::Units && "a units plan");
  const std::string G = std::to_string(kChunkUnitsGroup);
  const std::string S = std::to_string(kChunkUnitsSlots);
  printKernelHead(os, p, pack);
  os << "    const " << p << "_params p, const long long *__restrict__ units) "
     << "{\n"
     << "  // The packed start of each item of the group, and the end of the "
        "last;\n"
     << "  // origin offset minus packed position of each.\n"
     << "  __shared__ long long at_s[" << G << " + 1];\n"
     << "  __shared__ long long delta_s[" << G << "];\n"
     << "  // The item holding the first byte of each of the group's first "
     << S << " chunks.\n"
     << "  __shared__ unsigned short first_s[" << S << "];\n"
     << "  const long long step = (long long)gridDim.x * p.group;\n"
     << "  for (long long g = (long long)blockIdx.x * p.group; g < "
        "p.num_items;\n"
     << "       g += step) {\n"
     << "    const int n = (int)ddtc_min(p.group, p.num_items - g);\n"
     << "    __syncthreads(); // the previous group's readers are done\n"
     << "    for (int k = threadIdx.x; k < n; k += blockDim.x) {\n"
     << "      const long long item = p.first_item + g + k;\n"
     << "      const long long inst = ddtc_div(item, p.num_units_mul, "
        "p.num_units_shift);\n"
     << "      const long long *u = units + 4 * (item - inst * p.num_units);\n"
     << "      const long long at = inst * p.size + u[0];\n"
     << "      at_s[k] = at;\n"
     << "      delta_s[k] = inst * p.extent + u[1] - at;\n"
     << "      if (k == n - 1)\n"
     << "        at_s[n] = at + u[2];\n"
     << "    }\n"
     << "    __syncthreads();\n"
     << "    const long long a = ddtc_max(at_s[0], p.lo), b = ddtc_min(at_s[n], "
        "p.hi);\n";
  // Chunks are aligned in the packed buffer: the pack's destination, the
  // unpack's source (whose stores are scattered either way).
  if (pack)
    os << "    unsigned char *pk = packed - p.lo;\n";
  else
    os << "    const unsigned char *pk = packed - p.lo;\n";
  os << "    const long long pm = (long long)((unsigned long long)pk & 15);\n"
     << "    const long long cb = ((a + pm) & ~15ll) - pm; // chunk 0 starts here\n"
     << "    // Chunk j > 0 starts at cb + 16 j, in the item holding that byte; "
        "chunk 0's\n"
     << "    // first byte is a.\n"
     << "    for (int k = threadIdx.x; k < n; k += blockDim.x) {\n"
     << "      const long long s0 = ddtc_max(at_s[k], a), s1 = ddtc_min(at_s[k + 1], b);\n"
     << "      if (s0 >= s1)\n"
     << "        continue;\n"
     << "      if (s0 == a)\n"
     << "        first_s[0] = (unsigned short)k;\n"
     << "      const long long j1 = ddtc_min((s1 - cb + 15) >> 4, " << S << ");\n"
     << "      #pragma unroll 1\n"
     << "      for (long long j = ddtc_max((s0 - cb + 15) >> 4, 1); j < j1; ++j)\n"
     << "        first_s[j] = (unsigned short)k;\n"
     << "    }\n"
     << "    __syncthreads();\n";
  if (!pack && (plan.width == 4 || plan.width == 8))
    emitWordUnpack(plan.width, os);
  os << "    for (long long cq = cb + 16 * (long long)threadIdx.x;\n"
     << "         cq < b; cq += 16 * (long long)blockDim.x) {\n"
     << "      const long long c0 = ddtc_max(cq, a), c1 = ddtc_min(cq + 16, "
        "b);\n"
     << "      const bool whole = c0 == cq && c1 == cq + 16;\n"
     << "      ulonglong2 r;\n"
     << "      r.x = 0;\n"
     << "      r.y = 0;\n";
  if (!pack)
    os << "      if (whole)\n"
       << "        r = *(const ulonglong2 *)(pk + cq);\n"
       << "      else\n"
       << "        ddtc_gather(r, (unsigned)(c0 - cq), pk + c0, (unsigned)(c1 "
          "- c0),\n"
       << "                    packed, pk + p.hi);\n";
  os << "      // The item holding c0.\n";
  emitFirstItem("cq", "      ", os);
  os << "      #pragma unroll 1\n"
     << "      for (long long q = c0; q < c1; ++k) {\n"
     << "        const long long e = ddtc_min(at_s[k + 1], c1);\n"
     << "        if (e <= q)\n"
     << "          continue; // an empty item\n"
     << "        const unsigned f = (unsigned)(q - cq), m = (unsigned)(e - q);\n"
     << "        const long long delta = delta_s[k];\n";
  if (pack) {
    os << "        const unsigned char *s = origin + (delta + q);\n"
       << "        const unsigned char *slo = origin + (delta + at_s[k]);\n"
       << "        const unsigned char *shi = origin + (delta + at_s[k + 1]);\n";
    emitPackPiece(plan.width, "        ", os);
  } else {
    os << "        unsigned char *d = origin + (delta + q);\n";
    emitUnpackPiece(plan.width, "        ", os);
  }
  os << "        q = e;\n"
     << "      }\n";
  if (pack)
    os << "      if (whole)\n"
       << "        *(ulonglong2 *)(pk + cq) = r;\n"
       << "      else\n"
       << "        ddtc_scatter(pk + c0, r, (unsigned)(c0 - cq), (unsigned)(c1 "
          "- c0));\n";
  os << "    }\n"
     << "  }\n"
     << "}\n\n";
}

} // namespace ddtc
