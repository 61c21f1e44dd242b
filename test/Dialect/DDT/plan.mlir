// RUN: ddt-opt %s --ddt-plan | FileCheck %s
// RUN: ddt-opt %s --ddt-plan=stop-after=alignment-prologues | FileCheck %s --check-prefix=ALIGNED
// RUN: ddt-opt %s --ddt-plan=stop-after=none | FileCheck %s --check-prefix=NONE

// The planning pipeline, the passes in order: here a column of doubles and
// a definition that uses it by reference.

// CHECK-LABEL: ddt.define @col
// CHECK-NEXT: ddt.layout size 48, lb 0, extent 96 attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64}
// CHECK-NEXT: ddt.segment at 0 dims [3] strides [40] runs [0] lengths [16]
// CHECK-LABEL: ddt.define @cols
// CHECK-NEXT: ddt.layout size 96, lb 0, extent 192 attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64}
// CHECK-NEXT: ddt.segment at 0 dims [2, 3] strides [96, 40] runs [0] lengths [16]

// ALIGNED-LABEL: ddt.define @col
// ALIGNED-NEXT: ddt.layout size 48, lb 0, extent 96 attributes {needs_byte_path = false, width = 8 : i64}
// ALIGNED-NOT: family

// NONE: ddt.define @col
// NONE-NEXT: ddt.primitive
ddt.define @col {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.vector 3, 2, 5, %0
  ddt.yield %1
}
ddt.define @cols {
  %0 = ddt.ref @col
  %1 = ddt.contiguous 2, %0
  ddt.yield %1
}
