//===- KernelCheck.cpp - Pack and unpack against the reference -----------===//

#include "ddtc/Testing/KernelCheck.h"

#include "ddtc/Core/Typemap.h"
#include "ddtc/Testing/CheckerOptions.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace ddtc;

namespace {

constexpr uint8_t kConstantPoison = 0xA5;
constexpr int64_t kAlignment = 256;

std::string hexByte(uint8_t b) {
  char s[8];
  std::snprintf(s, sizeof s, "0x%02x", b);
  return s;
}

/// A byte buffer whose first byte is aligned to kAlignment or, for
/// EndsAtPage and StartsAtPage, that lies between two inaccessible pages,
/// its last byte right before one or its first byte right after one.
class Buffer {
public:
  explicit Buffer(int64_t bytes, SourceEdge edge = SourceEdge::Shifted)
      : bytes_(bytes) {
    if (edge == SourceEdge::Shifted) {
      storage_.resize(static_cast<size_t>(bytes + kAlignment));
      uintptr_t base = reinterpret_cast<uintptr_t>(storage_.data());
      data_ = storage_.data() + (kAlignment - base % kAlignment) % kAlignment;
      return;
    }
    const int64_t page = sysconf(_SC_PAGESIZE);
    const int64_t inside = (bytes + page - 1) / page * page;
    mapBytes_ = static_cast<size_t>(inside + 2 * page);
    void *map = mmap(nullptr, mapBytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
      mapBytes_ = 0;
      return;
    }
    map_ = static_cast<uint8_t *>(map);
    if (mprotect(map_, static_cast<size_t>(page), PROT_NONE) != 0 ||
        mprotect(map_ + page + inside, static_cast<size_t>(page),
                 PROT_NONE) != 0)
      return;
    data_ = map_ + page + (edge == SourceEdge::EndsAtPage ? inside - bytes : 0);
  }
  ~Buffer() {
    if (map_)
      munmap(map_, mapBytes_);
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  /// Whether the buffer could be made.
  bool ok() const { return data_ != nullptr; }
  uint8_t *data() { return data_; }
  uint8_t &operator[](int64_t i) { return data()[i]; }
  int64_t size() const { return bytes_; }
  std::vector<uint8_t> copy() { return {data(), data() + bytes_}; }

private:
  std::vector<uint8_t> storage_;
  uint8_t *map_ = nullptr;
  size_t mapBytes_ = 0;
  uint8_t *data_ = nullptr;
  int64_t bytes_;
};

/// The address `offset` bytes from `base`, which may lie outside the buffer
/// `base` points into (displacement 0 of a type whose data starts far from
/// it).
void *displaced(uint8_t *base, int64_t offset) {
  return reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(base) +
                                  static_cast<uintptr_t>(offset));
}

/// Where packed byte `k` of `count` instances comes from, relative to
/// displacement 0.
int64_t sourceOffsetOf(const Datatype &type, int64_t count, int64_t k) {
  int64_t pos = 0, found = INT64_MIN;
  forEachRun(type, count, [&](const Run &r) {
    if (found == INT64_MIN && k < pos + r.length)
      found = r.offset + (k - pos);
    pos += r.length;
  });
  return found;
}

bool runsOverlap(const Datatype &type, int64_t count) {
  std::vector<Run> runs = flatten(type, count);
  std::sort(runs.begin(), runs.end(),
            [](const Run &a, const Run &b) { return a.offset < b.offset; });
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i - 1].offset + runs[i - 1].length > runs[i].offset)
      return true;
  return false;
}

} // namespace

void *KernelBuffers::origin() const {
  return displaced(originBuffer, originAt);
}

std::string KernelBuffers::describeStrayRead(const KernelCall &call,
                                             const void *at,
                                             int64_t bytes) const {
  // Offsets from displacement 0 (pack) or packed byte numbers (unpack).
  const uintptr_t zero = call.pack
                             ? reinterpret_cast<uintptr_t>(origin())
                             : reinterpret_cast<uintptr_t>(packed()) -
                                   static_cast<uintptr_t>(call.lo);
  auto place = [&](const void *p) {
    return std::to_string(static_cast<int64_t>(
        reinterpret_cast<uintptr_t>(p) - zero));
  };
  const void *end = static_cast<const uint8_t *>(at) + bytes;
  return call.pack
             ? "pack read origin offsets [" + place(at) + ", " + place(end) +
                   "), outside the bytes the type touches [" +
                   place(readBegin) + ", " + place(readEnd) + ")"
             : "unpack read packed bytes [" + place(at) + ", " + place(end) +
                   "), outside its input [" + place(readBegin) + ", " +
                   place(readEnd) + ")";
}

KernelChecker::KernelChecker(const Datatype &type, int64_t count,
                             KernelCheckOptions options)
    : type_(type), count_(count), options_(options) {
  if (!touchedSpan(type, count, spanLo_, spanHi_, error_))
    return;
  total_ = packedSize(type, count);
  const int64_t limit = options_.maxSpan;
  // spanHi - spanLo itself may not fit in 64 bits.
  if (total_ < 0 || total_ > limit ||
      (spanLo_ < 0 && spanHi_ > limit + spanLo_) || spanHi_ - spanLo_ > limit) {
    error_ = "the buffers (from offset " + std::to_string(spanLo_) + " to " +
             std::to_string(spanHi_) + ", " + std::to_string(total_) +
             " bytes packed) exceed the limit of " + std::to_string(limit) +
             " bytes";
    return;
  }
  overlap_ = runsOverlap(type, count);
  if (!options_.random) {
    std::vector<uint8_t> source(static_cast<size_t>(spanHi_ - spanLo_));
    for (size_t i = 0; i < source.size(); ++i)
      source[i] = sourceByte(spanLo_ + static_cast<int64_t>(i));
    patternStream_.resize(static_cast<size_t>(total_));
    referencePack(type, count, displaced(source.data(), -spanLo_),
                  patternStream_.data());
  }
}

std::string KernelChecker::check(const KernelCall &call,
                                 const KernelRunner &run) {
  if (!error_.empty())
    return error_;
  if (call.lo < 0 || call.lo > call.hi || call.hi > total_ ||
      call.originShift < 0 || call.originShift >= kAlignment ||
      call.packedShift < 0 || call.packedShift >= kAlignment)
    return "the checker was given a bad call (range [" +
           std::to_string(call.lo) + ", " + std::to_string(call.hi) + ") of " +
           std::to_string(total_) + ")";
  const int64_t guard = options_.guard, lo = call.lo, hi = call.hi;
  // The bytes before and after the span of each buffer: the guard bands
  // and the shift, or, on the side of the source that lies at a page, none.
  const SourceEdge edge = call.sourceEdge;
  const int64_t edgeBefore = edge == SourceEdge::StartsAtPage ? 0 : guard;
  const int64_t edgeAfter = edge == SourceEdge::EndsAtPage ? 0 : guard;
  const bool atPage = edge != SourceEdge::Shifted;
  const int64_t originShift =
      call.alignOrigin
          ? ((spanLo_ - guard) % kAlignment + kAlignment) % kAlignment
          : call.originShift;
  const int64_t originBefore =
      call.pack && atPage ? edgeBefore : guard + originShift;
  const int64_t originAfter = call.pack && atPage ? edgeAfter : guard;
  const int64_t packedBefore =
      !call.pack && atPage ? edgeBefore : guard + call.packedShift;
  const int64_t packedAfter = !call.pack && atPage ? edgeAfter : guard;
  Buffer origin(originBefore + (spanHi_ - spanLo_) + originAfter,
                call.pack ? edge : SourceEdge::Shifted);
  Buffer packed(packedBefore + (hi - lo) + packedAfter,
                call.pack ? SourceEdge::Shifted : edge);
  if (!origin.ok() || !packed.ok())
    return "the checker cannot map a buffer between inaccessible pages";
  KernelBuffers b;
  b.originBuffer = origin.data();
  b.originBytes = origin.size();
  b.originAt = originBefore - spanLo_;
  b.packedBuffer = packed.data();
  b.packedBytes = packed.size();
  b.packedAt = packedBefore;
  if (call.pack) {
    b.sourceBuffer = origin.data();
    b.sourceBytes = origin.size();
    b.readBegin = origin.data() + originBefore;
    b.readEnd = b.readBegin + (spanHi_ - spanLo_);
  } else {
    b.sourceBuffer = packed.data();
    b.sourceBytes = packed.size();
    b.readBegin = packed.data() + b.packedAt;
    b.readEnd = b.readBegin + (hi - lo);
  }
  std::mt19937_64 *rng = options_.random;
  auto poison = [&](int64_t i) {
    return rng ? kConstantPoison : poisonByte(i);
  };
  auto originOffset = [&](int64_t i) { return i - b.originAt; };

  // The whole packed stream the reference gives for this call's source.
  std::vector<uint8_t> randomStream;
  auto packRandomSource = [&](Buffer &source) {
    for (int64_t i = 0; i < source.size(); ++i)
      source[i] = static_cast<uint8_t>((*rng)());
    randomStream.resize(static_cast<size_t>(total_));
    referencePack(type_, count_, displaced(source.data(), b.originAt),
                  randomStream.data());
  };

  std::vector<uint8_t> expectOrigin, expectPacked;
  const uint8_t *stream = patternStream_.data();
  if (call.pack) {
    if (rng) {
      packRandomSource(origin);
      stream = randomStream.data();
    } else {
      for (int64_t i = 0; i < origin.size(); ++i)
        origin[i] = sourceByte(originOffset(i));
    }
    for (int64_t i = 0; i < packed.size(); ++i)
      packed[i] = poison(i);
    expectOrigin = origin.copy();
    expectPacked = packed.copy();
    if (hi > lo)
      std::memcpy(expectPacked.data() + b.packedAt, stream + lo,
                  static_cast<size_t>(hi - lo));
    if (options_.breakReference && hi > lo)
      expectPacked[static_cast<size_t>(b.packedAt + (hi - lo) / 2)] ^= 0xFF;
  } else {
    std::vector<uint8_t> patternInput;
    if (rng) {
      Buffer source(origin.size());
      packRandomSource(source);
      stream = randomStream.data();
    } else if (!overlap_) {
      patternInput.resize(static_cast<size_t>(total_));
      for (int64_t k = lo; k < hi; ++k)
        patternInput[k] = packedByte(k);
      stream = patternInput.data();
    }
    for (int64_t i = 0; i < origin.size(); ++i)
      origin[i] = poison(i);
    for (int64_t i = 0; i < packed.size(); ++i)
      packed[i] = poison(i);
    if (hi > lo)
      std::memcpy(packed.data() + b.packedAt, stream + lo,
                  static_cast<size_t>(hi - lo));
    expectOrigin = origin.copy();
    expectPacked = packed.copy();
    if (hi > lo)
      referenceUnpackRange(type_, count_, stream, lo, hi,
                           displaced(expectOrigin.data(), b.originAt));
  }

  std::string why = run(call, b);
  if (!why.empty())
    return why;

  const char *what = call.pack ? "pack" : "unpack";
  for (int64_t i = 0; i < packed.size(); ++i) {
    if (packed[i] == expectPacked[i])
      continue;
    int64_t k = i - b.packedAt + lo;
    if (!call.pack)
      return "unpack wrote into its packed input, at packed byte " +
             std::to_string(k);
    if (k < lo || k >= hi)
      return "pack wrote outside [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "), at packed byte " + std::to_string(k);
    return "packed byte " + std::to_string(k) + " is " + hexByte(packed[i]) +
           (packed[i] == poison(i) ? " (not written)" : "") +
           ", the reference has " + hexByte(expectPacked[i]) +
           " (from origin offset " +
           std::to_string(sourceOffsetOf(type_, count_, k)) + ")";
  }
  for (int64_t i = 0; i < origin.size(); ++i) {
    if (origin[i] == expectOrigin[i])
      continue;
    if (call.pack)
      return std::string(what) + " wrote into its source, at origin offset " +
             std::to_string(originOffset(i));
    uint8_t p = poison(i);
    return "unpacked byte at origin offset " + std::to_string(originOffset(i)) +
           " is " + hexByte(origin[i]) +
           (origin[i] == p ? " (untouched)" : "") + ", the reference has " +
           hexByte(expectOrigin[i]) +
           (expectOrigin[i] == p ? " (untouched)" : "") +
           (overlap_ ? " [overlapping type]" : "");
  }
  return "";
}
