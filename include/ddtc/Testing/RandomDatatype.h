//===- RandomDatatype.h - Random datatype trees for testing -----*- C++ -*-===//
//
// Generates random, valid datatype trees that exercise every constructor and
// every predefined type, for differential tests against an MPI library.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TESTING_RANDOMDATATYPE_H
#define DDTC_TESTING_RANDOMDATATYPE_H

#include "ddtc/Core/Datatype.h"

#include <cstdint>
#include <random>

namespace ddtc {

struct RandomDatatypeOptions {
  /// Constructor levels above the primitives (1 to 5 make sense).
  unsigned maxDepth = 5;
  /// Upper bound of the instance count drawn for each case (at least 2).
  int64_t maxCount = 4;
  /// Bounds for `count` instances: the bytes spanned (touchedSpan), the
  /// packed bytes, and the number of primitive pieces (a bound on runs).
  int64_t maxSpan = int64_t(4) << 20;
  int64_t maxPackedSize = int64_t(4) << 20;
  int64_t maxPieces = 200000;
  /// Give up after this many rejected attempts and return a primitive.
  unsigned maxAttempts = 1000;
  /// One case in this many (0: none) is a transposing layout
  /// (generateTransposeDatatype) instead of a random tree, so that every
  /// random check meets the transpose tile kernels.
  unsigned transposeEvery = 8;

  /// Constructs to leave out because an MPI library is known to get them
  /// wrong (see ddt-mpi-check --help); all are valid MPI.
  /// No darray of an old type of size 0 (Open MPI 4.1 rejects it).
  bool avoidEmptyDarrayOldType = false;
  /// No struct member of size 0 (when its bounds reach beyond the other
  /// members' data, Open MPI 4.1 packs count > 1 instances with the wrong
  /// stride, although MPI_Type_get_extent is right).
  bool avoidEmptyStructMember = false;
  /// No (h)vector whose stride is exactly -1 byte (Open MPI 4.1 reads -1 as
  /// "the old type's extent").
  bool avoidStrideMinusOne = false;
};

/// One generated test case: a type and an instance count > 1. Both `count`
/// and 1 instance are within the bounds of the options.
struct RandomDatatypeCase {
  TypeRef type;
  int64_t count = 1;
  /// How many candidate trees were rejected before this one.
  unsigned rejected = 0;
};

/// Draws one case from `rng`. The result depends only on the state of `rng`
/// and the options, on every platform.
RandomDatatypeCase generateRandomDatatype(std::mt19937_64 &rng,
                                          const RandomDatatypeOptions &opts);

/// A transposing layout: the columns (every one or every other one) of a
/// row-major matrix of elements of 1 to 16 bytes, with counts that are
/// rarely multiples of a tile, sometimes with a further dimension between
/// the columns and the rows or outside them; null when it would leave the
/// bounds of `opts`.
TypeRef generateTransposeDatatype(std::mt19937_64 &rng,
                                  const RandomDatatypeOptions &opts);

/// The seed of the generator for case `index` of a run seeded with `seed`, so
/// any case can be replayed alone.
uint64_t randomCaseSeed(uint64_t seed, uint64_t index);

/// An upper bound on the number of primitive pieces (maximal runs of one
/// predefined type) of one instance, saturating at INT64_MAX.
int64_t countPrimitivePieces(const Datatype &type);

} // namespace ddtc

#endif // DDTC_TESTING_RANDOMDATATYPE_H
