//===- Mutator.h - Random edits of spec, IR and C API inputs ----*- C++ -*-===//
//
// The fuzzer's mutations work on text, as a user's mistakes do: numbers
// swapped for boundary values, tokens and lines deleted, duplicated, swapped
// or spliced from other seeds, names pointed at other names.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_FUZZ_MUTATOR_H
#define DDTC_TOOLS_DDTC_FUZZ_MUTATOR_H

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ddtc::fuzz {

class Mutator {
public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  /// `input` with 1 to 4 random edits; `donors` are other seeds of the same
  /// kind to splice lines from.
  std::string mutate(const std::string &input,
                     const std::vector<const std::string *> &donors);

  /// A value in [0, n) (n > 0).
  uint64_t below(uint64_t n) { return rng_() % n; }
  /// A count, byte offset or length a C API call might get: small, at a
  /// boundary, negative or huge.
  int64_t interestingInt(int64_t near);

  std::mt19937_64 &rng() { return rng_; }

private:
  void replaceNumber(std::string &s);
  void deleteSpan(std::string &s);
  void duplicateSpan(std::string &s);
  void insertPunctuation(std::string &s);
  void swapLines(std::string &s);
  void duplicateLine(std::string &s);
  void renameWord(std::string &s);
  void repointOperand(std::string &s);
  void spliceLine(std::string &s, const std::vector<const std::string *> &d);

  std::mt19937_64 rng_;
};

} // namespace ddtc::fuzz

#endif // DDTC_TOOLS_DDTC_FUZZ_MUTATOR_H
