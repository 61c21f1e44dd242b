//===- HeaderEmitter.h - A self-contained C header of kernels -*- C++ -*-===//
//
// Writes the C header of `ddtc --emit=header`: for each datatype, its pack
// and unpack kernels as an embedded cubin and PTX, and host functions that
// load them through the CUDA driver API and launch them. The header is
// compiled by the user's C or C++ compiler and needs only libcuda at run
// time: the launch computation of computeLaunch (grid, block, the parameter
// struct) is written out in C, with every value that depends only on the
// plan (sizes, strides, offsets, magic divisors) as a constant.
// See docs/Compiler.md, "The generated header".
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_HEADEREMITTER_H
#define DDTC_TARGET_CUDA_HEADEREMITTER_H

#include "ddtc/Core/KernelPlan.h"

#include <string>
#include <vector>

namespace ddtc {

/// One datatype of a generated header.
struct HeaderType {
  /// The binding's name and the type as a spec expression (for comments).
  std::string name, description;
  /// The C identifier the header's names start with: <prefix>_pack,
  /// <prefix>_unpack, <prefix>_params, ... It must be the prefix the
  /// kernels were emitted with (emitCUDA), since the header looks them up
  /// by name.
  std::string prefix;
  KernelPlan plan;
  /// MPI_Type_get_true_extent of the type (the plan knows size, lb and
  /// extent).
  int64_t trueLb = 0, trueExtent = 0;
  /// The kernels of emitCUDA(plan, prefix) compiled for HeaderOptions::arch
  /// (an ELF cubin) and for HeaderOptions::ptxArch (PTX text).
  std::string cubin, ptx;
};

struct HeaderOptions {
  /// The include-guard macro (a C identifier).
  std::string guard;
  /// Named in the opening comment: the ddtc version, the input file and
  /// the architectures of the cubin ("sm_90") and the PTX ("compute_90").
  std::string version, sourceName, arch, ptxArch;
};

/// The C (C99 and C++11) of one type's launch computation: the struct
/// `<prefix>_params`, member for member the kernels' parameter struct, and
///
///   static inline CUresult <prefix>_launch_config(long long count,
///       long long lo, long long hi, int max_ctas, unsigned int *grid,
///       unsigned int *block, <prefix>_params *params);
///
/// which computes what computeLaunch(plan, count, lo, hi, max_ctas) does
/// for the pack kernel: the same grid (0 when nothing moves), block and
/// parameter words; and `<prefix>_unpack_launch_config`, of the same
/// arguments, the unpack kernel's launch (the same parameters, its own
/// grid). They return CUDA_ERROR_INVALID_VALUE where computeLaunch sets an
/// error, and for a negative max_ctas. For the Units family it reads the host copy of
/// the unit table, `<prefix>_units`, which the caller must define first.
/// Needs <cuda.h> (for CUresult) and nothing else.
std::string emitHostLaunchC(const KernelPlan &plan, const std::string &prefix);

/// The whole header for `types`. Returns false and sets `error` when a type
/// cannot be served (an invalid prefix or block size, no cubin or PTX, two
/// names of the header that collide, as with two types of one prefix).
bool emitHeader(const std::vector<HeaderType> &types,
                const HeaderOptions &options, std::string &out,
                std::string &error);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_HEADEREMITTER_H
