//===- YaksaApi.h - The Yaksa entry points the benchmark calls -*- C++ -*-===//
//
// MPICH's datatype engine (Yaksa) is a peer in the benchmark, loaded at run
// time from a path so ddtc builds and tests without it. Its header is not
// needed: the functions and the handle values below are those of Yaksa's
// public yaksa.h (release 0.4), declared here as a table of pointers. The
// table is also what the unit tests fill with fakes.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_BENCH_YAKSAAPI_H
#define DDTC_TOOLS_DDTC_BENCH_YAKSAAPI_H

#include <cstdint>
#include <string>

namespace ddtc::yaksa {

using Type = uint64_t; ///< yaksa_type_t
using Op = uint64_t;   ///< yaksa_op_t
using Info = void *;   ///< yaksa_info_t
using Request = uint64_t;

/// Values of yaksa.h.
constexpr int kSuccess = 0;
constexpr int kErrNotSupported = 3;
constexpr Op kOpReplace = 10;
constexpr Type kTypeNull = 0;
constexpr int kOrderC = 0, kOrderFortran = 1; ///< yaksa_subarray_order_e

/// Yaksa's builtin type handles (yaksa.h).
namespace builtin {
constexpr Type Bool = 1, Char = 2, SignedChar = 3, UnsignedChar = 4, WChar = 5,
               Int8 = 6, Int16 = 7, Int32 = 8, Int64 = 9, UInt8 = 10,
               UInt16 = 11, UInt32 = 12, UInt64 = 13, Int = 14, Unsigned = 15,
               Short = 16, UnsignedShort = 17, Long = 18, UnsignedLong = 19,
               LongLong = 20, UnsignedLongLong = 21, Byte = 38, Float = 45,
               Double = 46, CComplex = 48, CDoubleComplex = 49, FloatInt = 51,
               DoubleInt = 52, LongInt = 53, TwoInt = 54, ShortInt = 55;
} // namespace builtin

/// The Yaksa functions the benchmark uses, by their C signatures.
struct Api {
  int (*init)(Info info) = nullptr;
  int (*finalize)() = nullptr;
  int (*type_create_contig)(intptr_t count, Type old, Info info,
                            Type *out) = nullptr;
  int (*type_create_vector)(intptr_t count, intptr_t blocklen, intptr_t stride,
                            Type old, Info info, Type *out) = nullptr;
  int (*type_create_hvector)(intptr_t count, intptr_t blocklen, intptr_t stride,
                             Type old, Info info, Type *out) = nullptr;
  int (*type_create_indexed)(intptr_t count, const intptr_t *blocklens,
                             const intptr_t *displs, Type old, Info info,
                             Type *out) = nullptr;
  int (*type_create_hindexed)(intptr_t count, const intptr_t *blocklens,
                              const intptr_t *displs, Type old, Info info,
                              Type *out) = nullptr;
  int (*type_create_indexed_block)(intptr_t count, intptr_t blocklen,
                                   const intptr_t *displs, Type old, Info info,
                                   Type *out) = nullptr;
  int (*type_create_hindexed_block)(intptr_t count, intptr_t blocklen,
                                    const intptr_t *displs, Type old, Info info,
                                    Type *out) = nullptr;
  int (*type_create_struct)(intptr_t count, const intptr_t *blocklens,
                            const intptr_t *displs, const Type *types,
                            Info info, Type *out) = nullptr;
  int (*type_create_subarray)(int ndims, const intptr_t *sizes,
                              const intptr_t *subsizes, const intptr_t *starts,
                              int order, Type old, Info info,
                              Type *out) = nullptr;
  int (*type_create_resized)(Type old, intptr_t lb, intptr_t extent, Info info,
                             Type *out) = nullptr;
  int (*type_create_dup)(Type old, Info info, Type *out) = nullptr;
  int (*type_get_size)(Type type, uintptr_t *size) = nullptr;
  int (*type_get_extent)(Type type, intptr_t *lb, intptr_t *extent) = nullptr;
  int (*type_free)(Type type) = nullptr;
  int (*ipack)(const void *in, uintptr_t incount, Type type, uintptr_t inoffset,
               void *out, uintptr_t maxBytes, uintptr_t *actual, Info info,
               Op op, Request *request) = nullptr;
  int (*iunpack)(const void *in, uintptr_t insize, void *out,
                 uintptr_t outcount, Type type, uintptr_t outoffset,
                 uintptr_t *actual, Info info, Op op,
                 Request *request) = nullptr;
  int (*request_wait)(Request request) = nullptr;
  /// Optional (null when the library predates them): enqueue on a CUDA
  /// stream, passed as a pointer to the cudaStream_t.
  int (*pack_stream)(const void *in, uintptr_t incount, Type type,
                     uintptr_t inoffset, void *out, uintptr_t maxBytes,
                     uintptr_t *actual, Info info, Op op,
                     void *stream) = nullptr;
  int (*unpack_stream)(const void *in, uintptr_t insize, void *out,
                       uintptr_t outcount, Type type, uintptr_t outoffset,
                       uintptr_t *actual, Info info, Op op,
                       void *stream) = nullptr;
  /// True when the library links the CUDA runtime: built with its CUDA
  /// backend. Without it Yaksa takes device pointers for host memory.
  bool hasCuda = false;
};

/// Opens the shared library at `path` and fills `api`. Returns false with
/// `error` naming the library or the missing function. The library stays
/// loaded for the life of the process.
bool loadApi(const std::string &path, Api &api, std::string &error);

/// The library path the benchmark uses: `option` when given, else the
/// DDTC_YAKSA_LIB environment variable, else empty (Yaksa is not run).
std::string libraryPath(const std::string &option);

} // namespace ddtc::yaksa

#endif // DDTC_TOOLS_DDTC_BENCH_YAKSAAPI_H
