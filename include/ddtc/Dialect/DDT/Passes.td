//===- Passes.td - Passes of the ddt dialect ---------------*- tablegen -*-===//

#ifndef DDT_PASSES_TD
#define DDT_PASSES_TD

include "mlir/Pass/PassBase.td"

def Normalize : Pass<"ddt-normalize", "::mlir::ModuleOp"> {
  let summary = "Lower constructor ops to the canonical layout";
  let description = [{
    Replaces the constructor ops of every definition by its canonical layout:
    strided nests of run tables with explicit byte offsets and the size, lb
    and extent of one instance. Regular constructors (contiguous, vector,
    hvector, subarray, darray dimensions) become nest dimensions; irregular
    ones ((h)indexed, struct) become run tables. Resized and dup leave the
    runs alone. Empty blocks are dropped, touching runs merge, count-1
    dimensions vanish and dimensions that continue a run fold into it.

    It runs on the module because a `ddt.ref` names another definition: the
    tree of each definition is built once, references resolved to the trees
    of earlier definitions, before any body is replaced.

    ```mlir
    // before
    ddt.define @face {
      %0 = ddt.primitive MPI_DOUBLE
      %1 = ddt.subarray [8, 8, 8], [6, 6, 1], [1, 1, 0], C, %0
      ddt.yield %1
    }
    // after
    ddt.define @face {
      ddt.layout size 288, lb 0, extent 4096 {
        ddt.segment at 576 dims [6, 6] strides [512, 64] runs [0] lengths [8]
      }
    }
    ```
  }];
}

def VectorDetection : Pass<"ddt-vector-detection", "::ddtc::ddt::DefineOp"> {
  let summary = "Turn regular run tables and segment sequences into dimensions";
  let description = [{
    Finds regularity that irregular constructors hide: a run table made of
    equal groups at a constant step becomes one more (inner) dimension over
    a group, repeatedly (so a table of equal runs at a constant stride becomes
    a strided nest, and a 2-d grid two dimensions); consecutive segments that
    are the same nest at a constant step become one segment with one more
    (outer) dimension. Contiguous dimensions then merge.

    ```mlir
    // before: indexed([2, 2, 2, 2], [0, 5, 10, 15], MPI_DOUBLE)
    ddt.segment at 0 dims [] strides [] runs [0, 40, 80, 120] lengths [16, 16, 16, 16]
    // after
    ddt.segment at 0 dims [4] strides [40] runs [0] lengths [16]
    ```

    Tables whose runs differ in length or step (a triangle) are left alone.
  }];
}

def AlignmentPrologues
    : Pass<"ddt-alignment-prologues", "::ddtc::ddt::DefineOp"> {
  let summary = "Prove the widest safe access and split unaligned runs";
  let description = [{
    Sets `width`, the widest access (16, 8, 4, 2 or 1 bytes) that the
    layout allows for the bulk of its bytes, assuming buffers aligned to 16
    bytes (the launcher checks and falls back to width 1). When every offset,
    stride and run length is a multiple of the width, every access is wide.
    When only the distance between each run's source and packed positions
    is, runs are split into a prologue up to the first aligned byte, a wide
    body and an epilogue (`units`, with no length limit yet);
    `needs_byte_path` records that some bytes need narrow accesses.

    Pieces are listed only for a layout the strided family cannot move: one
    with a segment of more than `max-point-runs` runs per nest point (16 at
    most, the default); and for records of 8 or more runs of 4- or 8-byte
    words whose instance has at most 2^16 runs, which the units kernels
    move faster. A record's few fields stay a strided nest whose kernels
    search the point's runs.

    ```mlir
    // hindexed([20, 44], [16, 52], MPI_CHAR) with max-point-runs=1
    ddt.layout size 64, lb 16, extent 80 attributes {needs_byte_path = true,
        units = array<i64: 0, 16, 16, 1,  16, 32, 4, 0,
                           20, 52, 12, 0,  32, 64, 32, 1>, width = 16}
    ```
  }];
  let options = [
    Option<"maxPointRuns", "max-point-runs", "int64_t",
           /*default=*/"::ddtc::kMaxPointRuns",
           "The most runs per nest point the strided family takes (1 to 16; "
           "1 puts every record in the units family)">
  ];
}

def StairBalancing : Pass<"ddt-stair-balancing", "::ddtc::ddt::DefineOp"> {
  let summary = "Cut irregular runs into work units of equal size";
  let description = [{
    Picks the kernel family. A layout of strided nests (of at most 16 runs
    per nest point, for which alignment prologues listed no pieces) needs no
    table: each thread maps its chunk of the packed stream with div/mod
    (`family = #ddt.family<strided>`). Anything else gets the generic
    kernel: the pieces left by alignment prologues are cut into work units of
    at most `unit_bytes` (32 lanes x width x 4 chunks), one warp each (or,
    where they average under 256 bytes, a 16-byte chunk a thread), so a
    long run is spread over many warps and no warp waits while another walks
    a long column (the stair shape of a triangular matrix).

    ```mlir
    // a lower triangle of 4x4 doubles: runs of 32, 24, 16 and 8 bytes
    ddt.layout ... {family = #ddt.family<units>, unit_bytes = 1024,
        units = array<i64: 0, 0, 32, 1, 32, 40, 24, 1, ...>}
    ```
  }];
}

def TransposeTiles : Pass<"ddt-transpose-tiles", "::ddtc::ddt::DefineOp"> {
  let summary = "Move transposing strided nests through shared-memory tiles";
  let description = [{
    In a strided plan of one segment whose run is one element of at most 16
    bytes, moved with aligned accesses: when the innermost dimension (the
    one consecutive in the packed stream) steps far in memory while another
    dimension of 4 or more elements steps 1 to 4 elements, the kernels move
    32 x 32 tiles of elements through shared memory, reading and writing
    each side along the dimension that is close together
    (`tile_dim`). Chosen when that at least doubles the share of every
    32-byte sector the scattered side uses; see docs/Compiler.md,
    "Transpose tiles".

    ```mlir
    // the columns of a 64 x 64 matrix of doubles
    ddt.layout size 32768, lb 0, extent 32768 attributes {family =
        #ddt.family<strided>, needs_byte_path = false, tile_dim = 0 : i64,
        width = 8 : i64} {
      ddt.segment at 0 dims [64, 64] strides [8, 512] runs [0] lengths [8]
    }
    ```
  }];
}

#endif // DDT_PASSES_TD
