// RUN: ddt-opt %s | ddt-opt | FileCheck %s
// RUN: ddt-opt %s --mlir-print-op-generic | ddt-opt | FileCheck %s

// CHECK-LABEL: ddt.define @every_constructor
ddt.define @every_constructor {
  // CHECK: %[[D:.*]] = ddt.primitive MPI_DOUBLE
  %d = ddt.primitive MPI_DOUBLE
  // C spellings parse to the MPI name.
  // CHECK: %[[I:.*]] = ddt.primitive MPI_INT64_T
  %i = ddt.primitive int64_t
  // CHECK: %[[P:.*]] = ddt.primitive MPI_DOUBLE_INT
  %p = ddt.primitive MPI_DOUBLE_INT
  // CHECK: %[[C:.*]] = ddt.contiguous 4, %[[D]]
  %c = ddt.contiguous 4, %d
  // CHECK: %[[V:.*]] = ddt.vector 3, 2, -5, %[[C]]
  %v = ddt.vector 3, 2, -5, %c
  // CHECK: %[[HV:.*]] = ddt.hvector 2, 1, 1024, %[[V]]
  %hv = ddt.hvector 2, 1, 1024, %v
  // CHECK: %[[X:.*]] = ddt.indexed [1, 0, 3], [0, 7, -4], %[[I]]
  %x = ddt.indexed [1, 0, 3], [0, 7, -4], %i
  // CHECK: %[[HX:.*]] = ddt.hindexed [2], [-16], %[[X]]
  %hx = ddt.hindexed [2], [-16], %x
  // CHECK: %[[IB:.*]] = ddt.indexed_block 2, [0, 9], %[[P]]
  %ib = ddt.indexed_block 2, [0, 9], %p
  // CHECK: %[[HIB:.*]] = ddt.hindexed_block 1, [], %[[IB]]
  %hib = ddt.hindexed_block 1, [], %ib
  // CHECK: %[[S:.*]] = ddt.struct [1, 2, 1], [0, 8, 64], (%[[D]], %[[HV]], %[[HIB]])
  %s = ddt.struct [1, 2, 1], [0, 8, 64], (%d, %hv, %hib)
  // CHECK: %[[E:.*]] = ddt.struct [], [], ()
  %e = ddt.struct [], [], ()
  // CHECK: %[[SA:.*]] = ddt.subarray [6, 5, 4], [1, 5, 2], [5, 0, 1], Fortran, %[[D]]
  %sa = ddt.subarray [6, 5, 4], [1, 5, 2], [5, 0, 1], Fortran, %d
  // CHECK: %[[DA:.*]] = ddt.darray 6, 5, [8, 9, 10], [block, cyclic, none], [default, 2, default], [2, 3, 1], C, %[[SA]]
  %da = ddt.darray 6, 5, [8, 9, 10], [block, cyclic, none], [default, 2, default], [2, 3, 1], C, %sa
  // CHECK: %[[R:.*]] = ddt.resized -8, 24, %[[DA]]
  %r = ddt.resized -8, 24, %da
  // CHECK: %[[DUP:.*]] = ddt.dup %[[R]]
  %dup = ddt.dup %r
  // CHECK: %[[ALL:.*]] = ddt.struct [1, 1, 1], [0, 0, 0], (%[[DUP]], %[[S]], %[[E]])
  %all = ddt.struct [1, 1, 1], [0, 0, 0], (%dup, %s, %e)
  // CHECK: ddt.yield %[[ALL]]
  ddt.yield %all
}

// CHECK-LABEL: ddt.define @second
ddt.define @second {
  %0 = ddt.primitive MPI_CHAR
  ddt.yield %0
}

// A definition uses an earlier one by name.
// CHECK-LABEL: ddt.define @uses_second
// CHECK-NEXT: %[[REF:.*]] = ddt.ref @second
// CHECK-NEXT: %[[C:.*]] = ddt.contiguous 3, %[[REF]]
// CHECK-NEXT: ddt.yield %[[C]]
ddt.define @uses_second {
  %0 = ddt.ref @second
  %1 = ddt.contiguous 3, %0
  ddt.yield %1
}

// CHECK-LABEL: ddt.define @canonical
// CHECK-NEXT: ddt.layout size 52, lb -8, extent 256 attributes {family = #ddt.family<units>, needs_byte_path = true, unit_bytes = 128 : i64, units = array<i64: 0, 0, 4, 0>, width = 1 : i64} {
// CHECK-NEXT: ddt.segment at 0 dims [2, 3] strides [96, -16] runs [0] lengths [4]
// CHECK-NEXT: ddt.segment at -8 dims [] strides [] runs [0, 20] lengths [8, 20]
ddt.define @canonical {
  ddt.layout size 52, lb -8, extent 256 attributes {family = #ddt.family<units>, needs_byte_path = true, unit_bytes = 128 : i64, units = array<i64: 0, 0, 4, 0>, width = 1 : i64} {
    ddt.segment at 0 dims [2, 3] strides [96, -16] runs [0] lengths [4]
    ddt.segment at -8 dims [] strides [] runs [0, 20] lengths [8, 20]
  }
}
