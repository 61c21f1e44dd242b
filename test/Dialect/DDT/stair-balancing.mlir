// RUN: ddt-opt %s --ddt-alignment-prologues --ddt-stair-balancing --split-input-file | FileCheck %s

// Strided nests need no work units: each thread maps its own chunk.
// CHECK-LABEL: ddt.define @strided
// CHECK: attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64}
// CHECK-NOT: units
ddt.define @strided {
  ddt.layout size 80, lb 0, extent 240 {
    ddt.segment at 0 dims [10] strides [24] runs [0] lengths [8]
  }
}

// -----

// A lower triangle of 4x4 doubles: columns of 32, 24, 16 and 8 bytes, each
// one work unit (all shorter than a unit of 32 lanes x 8 bytes x 4 = 1 KiB).
// CHECK-LABEL: ddt.define @small_triangle
// CHECK: family = #ddt.family<units>
// CHECK-SAME: unit_bytes = 1024
// CHECK-SAME: units = array<i64: 0, 0, 32, 1, 32, 40, 24, 1, 56, 80, 16, 1, 72, 120, 8, 1>
ddt.define @small_triangle {
  ddt.layout size 80, lb 0, extent 128 {
    ddt.segment at 0 dims [] strides [] runs [0, 40, 80, 120] lengths [32, 24, 16, 8]
  }
}

// -----

// Columns of 2560 and 1000 bytes (16-byte aligned): cut into units of at most
// 2 KiB, so the long column is spread over two warps like the short one.
// CHECK-LABEL: ddt.define @long_columns
// CHECK: family = #ddt.family<units>
// CHECK-SAME: unit_bytes = 2048
// CHECK-SAME: units = array<i64: 0, 0, 2048, 1, 2048, 2048, 512, 1, 2560, 4096, 992, 1, 3552, 5088, 8, 0>
ddt.define @long_columns {
  ddt.layout size 3560, lb 0, extent 5112 {
    ddt.segment at 0 dims [] strides [] runs [0, 4096] lengths [2560, 1000]
  }
}
