//===- CheckerOptions.h - Options shared by the differential checkers -*- C++ -*-===//
//
// ddt-mpi-check and ddt-emu-check both check random types (--random, --seed,
// --first, --max-depth) or the bindings of a spec file (-t, --count,
// --max-span) and print progress with -v: one parser for those options.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TESTING_CHECKEROPTIONS_H
#define DDTC_TESTING_CHECKEROPTIONS_H

#include "ddtc/Core/SpecParser.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ddtc {

struct CheckerOptions {
  bool random = false;
  int64_t numRandom = 0;
  uint64_t seed = 0;
  bool seedGiven = false;
  uint64_t first = 0;
  unsigned maxDepth = 5;
  std::string file; ///< the spec file, when not --random
  std::string only; ///< -t NAME
  int64_t fileCount = 3;
  int64_t maxSpan = int64_t(1) << 30;
  bool verbose = false;
};

enum class OptionResult {
  Taken,    ///< argv[i] (and its value) was a shared option
  NotTaken, ///< not a shared option: the tool's own, or unknown
  Error     ///< a shared option with a bad value; `error` says why
};

/// Reads argv[i] when it is one of the shared options, advancing i past its
/// value. A word not starting with '-' is the spec file (a second one is an
/// error).
OptionResult parseCheckerOption(int argc, char **argv, int &i,
                                CheckerOptions &o, std::string &error);

/// Checks after all arguments: exactly one of --random N and a spec file.
bool finishCheckerOptions(const CheckerOptions &o, std::string &error);

/// Reads a checker's command line: --help (or -h) prints `help` and
/// --version prints `version`, both then exit 0; the shared options go to
/// `o` (parseCheckerOption); every other argument goes to `own`, which reads
/// the tool's own options as parseCheckerOption reads the shared ones. An
/// argument neither takes is an unknown option. Ends with
/// finishCheckerOptions.
bool parseCheckerArgs(int argc, char **argv, CheckerOptions &o,
                      const char *help, const char *version,
                      const std::function<OptionResult(int &i)> &own,
                      std::string &error);

/// Sets the seed of a --random run, unless --seed gave one, from the random
/// device and the clock, and prints it first ("seed: N") so that the run can
/// be repeated.
void chooseRandomSeed(CheckerOptions &o);

/// A whole decimal, hexadecimal (0x) or octal (0) 64-bit integer.
bool parseInt64(const char *text, int64_t &out);

/// Reads and parses o.file and returns the bindings to check (all, or the
/// one -t names). On failure prints why, prefixed with `tool`, and returns
/// false.
bool loadCheckedBindings(const CheckerOptions &o, const char *tool,
                         SpecFile &spec, std::vector<const SpecBinding *> &out);

/// Byte patterns of the checkers: every byte of an aligned 256-byte window
/// distinct and different from the bytes 256 further on, so a byte read from
/// or written to a wrong place shows.
uint8_t patternByte(int64_t i, uint8_t mul, uint8_t salt);
/// The source buffer's byte at origin offset `i`.
inline uint8_t sourceByte(int64_t i) { return patternByte(i, 0x9D, 0x3C); }
/// Byte `k` of the packed stream fed to unpack.
inline uint8_t packedByte(int64_t k) { return patternByte(k, 0x6B, 0x96); }
/// Poison of the buffers a pack or unpack writes.
inline uint8_t poisonByte(int64_t i) {
  return static_cast<uint8_t>(0xA5 ^ (static_cast<uint64_t>(i) % 7));
}

} // namespace ddtc

#endif // DDTC_TESTING_CHECKEROPTIONS_H
