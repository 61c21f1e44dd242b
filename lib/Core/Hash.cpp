//===- Hash.cpp - 128-bit hashes for cache keys and tree identity ---------===//
//
// Two 64-bit lanes absorb each 8-byte word through a multiply and a rotate
// (each step is a bijection of the lane for a fixed word and of the word for
// a fixed lane, so changing one word always changes the state); the lanes are
// cross-mixed and finished with a 64-bit avalanche step.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/Hash.h"

#include <cstring>

namespace ddtc {

namespace {

constexpr uint64_t kMulA = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kMulB = 0xc2b2ae3d27d4eb4full;
constexpr uint64_t kMulC = 0x165667b19e3779f9ull;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/// A bijective avalanche of 64 bits (xor-shift-multiply rounds).
inline uint64_t avalanche(uint64_t x) {
  x ^= x >> 31;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 29;
  x *= 0x9fb21c651e98df25ull;
  x ^= x >> 32;
  return x;
}

} // namespace

std::string Hash128::hex() const {
  static const char digits[] = "0123456789abcdef";
  std::string s(32, '0');
  for (int i = 0; i < 16; ++i) {
    s[15 - i] = digits[(hi >> (4 * i)) & 15];
    s[31 - i] = digits[(lo >> (4 * i)) & 15];
  }
  return s;
}

void Hasher::block(uint64_t w) {
  a_ = rotl(a_ ^ (w * kMulA), 29) * kMulB;
  b_ = rotl(b_ + w, 37) * kMulC + a_;
}

Hasher &Hasher::add(const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  block(static_cast<uint64_t>(size) ^ 0x5bd1e9955bd1e995ull);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    block(w);
  }
  if (i < size) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, size - i);
    block(w ^ (static_cast<uint64_t>(size - i) << 56));
  }
  total_ += size;
  return *this;
}

Hasher &Hasher::add(int64_t v) { return add(&v, sizeof v); }

Hash128 Hasher::finish() const {
  uint64_t a = a_ ^ total_, b = b_ ^ rotl(total_, 32);
  Hash128 h;
  h.lo = avalanche(a + rotl(b, 17));
  h.hi = avalanche(b ^ (h.lo * kMulA));
  return h;
}

Hash128 hashBytes(const void *data, size_t size) {
  return Hasher().add(data, size).finish();
}

} // namespace ddtc
