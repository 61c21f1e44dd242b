//===- Hash.h - 128-bit hashes for cache keys and entry checks --*- C++ -*-===//
//
// A fast non-cryptographic 128-bit hash: it names cache entries, detects
// corrupted ones and keys the in-process plan memo by datatype tree. The disk
// cache trusts only files of the current user, so the hash need not resist
// forgery.
//===----------------------------------------------------------------------===//

#ifndef DDTC_RUNTIME_HASH_H
#define DDTC_RUNTIME_HASH_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ddtc {
class Datatype;
} // namespace ddtc

namespace ddtc::rt {

struct Hash128 {
  uint64_t lo = 0, hi = 0;
  bool operator==(const Hash128 &o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const Hash128 &o) const { return !(*this == o); }
  /// 32 lowercase hex digits.
  std::string hex() const;
};

/// Hashes a sequence of fields; each field's length is hashed with it, so
/// ("ab", "c") and ("a", "bc") differ.
class Hasher {
public:
  Hasher &add(const void *data, size_t size);
  Hasher &add(std::string_view s) { return add(s.data(), s.size()); }
  Hasher &add(int64_t v);
  Hash128 finish() const;

private:
  void block(uint64_t w);
  uint64_t a_ = 0x6a09e667f3bcc908ull, b_ = 0xbb67ae8584caa73bull;
  uint64_t total_ = 0;
};

/// The hash of one byte string.
Hash128 hashBytes(const void *data, size_t size);

/// The hash of a datatype tree: of each constructor and the arguments its
/// signature lists (what the spec printer writes), so trees equal under
/// equalTrees hash equal whatever spec text or MPI handle they came from.
/// One walk; a subtree shared by several parents is hashed once.
Hash128 hashTree(const Datatype &type);

/// For hash tables keyed by a Hash128 (its bits are already mixed).
struct Hash128Hasher {
  size_t operator()(const Hash128 &h) const {
    return static_cast<size_t>(h.lo);
  }
};

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_HASH_H
