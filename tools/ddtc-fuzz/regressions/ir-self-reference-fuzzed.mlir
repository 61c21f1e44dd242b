// Found by ddtc-fuzz: an op that uses its own result sent the dialect
// verifier into endless recursion (a segfault). The verifier now leaves
// such IR to the dominance check, which reports it.
// RUN: ddt-opt %s --ddt-normalize --split-input-file | FileCheck %s
// RUN: ddt-opt %s --ddt-normalize --split-input
// A vect-file | ddt-opt --split-input-file | FileCheck %s

// A vector is one strided nest.
// CHECK-LABEL: ddt.define @vector
// CHECK-NEXT: ddt.layout size 48, lb 0, extent 96 {
// CHECK-NEXT: ddt.segment at 0 dims [3] strides [40] runs [0] lengths [16]
// CHECK-NOT: ddt.vector
ddt.define @vector {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.vector 3, 2, 5, %1
  ddt.yield %1
}

