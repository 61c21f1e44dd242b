//===- RecordPeriodKernel.cpp - Records packed by a fixed period ----------===//
//
// Point q of the packed stream starts at origin offset base + q * stride, so
// period j (points jK to jK + K - 1) reads source bytes [base + j * span,
// + span) and writes packed bytes [j * packed, + packed), and packed byte y
// of a period always comes from the same byte of its span. A block step
// takes `rows` consecutive periods (a tile): its threads load the tile's
// source bytes, coalesced (16 bytes a load where aligned, else a word),
// into one shared row of words per period; thread t then writes period t's
// packed words into its output row, each an expression of constant words
// of its source row; and the block stores the tile's packed words,
// coalesced (16 bytes a store where aligned). The rows have an odd number
// of words, so the threads of a warp reading word c of their rows hit 32
// different banks. Source words outside the call's instances' bytes are
// read as 0; packed words cut by lo, hi or a misaligned buffer are stored
// byte by byte. The unpack runs the steps backwards: packed words staged,
// span words assembled (gap bytes 0), and the run bytes alone stored, a
// word a thread (16 bytes a thread was 37-60% slower on an H200).
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/RecordPeriodKernel.h"

#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/RecordWindowKernel.h"
#include "ddtc/Target/CUDA/WindowKernel.h"

#include <cassert>
#include <numeric>
#include <sstream>
#include <vector>

namespace ddtc {

namespace {

int64_t oddWords(int64_t bytes) { return (bytes / 4) | 1; }

/// Where packed byte y of a period comes from: its byte of the span.
int64_t sourceByte(const Segment &seg, int64_t stride, int64_t y) {
  const int64_t pb = seg.pointBytes();
  const int64_t k = y / pb;
  int64_t z = y - k * pb;
  for (const Run &r : seg.runs) {
    if (z < r.length)
      return k * stride + (r.offset - seg.runs.front().offset) + z;
    z -= r.length;
  }
  assert(false && "a packed byte outside the point's runs");
  return 0;
}

/// The n bytes at byte `from` of the word row `row`, placed at byte `at` of
/// a word: shifted out of the one or two words holding them.
std::string shiftedBytes(const std::string &row, int64_t from, int n, int at) {
  const int64_t word = from / 4, shift = 8 * (from % 4);
  const std::string w = row + "[" + std::to_string(word) + "]";
  std::string v;
  if (shift == 0 && n == 4)
    v = w;
  else if (shift / 8 + n <= 4)
    v = "(" + w + " >> " + std::to_string(shift) + ")";
  else
    v = "(unsigned)((((unsigned long long)" + row + "[" +
        std::to_string(word + 1) + "] << 32) | " + w + ") >> " +
        std::to_string(shift) + ")";
  if (n < 4)
    v = "(" + v + " & 0x" +
        (n == 1   ? std::string("ffu")
         : n == 2 ? "ffffu"
                  : "ffffffu") +
        ")";
  if (at > 0)
    v = "(" + v + " << " + std::to_string(8 * at) + ")";
  return v;
}

/// A word whose byte i is byte from[i] of the word row `row` (from[i] < 0:
/// 0): its bytes in groups that are consecutive in the row, each shifted
/// out of the one or two words holding it.
std::string wordOfBytes(const std::string &row, const int64_t (&from)[4]) {
  std::string e;
  for (int i = 0; i < 4;) {
    if (from[i] < 0) {
      ++i;
      continue;
    }
    int n = 1;
    while (i + n < 4 && from[i + n] == from[i] + n)
      ++n;
    e += (e.empty() ? "" : " | ") + shiftedBytes(row, from[i], n, i);
    i += n;
  }
  return e;
}

/// The expression of packed word w of a period from the source row `r`.
std::string packedWord(const Segment &seg, int64_t stride, int64_t w) {
  int64_t src[4];
  for (int i = 0; i < 4; ++i)
    src[i] = sourceByte(seg, stride, 4 * w + i);
  return wordOfBytes("r", src);
}

/// The packed byte of a period that source byte s of its span holds, or -1
/// in a gap.
int64_t packedByte(const Segment &seg, int64_t stride, int64_t s) {
  const int64_t k = s / stride;
  const int64_t o = s - k * stride;
  int64_t prefix = 0;
  for (const Run &r : seg.runs) {
    const int64_t at = r.offset - seg.runs.front().offset;
    if (o >= at && o < at + r.length)
      return k * seg.pointBytes() + prefix + (o - at);
    prefix += r.length;
  }
  return -1;
}

/// The expression of word c of a period's span from the packed row `q`
/// (its gap bytes 0), or "" when the word holds no run byte.
std::string spanWord(const Segment &seg, int64_t stride, int64_t c) {
  int64_t y[4];
  for (int i = 0; i < 4; ++i)
    y[i] = packedByte(seg, stride, 4 * c + i);
  return wordOfBytes("q", y);
}

/// The statements that gather the bytes b_ of the 16 at s for which
/// `part` holds into v[u] (others 0), indented by `pad`.
std::string vectorOfBytes(const std::string &pad, const std::string &part) {
  return pad + "#pragma unroll 1\n" + pad +
         "for (int b_ = 0; b_ < 16; ++b_)\n" + pad + "  if (" + part + ") {\n" +
         pad + "    const unsigned long long c = s[b_];\n" + pad +
         "    if (b_ < 8)\n" + pad + "      v[u].x |= c << (8 * b_);\n" + pad +
         "    else\n" + pad + "      v[u].y |= c << (8 * (b_ - 8));\n" + pad +
         "  }\n";
}

/// Opens `if (<aligned>) {` and prints a staging loop over the tile's
/// 16-byte vectors, four loads in flight a thread: vector i is read at
/// `at` (16-byte aligned when `aligned` holds) when `whole` holds, else
/// byte by byte (the bytes b_ for which `part` holds, others 0); its
/// words go to word w % `rowWords` of row w / `rowWords` of `rows`, a row
/// `rowStride` words apart. The tile holds `g.rows` x `rowWords` words.
void emitVectorStaging(const PeriodGeometry &g, const std::string &at,
                       const std::string &whole, const std::string &part,
                       const std::string &aligned, const std::string &i,
                       const std::string &rows, int64_t rowWords,
                       int64_t rowStride, std::ostream &os) {
  const std::string N = std::to_string(g.rows * rowWords / 4),
                    RW = std::to_string(rowWords),
                    RS = std::to_string(rowStride);
  os << "    if (" << aligned << ") {\n"
     << "    for (int i0 = threadIdx.x; i0 < " << N
     << "; i0 += 4 * blockDim.x) {\n"
     << "      ulonglong2 v[4];\n"
     << "      #pragma unroll\n"
     << "      for (int u = 0; u < 4; ++u) {\n"
     << "        const int " << i << " = i0 + u * (int)blockDim.x;\n"
     << "        v[u].x = 0;\n"
     << "        v[u].y = 0;\n"
     << "        if (" << i << " >= " << N << ")\n"
     << "          continue;\n"
     << "        const unsigned char *s = " << at << ";\n"
     << "        if (" << whole << ") {\n"
     << "          v[u] = *(const ulonglong2 *)s;\n"
     << "        } else {\n"
     << vectorOfBytes("          ", part) << "        }\n"
     << "      }\n"
     << "      #pragma unroll\n"
     << "      for (int u = 0; u < 4; ++u) {\n"
     << "        const int " << i << " = i0 + u * (int)blockDim.x;\n"
     << "        if (" << i << " >= " << N << ")\n"
     << "          continue;\n"
     << "        #pragma unroll\n"
     << "        for (int e = 0; e < 4; ++e) {\n"
     << "          const int w = 4 * " << i << " + e;\n"
     << "          " << rows << "[(w / " << RW << ") * " << RS << " + w % "
     << RW << "] =\n"
     << "              (unsigned)((e < 2 ? v[u].x : v[u].y) >> (32 * (e & "
        "1)));\n"
     << "        }\n"
     << "      }\n"
     << "    }\n";
}

} // namespace

PeriodGeometry getPeriodGeometry(const KernelPlan &plan) {
  const Segment &seg = plan.layout.segments.front();
  PeriodGeometry g;
  g.stride = getWindowRunStride(plan);
  const int64_t pb = seg.pointBytes();
  if (g.stride <= 0 || pb <= 0)
    return g;
  // The fewest points whose packed bytes and span are whole words.
  g.points = std::lcm(4 / std::gcd<int64_t>(pb, 4),
                      4 / std::gcd<int64_t>(g.stride, 4));
  g.span = g.points * g.stride;
  g.packed = g.points * pb;
  g.inRow = oddWords(g.span);
  g.outRow = oddWords(g.packed);
  const int64_t fit = kPeriodSharedBytes / (4 * (g.inRow + g.outRow));
  g.rows = std::min<int64_t>(plan.threadsPerBlock, fit) / 32 * 32;
  return g;
}

namespace {

/// A single run a point that the gather kernels move slowly: shorter than
/// a 16-byte chunk, so most chunks straddle two points, and not one or two
/// aligned 4-byte words, which they gather as words. Side by side on an
/// H200 (pack / unpack against the traffic limit; bench/results/
/// 2026-11-25-NVIDIA-H200-period-rows): 12 bytes of every 16 0.48 / 0.82
/// -> 0.71-0.74 / 0.92-0.95, 12 of every 20 0.57 / 0.50 -> 0.81 / 0.98,
/// 9 of every 16 0.55 / 0.35 -> 0.78 / 0.65, a byte of every 64 0.67 /
/// 0.27 -> 0.92 / 0.31; but in an experiment runs of one or two words (4
/// of 8: 0.98 -> 0.53) and of 16 bytes or more (16 of 36: 0.98 -> 0.68;
/// the particles' 41 of 48 unpacked 0.63 -> 0.44) lost.
bool isShortSingleRunPlan(const KernelPlan &plan) {
  if (plan.family != KernelFamily::Strided || plan.tileDim >= 0 ||
      plan.width >= 16 || plan.layout.segments.size() != 1)
    return false;
  const Segment &seg = plan.layout.segments.front();
  if (seg.runs.size() != 1 || seg.dims.empty())
    return false;
  const int64_t len = seg.runs.front().length;
  const bool words = plan.width >= 4 && !plan.needsBytePath && len <= 8;
  return len < 16 && !words && getWindowRunStride(plan) > len;
}

} // namespace

bool periodRestartsRows(const KernelPlan &plan) {
  const Segment &seg = plan.layout.segments.front();
  if (seg.dims.empty())
    return false;
  int64_t rowBytes = 0;
  return seg.dims.size() > 1 ||
         __builtin_mul_overflow(seg.dims[0].count, seg.dims[0].stride,
                                &rowBytes) ||
         rowBytes != plan.layout.extent;
}

bool isRecordPeriodPlan(const KernelPlan &plan) {
  // Records, and single runs shorter than a chunk (isShortSingleRunPlan).
  if (!isRecordWindowPlan(plan) && !isShortSingleRunPlan(plan))
    return false;
  const Segment &seg = plan.layout.segments.front();
  if (seg.dims.size() > 2)
    return false;
  const PeriodGeometry g = getPeriodGeometry(plan);
  if (g.points <= 0 || g.span > kPeriodMaxSpan || g.packed > kPeriodMaxPacked ||
      g.rows < 32)
    return false;
  // Where rows restart (instances a vector's trailing gap apart, or rows
  // of an outer dimension), a period stays in one row.
  return !periodRestartsRows(plan) || seg.dims.back().count % g.points == 0;
}

std::string periodShapeSuffix(const KernelPlan &plan) {
  const Segment &seg = plan.layout.segments.front();
  std::ostringstream key;
  key << ".p" << getWindowRunStride(plan)
      << (periodRestartsRows(plan) ? "r" : "") << ":";
  for (size_t j = 0; j < seg.runs.size(); ++j)
    key << (j ? "," : "") << seg.runs[j].offset - seg.runs.front().offset << "+"
        << seg.runs[j].length;
  return key.str();
}

namespace {

/// Prints a period kernel's opening up to the first statement of a tile
/// step: its head, `comment`, the tile's two row arrays, `preamble` (the
/// direction's own tables and buffer alignments), the loop over tiles, and
/// the tile's packed bytes [a, b) of [lo, hi) from t0.
void emitPeriodKernelOpening(const KernelPlan &plan, const PeriodGeometry &g,
                             const std::string &p, bool pack,
                             const std::string &comment,
                             const std::string &preamble, std::ostream &os) {
  printKernelHead(os, p, pack,
                  "__launch_bounds__(" + std::to_string(plan.threadsPerBlock) +
                      ") ");
  os << "    const " << p << "_params p) {\n"
     << comment << "  __shared__ unsigned int in_s[" << g.rows << " * "
     << g.inRow << "];\n"
     << "  __shared__ unsigned int out_s[" << g.rows << " * " << g.outRow
     << "];\n"
     << preamble << "  const long long tb = " << g.rows * g.packed
     << "; // packed bytes of a tile\n"
     << "  for (long long tile = p.lo / tb + blockIdx.x; tile * tb < p.hi;\n"
     << "       tile += gridDim.x) {\n"
     << "    const long long t0 = tile * tb;\n"
     << "    const long long a = ddtc_max(t0, p.lo), b = ddtc_min(t0 + tb, "
        "p.hi);\n";
}

/// A period's figures as the kernels print them.
struct PeriodFigures {
  explicit PeriodFigures(const PeriodGeometry &g)
      : R(std::to_string(g.rows)), IN(std::to_string(g.inRow)),
        OUT(std::to_string(g.outRow)), SW(std::to_string(g.span / 4)),
        PW(std::to_string(g.packed / 4)), SPAN(std::to_string(g.span)) {}
  std::string R;    ///< periods a block step
  std::string IN;   ///< shared words of a staged span's row
  std::string OUT;  ///< shared words of a period's packed row
  std::string SW;   ///< words of a span
  std::string PW;   ///< packed words of a period
  std::string SPAN; ///< bytes of a span
};

/// Prints `inst<x>` and `ro<x>` of row `row` of a two-dimensional nest
/// (rows of the outer dimension, p.s0_n0 an instance): its instance and
/// its origin offset.
void emitOuterRowOrigin(const std::string &row, const std::string &x,
                        const std::string &pad, std::ostream &os) {
  os << pad << "const long long inst" << x << " = ddtc_div(" << row
     << ", p.s0_n0_mul, p.s0_n0_shift);\n"
     << pad << "const long long ro" << x << " = p.s0_base + inst" << x
     << " * p.extent +\n"
     << pad << "    (" << row << " - inst" << x << " * p.s0_n0) * p.s0_st0;\n";
}

/// Prints `prow<x>`, `col<x>` and `ro<x>` of point `pt`: its row (over
/// all instances), its place in the row and the row's origin offset.
void emitRowOfPoint(const KernelPlan &plan, const std::string &pt,
                    const std::string &x, const std::string &pad,
                    std::ostream &os) {
  const Segment &seg = plan.layout.segments.front();
  const std::string n = "p.s0_n" + std::to_string(seg.dims.size() - 1);
  os << pad << "const long long prow" << x << " = ddtc_div(" << pt << ", " << n
     << "_mul, " << n << "_shift);\n"
     << pad << "const long long col" << x << " = " << pt << " - prow" << x
     << " * " << n << ";\n";
  if (seg.dims.size() == 1)
    os << pad << "const long long ro" << x << " = p.s0_base + prow" << x
       << " * p.extent;\n";
  else
    emitOuterRowOrigin("prow" + x, x, pad, os);
}

/// Opens `if (<the tile's periods lie in one row>) {` (rows that restart,
/// periodRestartsRows), with `ws` (`cv`: const) at the tile's first span.
void emitOneRowOpening(const KernelPlan &plan, const PeriodGeometry &g,
                       const char *cv, std::ostream &os) {
  const Segment &seg = plan.layout.segments.front();
  const std::string n = "p.s0_n" + std::to_string(seg.dims.size() - 1);
  const std::string tilePoints = std::to_string(g.rows * g.points);
  os << "    // The tile's first point; most tiles lie in its row.\n";
  emitRowOfPoint(plan, "tile * " + tilePoints, "0", "    ", os);
  os << "    if (col0 + " << tilePoints << " <= " << n << ") {\n"
     << "    " << cv << "unsigned char *ws = origin + ro0 + col0 * " << g.stride
     << "ll;\n";
}

/// Where a tile's source lies in two rows (emitTwoRowsOpening): the
/// address of the tile's word i.
std::string twoRowsWordAt(const PeriodGeometry &g) {
  const std::string SW = std::to_string(g.span / 4);
  return "(i < t1 * " + SW +
         " ? ws + 4 * (long long)i : ws2 + 4 * (long long)(i - t1 * " + SW +
         "))";
}

/// After emitOneRowOpening's block: opens `} else if (<rows at least a tile
/// long>) {`, where a tile crosses one row end: its periods [0, t1) end
/// row prow0 at `ws`, the others start the next row at `ws2` (`cv`:
/// const), and `two4` says both are word-aligned. (Staging such tiles 16
/// bytes a load as well, a second vector loop beside the one-row path's,
/// packed rows of 300 and 1000 points 8-30% faster but cost a single
/// row's pack 11-12% on an H200, though it never takes the branch; one
/// loop for both cases cost the one-row path 14-19%.)
void emitTwoRowsOpening(const KernelPlan &plan, const PeriodGeometry &g,
                        const char *cv, std::ostream &os) {
  const Segment &seg = plan.layout.segments.front();
  const std::string n = "p.s0_n" + std::to_string(seg.dims.size() - 1);
  os << "    } else if (" << g.rows * g.points << " <= " << n << ") {\n"
     << "    // Rows at least a tile long: the end of this row and the start "
        "of the\n"
     << "    // next, their loads issued together.\n"
     << "    const int t1 = (int)((" << n << " - col0) / " << g.points
     << ");\n";
  if (seg.dims.size() == 1)
    os << "    const long long ro1 = ro0 + p.extent;\n";
  else
    emitOuterRowOrigin("prow0 + 1", "1", "    ", os);
  os << "    " << cv << "unsigned char *ws = origin + ro0 + col0 * " << g.stride
     << "ll;\n"
     << "    " << cv << "unsigned char *ws2 = origin + ro1;\n"
     << "    const bool two4 = ((((unsigned long long)ws) | ((unsigned long "
        "long)ws2)) & 3) == 0;\n";
}

/// Opens the loop over a tile's periods a row piece at a time (rows that
/// restart, periodRestartsRows): periods [t, t + len) of the tile are
/// consecutive in one row, and their spans start at `ws` (`cv`: const).
void emitRowPieceOpening(const KernelPlan &plan, const PeriodGeometry &g,
                         const char *cv, std::ostream &os) {
  const Segment &seg = plan.layout.segments.front();
  const std::string R = std::to_string(g.rows), K = std::to_string(g.points);
  const std::string n = "p.s0_n" + std::to_string(seg.dims.size() - 1);
  os << "    // A row piece at a time: a row's periods have consecutive "
        "spans.\n"
     << "    for (int t = 0; t < " << R << ";) {\n"
     << "      const long long pt = (tile * " << R << " + t) * " << K
     << "; // its first point\n";
  emitRowOfPoint(plan, "pt", "", "      ", os);
  os << "      const int len = (int)ddtc_min(" << R << " - t, (" << n
     << " - col) / " << K << ");\n"
     << "      " << cv << "unsigned char *ws = origin + ro + col * " << g.stride
     << "ll;\n";
}

/// A staging loop of the pack, eight loads in flight a thread: source
/// word `k` (< `count`) at `at` (ws + 4k where empty), whole where `a4`
/// holds and it lies in [src_lo, src_hi), else its bytes there (others 0),
/// goes to shared word `w` (`k` itself where `w` is empty) of the rows of
/// in_s; `pad` indents.
void emitWordStaging(const PeriodGeometry &g, const std::string &pad,
                     const std::string &k, const std::string &count,
                     const std::string &a4, const std::string &w,
                     std::ostream &os, const std::string &at = "") {
  const std::string SW = std::to_string(g.span / 4),
                    IN = std::to_string(g.inRow);
  const std::string to = w.empty() ? k : "w";
  os << pad << "for (int " << k << "0 = threadIdx.x; " << k << "0 < " << count
     << "; " << k << "0 += 8 * blockDim.x) {\n"
     << pad << "  unsigned v[8];\n"
     << pad << "  #pragma unroll\n"
     << pad << "  for (int u = 0; u < 8; ++u) {\n"
     << pad << "    const int " << k << " = " << k
     << "0 + u * (int)blockDim.x;\n"
     << pad << "    const unsigned char *s = "
     << (at.empty() ? "ws + 4 * (long long)" + k : at) << ";\n"
     << pad << "    v[u] = 0;\n"
     << pad << "    if (" << k << " >= " << count << ")\n"
     << pad << "      continue;\n"
     << pad << "    if (" << a4 << " && s >= src_lo && s + 4 <= src_hi) {\n"
     << pad << "      v[u] = *(const unsigned *)s;\n"
     << pad << "    } else {\n"
     << pad << "      #pragma unroll 1\n"
     << pad << "      for (int b = 0; b < 4; ++b)\n"
     << pad << "        if (s + b >= src_lo && s + b < src_hi)\n"
     << pad << "          v[u] |= (unsigned)s[b] << (8 * b);\n"
     << pad << "    }\n"
     << pad << "  }\n"
     << pad << "  #pragma unroll\n"
     << pad << "  for (int u = 0; u < 8; ++u) {\n"
     << pad << "    const int " << k << " = " << k
     << "0 + u * (int)blockDim.x;\n";
  if (w.empty()) {
    os << pad << "    if (" << k << " < " << count << ")\n";
  } else {
    os << pad << "    if (" << k << " >= " << count << ")\n"
       << pad << "      continue;\n"
       << pad << "    const int w = " << w << ";\n";
  }
  os << pad << (w.empty() ? "      " : "    ") << "in_s[(" << to << " / " << SW
     << ") * " << IN << " + " << to << " % " << SW << "] = v[u];\n"
     << pad << "  }\n"
     << pad << "}\n";
}

/// The pack's staging of a tile whose spans are one piece from `ws`:
/// 16-byte loads where `a16` holds (ws 16-byte aligned), else words where
/// `a4` holds, else bytes; bytes outside [src_lo, src_hi) read as 0.
void emitTileStaging(const PeriodGeometry &g, const std::string &a16,
                     const std::string &a4, std::ostream &os) {
  const int64_t sw = g.span / 4;
  const std::string R = std::to_string(g.rows), SW = std::to_string(sw),
                    IN = std::to_string(g.inRow);
  os << "    // Word i of the tile's source: word i % " << SW << " of row i / "
     << SW << ".\n";
  emitVectorStaging(
      g, "(ws + 16 * (long long)i)", "s >= src_lo && s + 16 <= src_hi",
      "s + b_ >= src_lo && s + b_ < src_hi", a16, "i", "in_s", sw, g.inRow, os);
  os << "    } else {\n"
     << "    // Eight loads in flight a thread.\n";
  emitWordStaging(g, "    ", "i", R + " * " + SW, a4, "", os);
  os << "    }\n";
}

/// The pack's staging of one row piece (emitRowPieceOpening): words
/// [t * SW, (t + len) * SW) of the tile from ws, 16 bytes a load where the
/// piece is 16-byte aligned, else a word (or its bytes); bytes outside the
/// call's source read as 0.
void emitRowPieceStaging(const KernelPlan &plan, const PeriodGeometry &g,
                         std::ostream &os) {
  const int64_t sw = g.span / 4;
  const std::string SW = std::to_string(sw), IN = std::to_string(g.inRow);
  auto store = [&](const std::string &pad, const std::string &k,
                   const std::string &v) {
    return pad + "const int w = t * " + SW + " + " + k + ";\n" + pad +
           "in_s[(w / " + SW + ") * " + IN + " + w % " + SW + "] =\n" + pad +
           "    " + v + ";\n";
  };
  // Loads may pass the piece's end (the gap after a row's last point, the
  // next row): only [src_lo, src_hi) bounds them, and the words past the
  // piece are dropped.
  os << "      const int nw = len * " << SW << ";\n"
     << "      if ((((unsigned long long)ws) & 15) == 0) {\n"
     << "      for (int k0 = threadIdx.x; 4 * k0 < nw; k0 += 4 * "
        "blockDim.x) {\n"
     << "        ulonglong2 v[4];\n"
     << "        #pragma unroll\n"
     << "        for (int u = 0; u < 4; ++u) {\n"
     << "          const int k = k0 + u * (int)blockDim.x;\n"
     << "          const unsigned char *s = ws + 16 * (long long)k;\n"
     << "          v[u].x = 0;\n"
     << "          v[u].y = 0;\n"
     << "          if (4 * k >= nw)\n"
     << "            continue;\n"
     << "          if (s >= src_lo && s + 16 <= src_hi) {\n"
     << "            v[u] = *(const ulonglong2 *)s;\n"
     << "            continue;\n"
     << "          }\n"
     << vectorOfBytes("          ", "s + b_ >= src_lo && s + b_ < src_hi")
     << "        }\n"
     << "        #pragma unroll\n"
     << "        for (int u = 0; u < 4; ++u) {\n"
     << "          const int k = k0 + u * (int)blockDim.x;\n"
     << "          #pragma unroll\n"
     << "          for (int e = 0; e < 4; ++e) {\n"
     << "            if (4 * k + e >= nw)\n"
     << "              continue;\n"
     << store("            ", "4 * k + e",
              "(unsigned)((e < 2 ? v[u].x : v[u].y) >> (32 * (e & 1)))")
     << "          }\n"
     << "        }\n"
     << "      }\n"
     << "      } else {\n";
  os << "      const bool a4 = (((unsigned long long)ws) & 3) == 0;\n";
  emitWordStaging(g, "      ", "k", "nw", "a4", "t * " + SW + " + k", os);
  os << "      }\n"
     << "      t += len;\n"
     << "    }\n";
}

void printPeriodPack(const KernelPlan &plan, const std::string &p,
                     std::ostream &os) {
  assert(isRecordPeriodPlan(plan) && "a record period plan");
  const Segment &seg = plan.layout.segments.front();
  const PeriodGeometry g = getPeriodGeometry(plan);
  const PeriodFigures f(g);
  const std::string &R = f.R, &IN = f.IN, &OUT = f.OUT, &PW = f.PW,
                    &SPAN = f.SPAN;
  os << "// Periods of " << g.points << " point(s) " << g.stride
     << " bytes apart: " << g.span << " source bytes, " << g.packed
     << " packed bytes each; " << R << " a block step.\n";
  emitPeriodKernelOpening(
      plan, g, p, true,
      "  // A tile's source spans, a row a period, and their packed words "
      "(rows of\n"
      "  // an odd number of words: a warp's threads reading one word of "
      "their\n"
      "  // rows hit 32 banks).\n",
      "  const unsigned char *src_lo = origin + p.src_lo;\n"
      "  const unsigned char *src_hi = origin + p.src_hi;\n"
      "  const bool src4 = (((unsigned long long)origin + p.s0_base) & 3) == "
      "0;\n"
      "  const bool src16 = (((unsigned long long)origin + p.s0_base) & 15) "
      "== 0;\n"
      "  const bool dst4 = (((unsigned long long)packed - p.lo) & 3) == 0;\n"
      "  const bool dst16 = (((unsigned long long)packed - p.lo) & 15) == "
      "0;\n"
      "  // Not every staging path reads each of these.\n"
      "  (void)src4; (void)src16; (void)dst4; (void)dst16;\n",
      os);
  os << "    __syncthreads(); // the previous tile's rows are stored\n";
  if (periodRestartsRows(plan)) {
    emitOneRowOpening(plan, g, "const ", os);
    os << "    const bool row16 = (((unsigned long long)ws) & 15) == 0;\n"
       << "    const bool row4 = (((unsigned long long)ws) & 3) == 0;\n";
    emitTileStaging(g, "row16", "row4", os);
    emitTwoRowsOpening(plan, g, "const ", os);
    os << "    // Eight loads in flight a thread.\n";
    emitWordStaging(g, "    ", "i", R + " * " + f.SW, "two4", "", os,
                    twoRowsWordAt(g));
    os << "    } else {\n";
    emitRowPieceOpening(plan, g, "const ", os);
    emitRowPieceStaging(plan, g, os);
    os << "    }\n";
  } else {
    os << "    const unsigned char *ws = origin + p.s0_base + tile * (" << R
       << "ll * " << SPAN << ");\n";
    emitTileStaging(g, "src16", "src4", os);
  }
  os << "    __syncthreads();\n"
     << "    // Period t of the tile (a thread each with the launch's "
     << plan.threadsPerBlock << " threads).\n"
     << "    for (int t = threadIdx.x; t < " << R << "; t += blockDim.x) {\n"
     << "      const unsigned *r = in_s + t * " << IN << ";\n"
     << "      unsigned *o = out_s + t * " << OUT << ";\n";
  for (int64_t w = 0; w < g.packed / 4; ++w)
    os << "      o[" << w << "] = " << packedWord(seg, g.stride, w) << ";\n";
  os << "    }\n"
     << "    __syncthreads();\n"
     << "    // The tile's packed bytes [a, b), 16 bytes a thread: one store "
        "where\n"
     << "    // the buffer allows, else a word or a byte at a time.\n"
     << "    for (long long j = ((a - t0) >> 4) + threadIdx.x; t0 + 16 * j < "
        "b;\n"
     << "         j += blockDim.x) {\n"
     << "      const long long x = t0 + 16 * j;\n"
     << "      unsigned v[4];\n"
     << "      #pragma unroll\n"
     << "      for (int e = 0; e < 4; ++e) {\n"
     << "        const long long w = 4 * j + e;\n"
     << "        v[e] = out_s[(w / " << PW << ") * " << OUT << " + w % " << PW
     << "];\n"
     << "      }\n"
     << "      if (dst16 && x >= a && x + 16 <= b) {\n"
     << "        ulonglong2 q;\n"
     << "        q.x = v[0] | (unsigned long long)v[1] << 32;\n"
     << "        q.y = v[2] | (unsigned long long)v[3] << 32;\n"
     << "        *(ulonglong2 *)(packed + (x - p.lo)) = q;\n"
     << "        continue;\n"
     << "      }\n"
     << "      #pragma unroll 1\n"
     << "      for (int e = 0; e < 4; ++e) {\n"
     << "        const long long xe = x + 4 * e;\n"
     << "        if (dst4 && xe >= a && xe + 4 <= b) {\n"
     << "          *(unsigned *)(packed + (xe - p.lo)) = v[e];\n"
     << "          continue;\n"
     << "        }\n"
     << "        for (int k = 0; k < 4; ++k)\n"
     << "          if (xe + k >= a && xe + k < b)\n"
     << "            packed[xe + k - p.lo] = (unsigned char)(v[e] >> (8 * "
        "k));\n"
     << "      }\n"
     << "    }\n"
     << "  }\n"
     << "}\n\n";
}

void printPeriodUnpack(const KernelPlan &plan, const std::string &p,
                       std::ostream &os) {
  assert(isRecordPeriodPlan(plan) && "a record period plan");
  const Segment &seg = plan.layout.segments.front();
  const PeriodGeometry g = getPeriodGeometry(plan);
  const int64_t sw = g.span / 4;
  const PeriodFigures f(g);
  const std::string &R = f.R, &IN = f.IN, &OUT = f.OUT, &SW = f.SW, &PW = f.PW,
                    &SPAN = f.SPAN;
  // Each span byte's packed byte in its period (-1: a gap), and each span
  // word's run bytes, as a mask of its four.
  os << "__constant__ short " << p << "_span_packed[" << 4 * sw << "] = {";
  for (int64_t b = 0; b < 4 * sw; ++b)
    os << (b ? (b % 16 ? ", " : ",\n    ") : "")
       << packedByte(seg, g.stride, b);
  os << "};\n";
  const std::string T = p + "_span_packed";
  emitPeriodKernelOpening(
      plan, g, p, false,
      "  // As the pack's rows: a tile's packed words, a row a period, and "
      "the\n"
      "  // periods' source spans, whose run bytes alone are stored.\n",
      "  __shared__ short pos_s[" + std::to_string(4 * sw) + "];\n" +
          "  __shared__ unsigned char mask_s[" + SW + "];\n" +
          "  for (int b = threadIdx.x; b < " + std::to_string(4 * sw) +
          "; b += blockDim.x)\n" + "    pos_s[b] = " + T + "[b];\n" +
          "  for (int c = threadIdx.x; c < " + SW + "; c += blockDim.x) {\n" +
          "    unsigned m = 0;\n" + "    for (int b = 0; b < 4; ++b)\n" +
          "      m |= (" + T + "[4 * c + b] >= 0 ? 1u : 0u) << b;\n" +
          "    mask_s[c] = (unsigned char)m;\n" + "  }\n" +
          "  const bool dst4 = (((unsigned long long)origin + p.s0_base) & 3) "
          "== 0;\n"
          "  const bool src4 = (((unsigned long long)packed - p.lo) & 3) == "
          "0;\n"
          "  const bool src16 = (((unsigned long long)packed - p.lo) & 15) == "
          "0;\n"
          "  // Not every staging path reads each of these.\n"
          "  (void)dst4; (void)src4; (void)src16;\n",
      os);
  os << "    __syncthreads(); // the previous tile's spans are stored\n"
     << "    // The tile's packed words of [a, b).\n";
  emitVectorStaging(g, "(packed + (t0 + 16 * i - p.lo))",
                    "t0 + 16 * i >= a && t0 + 16 * i + 16 <= b",
                    "t0 + 16 * i + b_ >= a && t0 + 16 * i + b_ < b", "src16",
                    "i", "out_s", g.packed / 4, g.outRow, os);
  os << "    } else {\n"
     << "    // Eight loads in flight a thread.\n"
     << "    for (long long w0 = ((a - t0) >> 2) + threadIdx.x; t0 + 4 * w0 < "
        "b;\n"
     << "         w0 += 8 * blockDim.x) {\n"
     << "      unsigned v[8];\n"
     << "      #pragma unroll\n"
     << "      for (int u = 0; u < 8; ++u) {\n"
     << "        const long long x = t0 + 4 * (w0 + u * (long "
        "long)blockDim.x);\n"
     << "        v[u] = 0;\n"
     << "        if (x >= b)\n"
     << "          continue;\n"
     << "        if (src4 && x >= a && x + 4 <= b) {\n"
     << "          v[u] = *(const unsigned *)(packed + (x - p.lo));\n"
     << "        } else {\n"
     << "          #pragma unroll 1\n"
     << "          for (int k = 0; k < 4; ++k)\n"
     << "            if (x + k >= a && x + k < b)\n"
     << "              v[u] |= (unsigned)packed[x + k - p.lo] << (8 * k);\n"
     << "        }\n"
     << "      }\n"
     << "      #pragma unroll\n"
     << "      for (int u = 0; u < 8; ++u) {\n"
     << "        const long long w = w0 + u * (long long)blockDim.x;\n"
     << "        if (t0 + 4 * w < b)\n"
     << "          out_s[(w / " << PW << ") * " << OUT << " + w % " << PW
     << "] = v[u];\n"
     << "      }\n"
     << "    }\n"
     << "    }\n"
     << "    __syncthreads();\n"
     << "    for (int t = threadIdx.x; t < " << R << "; t += blockDim.x) {\n"
     << "      const unsigned *q = out_s + t * " << OUT << ";\n"
     << "      unsigned *r = in_s + t * " << IN << ";\n";
  for (int64_t c = 0; c < sw; ++c) {
    const std::string e = spanWord(seg, g.stride, c);
    if (!e.empty())
      os << "      r[" << c << "] = " << e << ";\n";
  }
  os << "    }\n"
     << "    __syncthreads();\n"
     << "    // The run bytes of the tile's spans, a word a thread, coalesced; "
        "in a\n"
     << "    // tile that [lo, hi) cuts, only those of its packed bytes.\n"
     << "    const bool whole = a == t0 && b == t0 + tb;\n";
  // Word i of the tile (k of its row piece) to d.
  // Its destination at `at`, whole words stored as one where `aligned`.
  auto store = [&](const std::string &at, const std::string &aligned) {
    return "      const int row = i / " + SW + ", c = i % " + SW + ";\n" +
           "      const unsigned m = mask_s[c];\n" + "      if (m == 0)\n" +
           "        continue;\n" + "      const unsigned v = in_s[row * " + IN +
           " + c];\n" + "      unsigned char *d = " + at + ";\n" +
           "      if (whole && m == 15 && " + aligned + ") {\n" +
           "        *(unsigned *)d = v;\n" + "        continue;\n" +
           "      }\n" +
           // In a whole tile every run byte is in [lo, hi): the mask alone
           // says which bytes to store (no packed position, no bounds).
           "      if (whole) {\n" + "        #pragma unroll\n" +
           "        for (int k = 0; k < 4; ++k)\n" +
           "          if ((m >> k) & 1)\n" +
           "            d[k] = (unsigned char)(v >> (8 * k));\n" +
           "        continue;\n" + "      }\n" +
           "      const long long y0 = t0 + (long long)row * " +
           std::to_string(g.packed) + ";\n" + "      #pragma unroll\n" +
           "      for (int k = 0; k < 4; ++k) {\n" +
           "        const long long y = y0 + pos_s[4 * c + k];\n" +
           "        if (((m >> k) & 1) && y >= a && y < b)\n" +
           "          d[k] = (unsigned char)(v >> (8 * k));\n" + "      }\n";
  };
  const std::string inRow = "ws + 4 * (long long)k";
  auto wholeTile = [&](const std::string &at, const std::string &aligned) {
    return "    for (int i = threadIdx.x; i < " + R + " * " + SW +
           "; i += blockDim.x) {\n" + "      const int k = i;\n" + "      (void)k;\n" +
           store(at, aligned) + "    }\n";
  };
  if (periodRestartsRows(plan)) {
    emitOneRowOpening(plan, g, "", os);
    os << "    const bool dst4 = (((unsigned long long)ws) & 3) == 0;\n"
       << wholeTile(inRow, "dst4");
    // The same stores, word i of the tile at its place in either row.
    emitTwoRowsOpening(plan, g, "", os);
    os << wholeTile(twoRowsWordAt(g), "two4") << "    } else {\n";
    emitRowPieceOpening(plan, g, "", os);
    os << "      const bool dst4 = (((unsigned long long)ws) & 3) == 0;\n"
       << "      for (int k = threadIdx.x; k < len * " << SW
       << "; k += blockDim.x) {\n"
       << "      const int i = t * " << SW << " + k;\n"
       << store(inRow, "dst4") << "      }\n"
       << "      t += len;\n"
       << "    }\n"
       << "    }\n";
  } else {
    os << "    unsigned char *ws = origin + p.s0_base + tile * (" << R
       << "ll * " << SPAN << ");\n"
       << wholeTile(inRow, "dst4");
  }
  os << "  }\n"
     << "}\n\n";
}

/// The kernel text with the blocks whose lines start at their opening
/// line's indentation (the printers' branches around shared loops)
/// indented two more spaces. Blocks open at a line's last `{` and close at
/// a line's first `}`.
std::string indentBranches(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  auto indentOf = [](const std::string &l) { return l.find_first_not_of(' '); };
  std::vector<bool> fixed; // per open block: indented here
  size_t extra = 0;
  std::string out;
  for (size_t k = 0; k < lines.size(); ++k) {
    const std::string &l = lines[k];
    const size_t ind = indentOf(l);
    const bool closes = ind != std::string::npos && l[ind] == '}';
    if (closes && !fixed.empty()) {
      extra -= fixed.back() ? 2 : 0;
      fixed.pop_back();
    }
    out += (l.empty() ? "" : std::string(extra, ' ')) + l + "\n";
    if (!l.empty() && l.back() == '{') {
      const bool flat = k + 1 < lines.size() && indentOf(lines[k + 1]) == ind &&
                        lines[k + 1][ind] != '}';
      fixed.push_back(flat);
      extra += flat ? 2 : 0;
    }
  }
  return out;
}

} // namespace

void emitRecordPeriodPack(const KernelPlan &plan, const std::string &p,
                          std::ostream &os) {
  std::ostringstream text;
  printPeriodPack(plan, p, text);
  os << indentBranches(text.str());
}

void emitRecordPeriodUnpack(const KernelPlan &plan, const std::string &p,
                            std::ostream &os) {
  std::ostringstream text;
  printPeriodUnpack(plan, p, text);
  os << indentBranches(text.str());
}

} // namespace ddtc
