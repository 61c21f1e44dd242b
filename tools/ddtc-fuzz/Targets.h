//===- Targets.h - What the fuzzer runs on one input ------------*- C++ -*-===//
//
// The three kinds of input and what each goes through, in process (the
// sandbox isolates it): a spec is parsed, printed back, planned, emitted,
// launched (computeLaunch), packed and unpacked by the generic kernels on
// the CPU (small types) and built into IR that the passes run on; IR is
// parsed, verified, read back into trees and run through each pass; a C API
// input is a spec with a count, a range and a CTA cap for the calls of
// ddtc.h (no GPU: the calls stop after their checks).
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_FUZZ_TARGETS_H
#define DDTC_TOOLS_DDTC_FUZZ_TARGETS_H

#include <cstdint>
#include <string>

namespace ddtc::fuzz {

enum class InputKind { Spec, IR, CAPI };

const char *kindName(InputKind kind);
/// The file extension inputs of this kind are saved with (no dot).
const char *kindExtension(InputKind kind);

/// Runs one input; returns whether its parser accepted it. A wrong result
/// (a printed spec that does not parse back, a status that contradicts the
/// arguments, a layout whose runs differ from the reference) is printed to
/// stderr and ends the process with exit status 3.
bool runInput(InputKind kind, const std::string &text);

/// The first line of a C API input: the count, range and CTA cap its calls
/// use (the rest of the input is spec text).
std::string capiHeader(int64_t count, int64_t lo, int64_t hi, int64_t maxCtas);

/// Whether IR text uses a value on or before the line that defines it (an
/// operand naming its own op's result, or a later one).
bool hasSelfReference(const std::string &text);

} // namespace ddtc::fuzz

#endif // DDTC_TOOLS_DDTC_FUZZ_TARGETS_H
