//===- TileKernel.h - Shared-memory tile kernels for transposes -*- C++ -*-===//
//
// The kernels of a strided plan with transpose tiles (KernelPlan::tileDim):
// a block moves a kTileElems x kTileElems tile of elements, reading it with
// lanes along the side that is consecutive in its source and writing it
// with lanes along the side that is consecutive in its destination, through
// shared memory. See docs/Compiler.md, "Transpose tiles".
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_TILEKERNEL_H
#define DDTC_TARGET_CUDA_TILEKERNEL_H

#include "ddtc/Core/KernelPlan.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ddtc {

/// How the tiles of a plan with tileDim >= 0 cover one instance. Its single
/// segment's dimension `a` (tileDim) and the innermost one `b` span the
/// tiles; every other dimension and the instance index select a tile plane.
/// Tiles are numbered (instance, dims before a, tile along a, dims between
/// a and b, tile along b), the last fastest: the tiles of one band (one
/// instance, outer index and tile along a) cover consecutive packed bytes.
struct TileGeometry {
  int64_t elem = 0; ///< bytes of an element (the run)
  int a = 0, b = 0; ///< the tile's dimensions
  /// Packed bytes one step of each dimension moves.
  std::vector<int64_t> packedStride;
  int64_t tilesA = 0, tilesB = 0; ///< tiles along a and b (edges included)
  int64_t outerPoints = 1;        ///< index points of the dims before a
  int64_t rowBytes = 0;           ///< packed bytes of one outer point
  int64_t tilesPerBand = 0;       ///< tiles of one band
};

/// The geometry of `plan`, which must have tileDim >= 0.
TileGeometry getTileGeometry(const KernelPlan &plan);

/// The band holding packed byte q (0 <= q < count * size).
int64_t getTileBand(const TileGeometry &g, int64_t size, int64_t q);

/// Appends the pack kernel `<prefix>_pack` (or, without `pack`, the unpack
/// kernel `<prefix>_unpack`) of a tile plan, after the helpers and the
/// parameter struct `<prefix>_params` (members as describeParams lists
/// them).
void emitTileKernel(const KernelPlan &plan, const std::string &prefix,
                    bool pack, std::ostream &os);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_TILEKERNEL_H
