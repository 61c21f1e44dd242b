//===- CheckerOptions.h - Options shared by the differential checkers -*- C++ -*-===//
//
// ddt-mpi-check and ddt-emu-check both check random types (--random, --seed,
// --first, --max-depth) or the bindings of a spec file (-t, --count,
// --max-span) and print progress with -v: one parser for those options.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TESTING_CHECKEROPTIONS_H
#define DDTC_TESTING_CHECKEROPTIONS_H

#include <cstdint>
#include <string>

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

/// A whole decimal, hexadecimal (0x) or octal (0) 64-bit integer.
bool parseInt64(const char *text, int64_t &out);

} // namespace ddtc

#endif // DDTC_TESTING_CHECKEROPTIONS_H
