// RUN: ddt-opt %s --ddt-normalize --ddt-vector-detection --split-input-file -verify-diagnostics | FileCheck %s

// indexed with equal blocks at a constant step is a vector.
// CHECK-LABEL: ddt.define @regular_indexed
// CHECK: ddt.segment at 0 dims [4] strides [40] runs [0] lengths [16]
ddt.define @regular_indexed {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.indexed [2, 2, 2, 2], [0, 5, 10, 15], %0
  ddt.yield %1
}

// -----

// hindexed_block in a 2-d grid (pairs 8 apart, pairs 100 apart): a 2-d nest.
// CHECK-LABEL: ddt.define @grid
// CHECK: ddt.segment at 0 dims [3, 2] strides [100, 8] runs [0] lengths [4]
ddt.define @grid {
  %0 = ddt.primitive MPI_INT
  %1 = ddt.hindexed_block 1, [0, 8, 100, 108, 200, 208], %0
  ddt.yield %1
}

// -----

// A struct of the same vector at a constant step: the members become an
// outer dimension.
// CHECK-LABEL: ddt.define @struct_of_vectors
// CHECK: ddt.segment at 0 dims [3, 2] strides [64, 16] runs [0] lengths [4]
// CHECK-NOT: ddt.segment
ddt.define @struct_of_vectors {
  %0 = ddt.primitive MPI_FLOAT
  %1 = ddt.vector 2, 1, 4, %0
  %2 = ddt.struct [1, 1, 1], [0, 64, 128], (%1, %1, %1)
  ddt.yield %2
}

// -----

// Equal blocks right after each other are one contiguous run (normalization
// already merges them; detection keeps it so).
// CHECK-LABEL: ddt.define @adjacent
// CHECK: ddt.segment at 8 dims [] strides [] runs [0] lengths [24]
ddt.define @adjacent {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.indexed_block 1, [1, 2, 3], %0
  ddt.yield %1
}

// -----

// Not rewritten: a triangle's columns differ in length.
// CHECK-LABEL: ddt.define @triangle
// CHECK: ddt.segment at 0 dims [] strides [] runs [0, 40, 80, 120] lengths [32, 24, 16, 8]
ddt.define @triangle {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.indexed [4, 3, 2, 1], [0, 5, 10, 15], %0
  ddt.yield %1
}

// -----

// Not rewritten: equal blocks at steps that differ.
// CHECK-LABEL: ddt.define @uneven
// CHECK: ddt.segment at 0 dims [] strides [] runs [0, 16, 48] lengths [8, 8, 8]
ddt.define @uneven {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.indexed_block 1, [0, 2, 6], %0
  ddt.yield %1
}

// -----

// Not rewritten: a group that repeats with a different member length.
// CHECK-LABEL: ddt.define @mixed
// CHECK: ddt.segment at 0 dims [] strides [] runs [0, 8, 100, 108] lengths [4, 4, 4, 8]
ddt.define @mixed {
  %0 = ddt.primitive MPI_CHAR
  %1 = ddt.hindexed [4, 4, 4, 8], [0, 8, 100, 108], %0
  ddt.yield %1
}

// -----

ddt.define @planned {
  // expected-error @+1 {{ddt-vector-detection runs before kernel planning; this layout already has plan attributes}}
  ddt.layout size 8, lb 0, extent 8 attributes {width = 8 : i64} {
    ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
  }
}
