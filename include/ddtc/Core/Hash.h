//===- Hash.h - 128-bit hashes for cache keys and tree identity -*- C++ -*-===//
//
// A fast non-cryptographic 128-bit hash: it names cache entries, detects
// corrupted ones and identifies datatype trees (each Datatype keeps the hash
// of its tree). The disk cache trusts only files of the current user, so the
// hash need not resist forgery.
//===----------------------------------------------------------------------===//

#ifndef DDTC_CORE_HASH_H
#define DDTC_CORE_HASH_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ddtc {

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

/// For hash tables keyed by a Hash128 (its bits are already mixed).
struct Hash128Hasher {
  size_t operator()(const Hash128 &h) const {
    return static_cast<size_t>(h.lo);
  }
};

} // namespace ddtc

#endif // DDTC_CORE_HASH_H
