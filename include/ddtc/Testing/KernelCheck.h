//===- KernelCheck.h - Pack and unpack against the reference ----*- C++ -*-===//
//
// The one harness that checks a pack or unpack implementation (MPI_Pack, the
// emitted kernels on the CPU, the generic kernels, libddtc on a GPU) against
// referencePack/referenceUnpackRange: it lays out patterned or random source
// bytes and poisoned outputs with guard bands (or the source's readable
// bytes against an inaccessible page), calls the implementation through a
// callback, and reports the first byte that differs, inside or outside the
// range.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TESTING_KERNELCHECK_H
#define DDTC_TESTING_KERNELCHECK_H

#include "ddtc/Core/Datatype.h"

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace ddtc {

/// Where the buffer a call reads (the origin buffer for pack, the packed one
/// for unpack) lies.
enum class SourceEdge {
  /// As the call's shift says, with a guard band on each side.
  Shifted,
  /// The bytes the call may read end right before an inaccessible page (the
  /// shift is ignored), so that a load past them faults.
  EndsAtPage,
  /// The bytes the call may read start right after an inaccessible page.
  StartsAtPage,
};

/// One call to check: pack (or unpack) the packed bytes [lo, hi) of the
/// instances.
struct KernelCall {
  bool pack = true;
  int64_t lo = 0, hi = 0;
  /// How far past a 256-byte boundary plus the guard band the instances'
  /// first touched byte (originShift) and packed byte lo (packedShift) sit;
  /// both below 256.
  int64_t originShift = 0, packedShift = 0;
  /// Instead of originShift: displacement 0 of the instances sits at a
  /// 256-byte boundary, as in a buffer from cudaMalloc, so the first touched
  /// byte keeps the alignment of its displacement (chunks aligned in the
  /// destination then sit off 16 in the packed buffer).
  bool alignOrigin = false;
  SourceEdge sourceEdge = SourceEdge::Shifted;
};

/// The host buffers of one call, guard bands included. Displacement 0 of the
/// instances is byte `originAt` of `originBuffer` (negative or past its end
/// when the type's data lies far from 0); packed byte lo is byte `packedAt`
/// of `packedBuffer`. An implementation that works elsewhere (a GPU) copies
/// both buffers in, runs, and copies both back.
struct KernelBuffers {
  uint8_t *originBuffer = nullptr;
  int64_t originBytes = 0, originAt = 0;
  uint8_t *packedBuffer = nullptr;
  int64_t packedBytes = 0, packedAt = 0;

  /// The buffer the call reads (the origin buffer for pack, the packed one
  /// for unpack) and the bytes of it the call may read, [readBegin,
  /// readEnd): pack, the instances' bytes from the first they touch to the
  /// last; unpack, packed bytes [lo, hi). An implementation that can watch
  /// its loads (the CPU emulation) reports one that leaves them with
  /// describeStrayRead.
  const uint8_t *sourceBuffer = nullptr;
  int64_t sourceBytes = 0;
  const uint8_t *readBegin = nullptr, *readEnd = nullptr;

  /// The address of displacement 0 (computed without leaving the buffer in
  /// C++ terms; only for passing on).
  void *origin() const;
  void *packed() const { return packedBuffer + packedAt; }
  /// The check's result for a load of `bytes` bytes at `at` outside
  /// [readBegin, readEnd): "pack read origin offsets [X, Y), outside ...".
  std::string describeStrayRead(const KernelCall &call, const void *at,
                                int64_t bytes) const;
};

/// Runs `call` on `buffers`. Returns "" or why it could not run, which is
/// the check's result.
using KernelRunner =
    std::function<std::string(const KernelCall &call, KernelBuffers &buffers)>;

struct KernelCheckOptions {
  /// Bytes of poison on each side of every buffer.
  int64_t guard = 64;
  /// Refuse types whose buffers would exceed this many bytes.
  int64_t maxSpan = int64_t(1) << 30;
  /// When set, the source bytes of each call are drawn from it (one per
  /// origin buffer byte) and the poison is the constant 0xA5; otherwise the
  /// source and packed input follow sourceByte and packedByte and the poison
  /// poisonByte (CheckerOptions.h), which differ at every position.
  std::mt19937_64 *random = nullptr;
  /// Flip one byte of every non-empty reference pack, to show that a
  /// mismatch is caught.
  bool breakReference = false;
};

/// Checks calls on `count` instances of one type.
class KernelChecker {
public:
  KernelChecker(const Datatype &type, int64_t count,
                KernelCheckOptions options = {});

  /// Why the type cannot be checked (its span overflows or exceeds
  /// maxSpan), or "".
  const std::string &error() const { return error_; }
  /// The packed size of the instances.
  int64_t packedBytes() const { return total_; }
  /// Whether some bytes of the instances overlap (unpack then writes them
  /// more than once; the packed input is then a real pack, so all writes
  /// agree).
  bool overlapping() const { return overlap_; }

  /// Lays out the buffers of `call`, runs it and compares. Returns "" or the
  /// first difference: "packed byte K is 0x.., the reference has 0x..",
  /// "pack wrote outside ...", "unpacked byte at origin offset N ...", ...
  std::string check(const KernelCall &call, const KernelRunner &run);

private:
  const Datatype &type_;
  int64_t count_;
  KernelCheckOptions options_;
  std::string error_;
  int64_t spanLo_ = 0, spanHi_ = 0, total_ = 0;
  bool overlap_ = false;
  /// The reference pack of the sourceByte pattern (patterned mode only).
  std::vector<uint8_t> patternStream_;
};

} // namespace ddtc

#endif // DDTC_TESTING_KERNELCHECK_H
