// RUN: ddt-opt %s --ddt-alignment-prologues --split-input-file -verify-diagnostics | FileCheck %s
// RUN: ddt-opt %s --ddt-alignment-prologues=max-point-runs=1 --split-input-file -verify-diagnostics | FileCheck %s --check-prefix=ONE
// RUN: not ddt-opt %s --ddt-alignment-prologues=max-point-runs=17 --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// Doubles whose offsets, strides and lengths are multiples of 16: width 16,
// every access wide.
// CHECK-LABEL: ddt.define @aligned
// CHECK: ddt.layout size 1024, lb 0, extent 2048 attributes {needs_byte_path = false, width = 16 : i64}
ddt.define @aligned {
  ddt.layout size 1024, lb 0, extent 2048 {
    ddt.segment at 0 dims [32] strides [64] runs [0] lengths [32]
  }
}

// -----

// Runs of 8 bytes every 24: width 8.
// CHECK-LABEL: ddt.define @eight
// CHECK: attributes {needs_byte_path = false, width = 8 : i64}
ddt.define @eight {
  ddt.layout size 80, lb 0, extent 240 {
    ddt.segment at 0 dims [10] strides [24] runs [0] lengths [8]
  }
}

// -----

// Source 16 / packed 0 (20 bytes) and source 52 / packed 20 (44 bytes):
// both sides agree modulo 16. A point of two runs is a record the strided
// family moves: no pieces; its runs are short, so it keeps their own width
// (4), at which no chunk straddles two runs. With max-point-runs=1 it takes
// the units family, and each run splits into a prologue, a 16-byte-aligned
// body and an epilogue (quadruples: packed, source, length, wide).
// CHECK-LABEL: ddt.define @prologue
// CHECK: attributes {needs_byte_path = false, width = 4 : i64}
// CHECK-NOT: units
// ONE-LABEL: ddt.define @prologue
// ONE: attributes {needs_byte_path = true,
// ONE-SAME: units = array<i64: 0, 16, 16, 1, 16, 32, 4, 0, 20, 52, 12, 0, 32, 64, 32, 1>
// ONE-SAME: width = 16 : i64}
// BAD: error: ddt-alignment-prologues: max-point-runs must be 1 to 16, not 17
ddt.define @prologue {
  ddt.layout size 64, lb 16, extent 80 {
    ddt.segment at 16 dims [] strides [] runs [0, 36] lengths [20, 44]
  }
}

// -----

// The same with a second run of 300 bytes: long runs take the 16-byte width
// in the strided family too, the chunk across the two runs by the byte path.
// CHECK-LABEL: ddt.define @prologue_long
// CHECK: attributes {needs_byte_path = true, width = 16 : i64}
// CHECK-NOT: units
ddt.define @prologue_long {
  ddt.layout size 320, lb 16, extent 336 {
    ddt.segment at 16 dims [] strides [] runs [0, 36] lengths [20, 300]
  }
}

// -----

// Not widened: the source is 4 bytes off wherever the packed side is
// aligned (runs at 4 and 132), so 4 bytes is the widest access.
// CHECK-LABEL: ddt.define @offset
// CHECK: attributes {needs_byte_path = false, width = 4 : i64}
ddt.define @offset {
  ddt.layout size 128, lb 4, extent 192 {
    ddt.segment at 4 dims [2] strides [128] runs [0] lengths [64]
  }
}

// -----

// Not widened: 3-byte runs at odd offsets allow single bytes only.
// CHECK-LABEL: ddt.define @bytes
// CHECK: attributes {needs_byte_path = false, width = 1 : i64}
// CHECK-NOT: units
ddt.define @bytes {
  ddt.layout size 9, lb 1, extent 13 {
    ddt.segment at 1 dims [3] strides [5] runs [0] lengths [3]
  }
}

// -----

// expected-error @+1 {{ddt-alignment-prologues needs a ddt.layout: run ddt-normalize first}}
ddt.define @constructors {
  %0 = ddt.primitive MPI_DOUBLE
  ddt.yield %0
}

// -----

// A second run would drop the kernel family that stair balancing chose.
ddt.define @planned {
  // expected-error @+1 {{ddt-alignment-prologues runs once, on a layout without plan attributes; this layout already has them}}
  ddt.layout size 8, lb 0, extent 8 attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64} {
    ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
  }
}
