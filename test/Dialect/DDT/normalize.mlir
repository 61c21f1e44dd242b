// RUN: ddt-opt %s --ddt-normalize --split-input-file | FileCheck %s
// RUN: ddt-opt %s --ddt-normalize --split-input-file | ddt-opt --split-input-file | FileCheck %s

// A vector is one strided nest.
// CHECK-LABEL: ddt.define @vector
// CHECK-NEXT: ddt.layout size 48, lb 0, extent 96 {
// CHECK-NEXT: ddt.segment at 0 dims [3] strides [40] runs [0] lengths [16]
// CHECK-NOT: ddt.vector
ddt.define @vector {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.vector 3, 2, 5, %0
  ddt.yield %1
}

// -----

// A halo face of an 8^3 cube of doubles: two dimensions of single doubles.
// CHECK-LABEL: ddt.define @face
// CHECK: ddt.layout size 288, lb 0, extent 4096
// CHECK-NEXT: ddt.segment at 576 dims [6, 6] strides [512, 64] runs [0] lengths [8]
ddt.define @face {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.subarray [8, 8, 8], [6, 6, 1], [1, 1, 0], C, %0
  ddt.yield %1
}

// -----

// Whole rows fold into one run, and a contiguous of a contiguous is a run.
// CHECK-LABEL: ddt.define @folded
// CHECK: ddt.segment at 192 dims [] strides [] runs [0] lengths [384]
ddt.define @folded {
  %0 = ddt.primitive MPI_FLOAT
  %1 = ddt.subarray [4, 6, 8], [2, 6, 8], [1, 0, 0], C, %0
  ddt.yield %1
}

// -----

// Irregular blocks become one table; the empty block is dropped and touching
// blocks merge (2 ints at 8 and 1 at 16 are one 12-byte run).
// CHECK-LABEL: ddt.define @table
// CHECK: ddt.layout size 24, lb -16, extent 36
// CHECK-NEXT: ddt.segment at -16 dims [] strides [] runs [0, 24] lengths [12, 12]
ddt.define @table {
  %0 = ddt.primitive MPI_INT
  %1 = ddt.indexed [3, 0, 2, 1], [-4, 100, 2, 4], %0
  ddt.yield %1
}

// -----

// A struct's members follow in pack order and touching ones merge: the
// double and the int are one run, the pair type keeps its hole (short at 16,
// int at 20), and the hvector of three adjacent chars folds into a run that
// continues the int. Resized changes the extent only.
// CHECK-LABEL: ddt.define @record
// CHECK: ddt.layout size 21, lb -8, extent 64
// CHECK-NEXT: ddt.segment at 0 dims [] strides [] runs [0, 16, 20] lengths [12, 2, 7]
// CHECK-NEXT: }
ddt.define @record {
  %d = ddt.primitive MPI_DOUBLE
  %i = ddt.primitive MPI_INT
  %p = ddt.primitive MPI_SHORT_INT
  %c = ddt.primitive MPI_CHAR
  %v = ddt.hvector 3, 1, 1, %c
  %s = ddt.struct [1, 1, 1, 1], [0, 8, 16, 24], (%d, %i, %p, %v)
  %r = ddt.resized -8, 64, %s
  ddt.yield %r
}

// -----

// Nothing to pack: no segment.
// CHECK-LABEL: ddt.define @empty
// CHECK: ddt.layout size 0, lb 0, extent 0 {
// CHECK-NEXT: }
ddt.define @empty {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.contiguous 0, %0
  ddt.yield %1
}

// -----

// A layout is left as it is.
// CHECK-LABEL: ddt.define @done
// CHECK-NEXT: ddt.layout size 8, lb 0, extent 8 {
// CHECK-NEXT: ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
ddt.define @done {
  ddt.layout size 8, lb 0, extent 8 {
    ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
  }
}

// -----

// A reference is resolved to the tree of the definition it names (built
// once), before any body is replaced.
// CHECK-LABEL: ddt.define @row
// CHECK-NEXT: ddt.layout size 32, lb 0, extent 32 {
// CHECK-LABEL: ddt.define @rows
// CHECK-NEXT: ddt.layout size 64, lb 0, extent 96 {
// CHECK-NEXT: ddt.segment at 0 dims [2] strides [64] runs [0] lengths [32]
// CHECK-NOT: ddt.ref
ddt.define @row {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.contiguous 4, %0
  ddt.yield %1
}
ddt.define @rows {
  %0 = ddt.ref @row
  %1 = ddt.vector 2, 1, 2, %0
  ddt.yield %1
}
