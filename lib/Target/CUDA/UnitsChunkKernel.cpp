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
#include <cstdint>
#include <vector>

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

/// The unpack's loop over the group's words of `w` bytes for plans whose
/// units are whole aligned words: a thread a word, one load and one store.
/// In packed order (p.word_unpack, words of 4 or 8 bytes) consecutive
/// threads take consecutive packed words; with the table in destination
/// order (`dest`, also words of 16 bytes, which the chunk loop moves as
/// well in packed order) consecutive words in origin order, each read from
/// its item's packed place (src_s). A word cut by a, b or an item's end, or
/// at a misaligned address, goes byte by byte.
void emitWordUnpack(int64_t w, std::ostream &os) {
  const std::string W = std::to_string(w);
  const char *T = w == 16 ? "ulonglong2" : cudaWordType(w);
  os << (w == 16 ? "    if (dest) {\n" : "    if (p.word_unpack) {\n")
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
     << "        const unsigned char *s = pk + ((dest ? src_s[k] : 0) + wq);\n"
     << "        if (c0 == wq && c1 == wq + " << W << " && at_s[k + 1] >= c1 &&\n"
     << "            (((unsigned long long)d | (unsigned long long)s) & " << w - 1
     << ") == 0) {\n"
     << "          *(" << T << " *)d = *(const " << T << " *)s;\n"
     << "          continue;\n"
     << "        }\n"
     << "        #pragma unroll 1\n"
     << "        for (long long q = c0; q < c1; ++k) {\n"
     << "          const long long e = ddtc_min(at_s[k + 1], c1);\n"
     << "          const long long src = dest ? src_s[k] : 0;\n"
     << "          #pragma unroll 1\n"
     << "          for (long long i = q; i < e; ++i)\n"
     << "            origin[delta_s[k] + i] = pk[src + i];\n"
     << "          q = ddtc_max(q, e);\n"
     << "        }\n"
     << "      }\n"
     << "      continue;\n"
     << "    }\n";
}

/// Whether the units of a chunk plan are short whole words of its width (4
/// or more) at aligned packed and origin offsets.
bool unitsShortWholeWords(const KernelPlan &plan) {
  const int64_t w = plan.width;
  // Without a byte path every run starts at a multiple of the width in
  // every instance and is a multiple of it long (alignAccesses), so every
  // unit is a wide body at aligned packed and origin offsets: no need to
  // look at the table, which computeLaunch would do at every call.
  return unitsByChunks(plan) && w >= 4 && !plan.needsBytePath &&
         plan.layout.size % w == 0 && plan.layout.extent % w == 0 &&
         plan.layout.size <
             kWordUnpackMaxMean * static_cast<int64_t>(plan.units.size());
}

} // namespace

bool unitsWordUnpack(const KernelPlan &plan) {
  return (plan.width == 4 || plan.width == 8) && unitsShortWholeWords(plan);
}

namespace {

/// Units whose first origin byte is not where the previous unit's store
/// ended or in the sector after it: the stores that start a sector of
/// their own, in the order the table lists the units.
int64_t countScatteredStarts(const UnitTable &units) {
  int64_t n = 0;
  for (size_t i = 1; i < units.size(); ++i) {
    const int64_t end = units[i - 1].src + units[i - 1].length;
    n += units[i].src < end || units[i].src >= end + 32;
  }
  return n;
}

/// The indices of `units` by origin offset (stable): a radix sort of the
/// offsets above the least, 11 bits a pass, so that a commit or a plan read
/// from disk pays microseconds for a table of thousands of units, where a
/// comparison sort of 65536 took milliseconds.
std::vector<uint32_t> sortByOrigin(const UnitTable &units) {
  const size_t n = units.size();
  int64_t least = units[0].src, most = units[0].src;
  for (const WorkUnit &u : units) {
    least = std::min(least, u.src);
    most = std::max(most, u.src);
  }
  const uint64_t range = static_cast<uint64_t>(most) - static_cast<uint64_t>(least);
  std::vector<uint32_t> order(n), next(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = static_cast<uint32_t>(i);
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t(1) << kBits;
  std::vector<size_t> start(kBuckets);
  for (int shift = 0; shift < 64 && (range >> shift) != 0; shift += kBits) {
    auto digit = [&](uint32_t i) {
      return static_cast<size_t>(
          ((static_cast<uint64_t>(units[i].src) - static_cast<uint64_t>(least)) >>
           shift) &
          (kBuckets - 1));
    };
    std::fill(start.begin(), start.end(), 0);
    for (uint32_t i : order)
      ++start[digit(i)];
    size_t at = 0;
    for (size_t &b : start) {
      const size_t c = b;
      b = at;
      at += c;
    }
    for (uint32_t i : order)
      next[start[digit(i)]++] = i;
    order.swap(next);
  }
  return order;
}

} // namespace

bool orderUnpackUnits(KernelPlan &plan) {
  plan.unpackUnits.clear();
  if (!unitsShortWholeWords(plan))
    return false;
  const UnitTable &units = plan.units;
  // Units already in origin order keep it: no sort for the common case.
  bool sorted = true;
  for (size_t i = 1; i < units.size() && sorted; ++i)
    sorted = units[i - 1].src <= units[i].src;
  if (sorted)
    return false;
  const int64_t packedOrder = countScatteredStarts(units);
  // Not worth a second table unless a quarter of the stores scatter.
  if (packedOrder * 4 < static_cast<int64_t>(units.size()))
    return false;
  const std::vector<uint32_t> order = sortByOrigin(units);
  UnitTable byOrigin;
  byOrigin.reserve(units.size());
  int64_t at = 0;
  for (uint32_t i : order) {
    const WorkUnit &u = units[i];
    byOrigin.push_back({at, u.src, u.length, u.packed});
    at += u.length;
  }
  // Half the scattered stores at least, or the unpack keeps packed order.
  if (countScatteredStarts(byOrigin) * 2 > packedOrder)
    return false;
  plan.unpackUnits = std::move(byOrigin);
  return true;
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
     << "  __shared__ unsigned short first_s[" << S << "];\n";
  // Plans of 16-byte words unpack a word a thread only in destination order.
  const bool words = !pack && plan.width >= 4;
  if (words)
    os << "  // Calls of whole instances unpack by the table in destination "
          "order when\n"
       << "  // the plan has one (dest_order): it follows the units, its items' "
          "places\n"
       << "  // are in that order, and src_s holds each one's packed place "
          "minus it.\n"
       << "  __shared__ long long src_s[" << G << "];\n"
       << "  const bool dest = p.dest_order &&\n"
       << "      ddtc_div(p.lo, p.size_mul, p.size_shift) * p.size == p.lo &&\n"
       << "      ddtc_div(p.hi, p.size_mul, p.size_shift) * p.size == p.hi;\n"
       << "  const long long *table = dest ? units + 4 * p.num_units : units;\n";
  else
    os << "  const long long *table = units;\n";
  os << "  const long long step = (long long)gridDim.x * p.group;\n"
     << "  for (long long g = (long long)blockIdx.x * p.group; g < "
        "p.num_items;\n"
     << "       g += step) {\n"
     << "    const int n = (int)ddtc_min(p.group, p.num_items - g);\n"
     << "    __syncthreads(); // the previous group's readers are done\n"
     << "    for (int k = threadIdx.x; k < n; k += blockDim.x) {\n"
     << "      const long long item = p.first_item + g + k;\n"
     << "      const long long inst = ddtc_div(item, p.num_units_mul, "
        "p.num_units_shift);\n"
     << "      const long long *u = table + 4 * (item - inst * p.num_units);\n"
     << "      const long long at = inst * p.size + u[0];\n"
     << "      at_s[k] = at;\n"
     << "      delta_s[k] = inst * p.extent + u[1] - at;\n";
  if (words)
    os << "      if (dest)\n"
       << "        src_s[k] = inst * p.size + u[3] - at;\n";
  os
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
  if (words)
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
