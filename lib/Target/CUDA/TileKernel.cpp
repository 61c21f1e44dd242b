//===- TileKernel.cpp - Shared-memory tile kernels for transposes ---------===//
//
// One block per tile, grid-stride over the tiles of the call, so the
// barriers are reached by every thread of a block or by none. Elements of
// 1-8 bytes move several to a 16-byte access on each phase's global side
// where they are whole, in range and aligned (on an H200: floats 0.45 →
// 0.77 of memcpy, doubles 0.77 → 0.91). Each phase
// checks every element against [lo, hi): a call may start or end inside a
// tile, even inside an element; its bytes outside the range are neither
// read (unpack: the packed side holds only [lo, hi)) nor written.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/TileKernel.h"

#include "ddtc/Target/CUDA/CUDAEmitter.h"

#include <cassert>

namespace ddtc {

TileGeometry getTileGeometry(const KernelPlan &plan) {
  assert(plan.tileDim >= 0 && plan.layout.segments.size() == 1 &&
         "a tile plan has one segment");
  const Segment &seg = plan.layout.segments.front();
  TileGeometry g;
  g.elem = seg.runs.front().length;
  g.a = plan.tileDim;
  g.b = static_cast<int>(seg.dims.size()) - 1;
  g.packedStride.assign(seg.dims.size(), 0);
  int64_t inner = g.elem;
  for (size_t d = seg.dims.size(); d-- > 0;) {
    g.packedStride[d] = inner;
    inner *= seg.dims[d].count;
  }
  g.tilesA = (seg.dims[g.a].count + kTileElems - 1) / kTileElems;
  g.tilesB = (seg.dims[g.b].count + kTileElems - 1) / kTileElems;
  int64_t mid = 1;
  for (int d = 0; d < g.a; ++d)
    g.outerPoints *= seg.dims[d].count;
  for (int d = g.a + 1; d < g.b; ++d)
    mid *= seg.dims[d].count;
  g.rowBytes = seg.dims[g.a].count * g.packedStride[g.a];
  g.tilesPerBand = mid * g.tilesB;
  return g;
}

int64_t getTileBand(const TileGeometry &g, int64_t size, int64_t q) {
  const int64_t inst = q / size, r = q % size;
  const int64_t a = r % g.rowBytes / g.packedStride[g.a];
  return (inst * g.outerPoints + r / g.rowBytes) * g.tilesA + a / kTileElems;
}

void emitTileKernel(const KernelPlan &plan, const std::string &p, bool pack,
                    std::ostream &os) {
  const TileGeometry g = getTileGeometry(plan);
  const int64_t w = plan.width, nw = g.elem / w;
  const std::string T = cudaAccessType(w), L = std::to_string(g.elem),
                    NW = std::to_string(nw), W = std::to_string(w);
  const std::string A = std::to_string(g.a), B = std::to_string(g.b);
  const std::string E = std::to_string(kTileElems);
  printKernelHead(os, p, pack);
  os << "    const " << p << "_params p) {\n"
     << "  // tile[i][j]: element j of row i, in " << nw << " access(es) of "
     << w << " bytes;\n"
     << "  // one element of padding per row keeps a column's elements in "
        "different banks.\n"
     << "  __shared__ " << T << " tile[" << E << "][" << (kTileElems + 1) * nw
     << "];\n"
     << "  const int x = (int)(threadIdx.x & 31);\n"
     << "  const int rows = (int)(blockDim.x >> 5);\n"
     << "  (void)x; (void)rows; // the vector paths index by threadIdx.x\n"
     << "  // Whole elements move as " << W
     << "-byte accesses when both buffers allow it.\n"
     << "  const bool aligned = (((unsigned long long)origin |\n"
     << "                         ((unsigned long long)packed - (unsigned "
        "long long)p.lo)) &\n"
     << "                        " << (w - 1) << ") == 0;\n"
     << "  for (long long t = p.chunk_begin + blockIdx.x; t < p.chunk_end; t "
        "+= gridDim.x) {\n"
     << "    // The tile's origin offset and packed position at (a0, b0).\n"
     << "    long long r = t, q;\n"
     << "    long long ob = p.base, pb = 0;\n"
     << "    q = ddtc_div(r, p.tiles_b_mul, p.tiles_b_shift);\n"
     << "    const long long b0 = (r - q * p.tiles_b) * " << E << ";\n"
     << "    r = q;\n";
  auto step = [&](int d) {
    const std::string D = std::to_string(d);
    os << "    q = ddtc_div(r, p.n" << D << "_mul, p.n" << D << "_shift);\n"
       << "    ob += (r - q * p.n" << D << ") * p.st" << D << ";\n"
       << "    pb += (r - q * p.n" << D << ") * p.pk" << D << ";\n"
       << "    r = q;\n";
  };
  for (int d = g.b - 1; d > g.a; --d)
    step(d);
  os << "    q = ddtc_div(r, p.tiles_a_mul, p.tiles_a_shift);\n"
     << "    const long long a0 = (r - q * p.tiles_a) * " << E << ";\n"
     << "    r = q;\n";
  for (int d = g.a - 1; d >= 0; --d)
    step(d);
  os << "    ob += r * p.extent; // r is the instance\n"
     << "    pb += r * p.size;\n";
  // Element (a, b): origin offset ob + a * stA + b * stB, packed position
  // pb + a * pkA + b * L. Phase 1 reads the source with lanes along the
  // side consecutive in it, phase 2 writes the destination likewise.
  auto elem = [&](const char *a, const char *b, bool clip) {
    os << "      const long long a = a0 + " << a << ", b = b0 + " << b << ";\n"
       << "      if (a >= p.n" << A << " || b >= p.n" << B << ")\n"
       << "        continue;\n"
       << "      const long long k = pb + a * p.pk" << A << " + b * " << L
       << ";\n"
       << "      if (k + " << L << " <= p.lo || k >= p.hi)\n"
       << "        continue; // outside [lo, hi)\n";
    if (!clip)
      return;
    os << "      const bool whole = aligned && k >= p.lo && k + " << L
       << " <= p.hi;\n"
       << "      const long long k0 = ddtc_max(k, p.lo), k1 = ddtc_min(k + "
       << L << ", p.hi);\n";
  };
  // Elements of 1, 2, 4 or 8 bytes moved with accesses of their size: a
  // thread takes V of them, consecutive on the side along which the phase's
  // global accesses run, and moves them as one aligned 16-byte access where
  // all V are inside the counts and the range and the address is aligned
  // (each on its own otherwise). Each warp then reads or writes 512
  // consecutive bytes per access instead of 32 elements.
  const bool vec = g.elem == w && g.elem < 16 && 16 % g.elem == 0;
  const int64_t V = vec ? 16 / g.elem : 1;
  const std::string VS = std::to_string(V), G = std::to_string(32 / V);
  auto open = [&]() {
    if (!vec) {
      os << "    #pragma unroll 1\n"
         << "    for (int y = (int)(threadIdx.x >> 5); y < " << E
         << "; y += rows) {\n";
      return;
    }
    os << "    #pragma unroll 1\n"
       << "    for (int i = (int)threadIdx.x; i < " << E << " * " << G
       << "; i += (int)blockDim.x) {\n"
       << "      const int y = i / " << G << ", xg = (i % " << G << ") * " << VS
       << ";\n";
  };
  // The group of V elements from (a, b) along a (alongA) or b, as one
  // 16-byte access at `ptr` when `whole`: defines a, b, k and opens the
  // if; the caller closes it with a `continue`.
  auto group = [&](bool alongA, bool inRange, const std::string &ptr) {
    const std::string step = alongA ? "p.pk" + A : L;
    os << "      {\n"
       << "        const long long a = a0 + " << (alongA ? "xg" : "y")
       << ", b = b0 + " << (alongA ? "y" : "xg") << ";\n"
       << "        const long long k = pb + a * p.pk" << A << " + b * " << L
       << ";\n"
       << "        const unsigned long long at = (unsigned long long)(" << ptr
       << ");\n"
       << "        if ("
       << (alongA ? "a + " + VS + " <= p.n" + A + " && b < p.n" + B +
                        " && p.st" + A + " == " + L
                  : "a < p.n" + A + " && b + " + VS + " <= p.n" + B)
       << " &&\n"
       << "            "
       << (inRange ? "k >= p.lo && k + (" + VS + " - 1) * " + step + " + " + L +
                         " <= p.hi"
                   : "k + " + L + " > p.lo && k + (" + VS + " - 1) * " + step +
                         " < p.hi")
       << " && (at & 15) == 0) {\n";
  };
  auto closeGroup = [&]() {
    os << "          continue;\n"
       << "        }\n"
       << "      }\n"
       << "      #pragma unroll 1\n"
       << "      for (int x = xg; x < xg + " << VS << "; ++x) {\n";
  };
  // Element v of the group, bytes v * L of r, to or from the shared
  // element e (as an integer of its size: uint2 for 8 bytes is a struct).
  const std::string I = g.elem == 8 ? "unsigned long long" : T;
  auto spread = [&](const std::string &r, const std::string &e, int64_t v) {
    const int64_t at = v * g.elem;
    return "*(" + I + " *)&" + e + " = (" + I + ")(" + r +
           (at < 8 ? ".x >> " + std::to_string(8 * at)
                   : ".y >> " + std::to_string(8 * (at - 8))) +
           ");\n";
  };
  auto join = [&](const std::string &r, const std::string &e, int64_t v) {
    const int64_t at = v * g.elem;
    return r + (at < 8 ? ".x" : ".y") + " |= (unsigned long long)*(const " + I +
           " *)&" + e + " << " + std::to_string(8 * (at < 8 ? at : at - 8)) +
           ";\n";
  };
  // A whole group read from global memory into row y of the shared array,
  // or written from its column y.
  auto readGroup = [&](bool alongA, bool inRange, const std::string &ptr) {
    group(alongA, inRange, ptr);
    os << "          const ulonglong2 vv = *(const ulonglong2 *)at;\n";
    for (int64_t v = 0; v < V; ++v)
      os << "          "
         << spread("vv", "tile[y][xg + " + std::to_string(v) + "]", v);
    closeGroup();
  };
  auto writeGroup = [&](bool alongA, const std::string &ptr) {
    group(alongA, true, ptr);
    os << "          ulonglong2 vv;\n"
       << "          vv.x = 0;\n"
       << "          vv.y = 0;\n";
    for (int64_t v = 0; v < V; ++v)
      os << "          "
         << join("vv", "tile[xg + " + std::to_string(v) + "][y]", v);
    os << "          *(ulonglong2 *)at = vv;\n";
    closeGroup();
  };
  const std::string originAt =
      "origin + (ob + a * p.st" + A + " + b * p.st" + B + ")";
  // Phase 1.
  open();
  if (pack) {
    // Lanes along a; tile[b - b0][a - a0].
    if (vec)
      readGroup(true, false, originAt);
    elem("x", "y", false);
    os << "      const unsigned char *s = origin + (ob + a * p.st" << A
       << " + b * p.st" << B << ");\n"
       << "      " << T << " *e = &tile[y][x * " << NW << "];\n"
       << "      if (aligned) {\n"
       << "        #pragma unroll\n"
       << "        for (int v = 0; v < " << NW << "; ++v)\n"
       << "          e[v] = ((const " << T << " *)s)[v];\n"
       << "      } else {\n"
       << "        // The whole element: its bytes are the type's.\n"
       << "        #pragma unroll 1\n"
       << "        for (int c = 0; c < " << L << "; ++c)\n"
       << "          ((unsigned char *)e)[c] = s[c];\n"
       << "      }\n";
  } else {
    // Lanes along b; tile[a - a0][b - b0]. Only packed bytes of [lo, hi).
    if (vec)
      readGroup(false, true, "packed + (k - p.lo)");
    elem("y", "x", true);
    os << "      " << T << " *e = &tile[y][x * " << NW << "];\n"
       << "      if (whole) {\n"
       << "        #pragma unroll\n"
       << "        for (int v = 0; v < " << NW << "; ++v)\n"
       << "          e[v] = ((const " << T << " *)(packed + (k - p.lo)))[v];\n"
       << "      } else {\n"
       << "        #pragma unroll 1\n"
       << "        for (long long c = k0; c < k1; ++c)\n"
       << "          ((unsigned char *)e)[c - k] = packed[c - p.lo];\n"
       << "      }\n";
  }
  if (vec)
    os << "      }\n";
  os << "    }\n"
     << "    __syncthreads();\n";
  // Phase 2.
  open();
  if (pack) {
    // Lanes along b: consecutive packed elements.
    if (vec)
      writeGroup(false, "packed + (k - p.lo)");
    elem("y", "x", true);
    os << "      const " << T << " *e = &tile[x][y * " << NW << "];\n"
       << "      if (whole) {\n"
       << "        #pragma unroll\n"
       << "        for (int v = 0; v < " << NW << "; ++v)\n"
       << "          ((" << T << " *)(packed + (k - p.lo)))[v] = e[v];\n"
       << "      } else {\n"
       << "        #pragma unroll 1\n"
       << "        for (long long c = k0; c < k1; ++c)\n"
       << "          packed[c - p.lo] = ((const unsigned char *)e)[c - k];\n"
       << "      }\n";
  } else {
    // Lanes along a: elements close in the origin.
    if (vec)
      writeGroup(true, originAt);
    elem("x", "y", true);
    os << "      unsigned char *d = origin + (ob + a * p.st" << A
       << " + b * p.st" << B << ");\n"
       << "      const " << T << " *e = &tile[x][y * " << NW << "];\n"
       << "      if (whole) {\n"
       << "        #pragma unroll\n"
       << "        for (int v = 0; v < " << NW << "; ++v)\n"
       << "          ((" << T << " *)d)[v] = e[v];\n"
       << "      } else {\n"
       << "        #pragma unroll 1\n"
       << "        for (long long c = k0; c < k1; ++c)\n"
       << "          d[c - k] = ((const unsigned char *)e)[c - k];\n"
       << "      }\n";
  }
  if (vec)
    os << "      }\n";
  os << "    }\n"
     << "    // The next tile reuses the shared array.\n"
     << "    __syncthreads();\n"
     << "  }\n"
     << "}\n\n";
}

} // namespace ddtc
