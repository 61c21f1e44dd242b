//===- WindowKernel.cpp - Shared-memory window pack for records -----------===//
//
// Records of an odd size (a struct of 41 bytes every 48) left the Gather
// pack bound by integer work and by loads in flight: every thread located
// its chunk with 64-bit divisions and joined up to three unaligned pieces
// read from global memory. Here a block reads the records' side of its
// chunks as one window of aligned 16-byte vectors, the gaps between the
// runs included, each thread issuing its loads together, and the threads
// then locate their bytes in the window relative to the block's first
// byte. A block whose bytes leave one row of runs, or whose window would
// not fit, moves its chunks straight from global memory (run by run), so
// any layout of the shape is served.
//
// The same design for the unpack (a window of packed chunks, then the
// runs' aligned destination vectors stored with masks) was slower than the
// Gather and RunAligned unpack kernels on an H200 for every record tried
// but one (docs/Performance.md, "H200, 2026-11-24: the window pack for
// records"), so unpacking keeps those.
//===----------------------------------------------------------------------===//

#include "ddtc/Target/CUDA/WindowKernel.h"

#include "ddtc/Target/CUDA/CUDAEmitter.h"
#include "ddtc/Target/CUDA/RecordPeriodKernel.h"
#include "ddtc/Target/CUDA/RecordWindowKernel.h"

#include <cassert>

namespace ddtc {

bool isWindowPlan(const KernelPlan &plan) {
  if (plan.family != KernelFamily::Strided || plan.tileDim >= 0 ||
      plan.width >= 16 || plan.layout.segments.size() != 1)
    return false;
  if (isRecordPeriodPlan(plan))
    return true;
  const Segment &seg = plan.layout.segments.front();
  if (seg.runs.size() != 1)
    return isRecordWindowPlan(plan);
  const int64_t len = seg.runs.front().length;
  const int64_t gap = getWindowRunStride(plan) - len;
  // Runs of 8-byte words long enough for two gather chunks a thread
  // (stridedBatch) are packed faster by the Gather kernel: on an H200 runs
  // of 256 bytes every 264 went at 0.95 of memcpy against 0.85 through the
  // window, where 2-byte words (250 every 264) went at 0.37 against 0.71.
  if (plan.width >= 8 && len >= kBatchMinRun)
    return false;
  return len >= kWindowMinRun && len <= kWindowMaxRun && gap > 0 &&
         gap <= kWindowMaxGap && 2 * gap <= len;
}

int64_t getWindowRunStride(const KernelPlan &plan) {
  const Segment &seg = plan.layout.segments.front();
  return seg.dims.empty() ? plan.layout.extent : seg.dims.back().stride;
}

int64_t getWindowVectors(const KernelPlan &plan) {
  // A block's chunks cover T packed bytes; their runs' gaps add at most
  // T / 2 + kWindowMaxGap (gaps of at most half a run), and the window
  // starts up to 15 bytes before an aligned vector.
  const int64_t t = int64_t(plan.threadsPerBlock) * kWindowChunks * 16;
  return (t + t / 2 + kWindowMaxGap + 15 + 15) / 16;
}

namespace {

const char *kWindowHelpers = R"(#ifndef DDTC_WINDOW_HELPERS
#define DDTC_WINDOW_HELPERS
// Bytes [u, u + 16) of a shared window.
__device__ __forceinline__ ulonglong2 ddtc_win16(const ulonglong2 *w,
                                                 unsigned u) {
  return ddtc_shr(w[u >> 4], w[(u >> 4) + 1], u & 15);
}
// Bytes [0, n) of x and [n, 16) of y (0 < n < 16).
__device__ __forceinline__ ulonglong2 ddtc_join(ulonglong2 x, ulonglong2 y,
                                                unsigned n) {
  const unsigned long long lo = n >= 8 ? ~0ull : (1ull << (8 * n)) - 1;
  const unsigned long long hi = n >= 8 ? (1ull << (8 * (n - 8))) - 1 : 0ull;
  ulonglong2 r;
  r.x = (x.x & lo) | (y.x & ~lo);
  r.y = (x.y & hi) | (y.y & ~hi);
  return r;
}
// Bytes [f, f + n) of v, the others of r (1 <= n, f + n <= 16).
__device__ __forceinline__ ulonglong2 ddtc_merge(ulonglong2 r, ulonglong2 v,
                                                 unsigned f, unsigned n) {
  const unsigned e = f + n;
  const unsigned long long lo = (e >= 8 ? ~0ull : (1ull << (8 * e)) - 1) &
                                (f >= 8 ? 0ull : ~0ull << (8 * f));
  const unsigned long long hi =
      (e <= 8 ? 0ull : e >= 16 ? ~0ull : (1ull << (8 * (e - 8))) - 1) &
      (f <= 8 ? ~0ull : ~0ull << (8 * (f - 8)));
  r.x = (r.x & ~lo) | (v.x & lo);
  r.y = (r.y & ~hi) | (v.y & hi);
  return r;
}
#endif // DDTC_WINDOW_HELPERS
)";

} // namespace

void emitWindowBlockStart(std::ostream &os, const std::string &p,
                          int64_t wv) {
  const std::string K = std::to_string(kWindowChunks);
  printKernelHead(os, p, true);
  os << "    const " << p << "_params p) {\n"
     << "  // The window, with a vector of room before it and two after for\n"
     << "  // the reads that straddle its ends.\n"
     << "  __shared__ ulonglong2 win[" << wv << " + 3];\n"
     << "  // Chunks are aligned in the packed buffer; a block takes " << K
     << " x blockDim.x\n"
     << "  // of them, a thread " << K << ", blockDim.x apart.\n"
     << "  const long long pa =\n"
        "      (long long)(((unsigned long long)packed - (unsigned long "
        "long)p.lo) & 15);\n"
     << "  const long long bd = blockDim.x;\n"
     << "  const long long tile = " << K << " * bd;\n"
     << "  const unsigned char *src_lo = origin + p.src_lo;\n"
     << "  const unsigned char *src_hi = origin + p.src_hi;\n"
     << "  for (long long g0 = p.chunk_begin + (long long)blockIdx.x * tile;\n"
     << "       g0 < p.chunk_end; g0 += (long long)gridDim.x * tile) {\n"
     << "    // The block's packed bytes [A, B) (the same for all its "
        "threads).\n"
     << "    const long long A = ddtc_max(g0 * 16 - pa, p.lo);\n"
     << "    const long long B =\n"
        "        ddtc_min(ddtc_min(g0 + tile, p.chunk_end) * 16 - pa, p.hi);\n"
     << "    if (A >= B)\n"
     << "      continue;\n"
     << "    long long left, span, len, st;\n"
     << "    const long long oA = " << p
     << "_locate(p, A, left, span, len, st);\n";
}

void emitWindowBlockEnd(std::ostream &os) {
  os << "    // The next tile reuses the window.\n"
     << "    __syncthreads();\n"
     << "  }\n"
     << "}\n\n";
}

void emitWindowFill(std::ostream &os, int64_t wv, int threadsPerBlock) {
  const std::string WV = std::to_string(wv);
  // The window's vectors a thread loads (a block of threadsPerBlock).
  const std::string MAXV =
      std::to_string((wv + threadsPerBlock - 1) / threadsPerBlock);
  os << "    const ulonglong2 *wv =\n"
        "        (const ulonglong2 *)((unsigned long long)r_lo & ~15ull);\n"
     << "    const long long nv = (long long)(((unsigned long long)r_hi -\n"
        "                                      (unsigned long long)wv + "
        "15) >> 4);\n"
     << "    windowed = windowed && nv <= " << WV << " && nv <= " << MAXV
     << " * bd;\n"
     << "    if (windowed) {\n"
     << "      // The window's vectors, coalesced, all loads issued first:\n"
     << "      // whole where they lie in the type's span (their bytes "
        "outside\n"
     << "      // [r_lo, r_hi) go unused), so that a tile's edges cost no\n"
     << "      // second round of loads but at the span's two ends.\n"
     << "      ulonglong2 t[" << MAXV << "];\n"
     << "      #pragma unroll\n"
     << "      for (int i = 0; i < " << MAXV << "; ++i) {\n"
     << "        const long long v = threadIdx.x + i * bd;\n"
     << "        const unsigned char *s = (const unsigned char *)(wv + v);\n"
     << "        t[i].x = 0;\n"
     << "        t[i].y = 0;\n"
     << "        if (v < nv && s >= src_lo && s + 16 <= src_hi)\n"
     << "          t[i] = wv[v];\n"
     << "      }\n"
     << "      #pragma unroll\n"
     << "      for (int i = 0; i < " << MAXV << "; ++i) {\n"
     << "        const long long v = threadIdx.x + i * bd;\n"
     << "        const unsigned char *s = (const unsigned char *)(wv + v);\n"
     << "        if (v < nv && s >= src_lo && s + 16 <= src_hi)\n"
     << "          win[1 + v] = t[i];\n"
     << "      }\n"
     << "      // Edge vectors across the span's ends: exactly their bytes of\n"
     << "      // [r_lo, r_hi).\n"
     << "      if (threadIdx.x == 0) {\n"
     << "        #pragma unroll 1\n"
     << "        for (long long v = 0; v < nv; v += ddtc_max(nv - 1, 1)) {\n"
     << "          const unsigned char *s = (const unsigned char *)(wv + "
        "v);\n"
     << "          if (s >= src_lo && s + 16 <= src_hi)\n"
     << "            continue;\n"
     << "          const unsigned char *a = s < r_lo ? r_lo : s;\n"
     << "          const unsigned char *b = s + 16 > r_hi ? r_hi : s + 16;\n"
     << "          ulonglong2 e;\n"
     << "          e.x = 0;\n"
     << "          e.y = 0;\n"
     << "          ddtc_gather(e, (unsigned)(a - s), a, (unsigned)(b - a), "
        "r_lo, r_hi);\n"
     << "          win[1 + v] = e;\n"
     << "        }\n"
     << "      }\n"
     << "    }\n";
}

void emitWindowFallback(std::ostream &os, const std::string &p) {
  const std::string K = std::to_string(kWindowChunks);
  os << "      // Straight from global memory, each chunk run by run.\n"
     << "      #pragma unroll 1\n"
     << "      for (int c = 0; c < " << K << "; ++c) {\n"
     << "        const long long q0 = (g0 + threadIdx.x + c * bd) * 16 - "
        "pa;\n"
     << "        long long a = ddtc_max(q0, A);\n"
     << "        const long long b = ddtc_min(q0 + 16, B);\n"
     << "        if (a >= b)\n"
     << "          continue;\n"
     << "        // Each chunk locates its own first byte.\n"
     << "        long long o = " << p
     << "_locate(p, a, left, span, len, st);\n"
     << "        const unsigned f0 = (unsigned)(a - q0);\n"
     << "        unsigned f = f0;\n"
     << "        ulonglong2 r;\n"
     << "        r.x = 0;\n"
     << "        r.y = 0;\n"
     << "        #pragma unroll 1\n"
     << "        for (;;) {\n"
     << "          " << p << "_next_run(p, a, o, left, span, len, st);\n"
     << "          const long long n = ddtc_min(left, b - a);\n"
     << "          ddtc_gather(r, f, origin + o, (unsigned)n, src_lo, "
        "src_hi);\n"
     << "          f += (unsigned)n;\n"
     << "          a += n;\n"
     << "          o += n;\n"
     << "          left -= n;\n"
     << "          span -= n;\n"
     << "          if (a >= b)\n"
     << "            break;\n"
     << "        }\n"
     << "        ddtc_store_chunk(packed + (q0 - p.lo), r, f0, f);\n"
     << "      }\n";
}

namespace {

void emitPack(const KernelPlan &plan, const std::string &p, std::ostream &os) {
  const Segment &seg = plan.layout.segments.front();
  const bool rows = !seg.dims.empty();
  const int64_t wv = getWindowVectors(plan);
  const std::string K = std::to_string(kWindowChunks);
  // The run length's divisor: a segment without dimensions is one run an
  // instance, and its run length the instance's size.
  const std::string lenDiv =
      rows ? "p.s0_len_mul, p.s0_len_shift" : "p.size_mul, p.size_shift";
  emitWindowBlockStart(os, p, wv);
  if (!rows)
    os << "    // One run an instance: the row is the instances.\n"
       << "    st = p.extent;\n"
       << "    span = B - A;\n";
  os << "    const long long gap = st - len;\n"
     << "    // Windowed: [A, B) in one row of runs of at least 16 bytes.\n"
     << "    bool windowed = span >= B - A && gap >= 0 && len >= 16;\n"
     << "    // The records' side of [A, B): from A's byte to B - 1's, the "
        "gaps between.\n"
     << "    long long crossed = 0;\n"
     << "    if (windowed)\n"
     << "      crossed = ddtc_div(len - left + (B - 1 - A), " << lenDiv
     << ");\n"
     << "    const unsigned char *r_lo = origin + oA;\n"
     << "    const unsigned char *r_hi = r_lo + (B - A) + crossed * gap;\n";
  emitWindowFill(os, wv, plan.threadsPerBlock);
  os << "    __syncthreads();\n";
  {
    os << "    if (windowed) {\n"
       << "      // Window byte of A's source byte.\n"
       << "      const long long w0 = (long long)((unsigned long long)r_lo & "
          "15) + 16;\n"
       << "      #pragma unroll\n"
       << "      for (int c = 0; c < " << K << "; ++c) {\n"
       << "        const long long q0 = (g0 + threadIdx.x + c * bd) * 16 - "
          "pa;\n"
       << "        const long long a = ddtc_max(q0, A), b = ddtc_min(q0 + 16, "
          "B);\n"
       << "        if (a >= b)\n"
       << "          continue;\n"
       << "        // a is byte z of its row from A's run on: in run k, lft "
          "bytes before\n"
       << "        // its end; the chunk's later bytes are the next run's, "
          "gap bytes on.\n"
       << "        const long long z = len - left + (a - A);\n"
       << "        const long long k = ddtc_div(z, " << lenDiv << ");\n"
       << "        const long long lft = len - (z - k * len);\n"
       << "        const unsigned u = (unsigned)(w0 + (a - A) + k * gap);\n"
       << "        if (a == q0 && b == q0 + 16) {\n"
       << "          ulonglong2 r = ddtc_win16(win, u);\n"
       << "          if (lft < 16)\n"
       << "            r = ddtc_join(r, ddtc_win16(win, u + (unsigned)gap), "
          "(unsigned)lft);\n"
       << "          *(ulonglong2 *)(packed + (q0 - p.lo)) = r;\n"
       << "        } else {\n"
       << "          // A chunk cut by lo or hi.\n"
       << "          const unsigned char *wb = (const unsigned char *)win;\n"
       << "          #pragma unroll 1\n"
       << "          for (long long i = a; i < b; ++i)\n"
       << "            packed[i - p.lo] =\n"
       << "                wb[u + (unsigned)(i - a) + (i - a >= lft ? "
          "(unsigned)gap : 0u)];\n"
       << "        }\n"
       << "      }\n"
       << "    } else {\n";
    emitWindowFallback(os, p);
    os << "    }\n";
  }
  emitWindowBlockEnd(os);
}

} // namespace

void emitWindowPack(const KernelPlan &plan, const std::string &prefix,
                    std::ostream &os) {
  assert(isWindowPlan(plan) && "a window plan");
  if (isRecordPeriodPlan(plan)) {
    emitRecordPeriodPack(plan, prefix, os);
    return;
  }
  os << kWindowHelpers;
  if (plan.layout.segments.front().runs.size() == 1)
    emitPack(plan, prefix, os);
  else
    emitRecordWindowPack(plan, prefix, os);
}

} // namespace ddtc
