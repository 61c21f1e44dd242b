// RUN: ddt-opt %s --ddt-alignment-prologues --ddt-stair-balancing --split-input-file | FileCheck %s
// RUN: ddt-opt %s --ddt-alignment-prologues=max-point-runs=1 --ddt-stair-balancing --split-input-file | FileCheck %s --check-prefix=UNITS

// Strided nests need no work units: each thread maps its own chunk.
// CHECK-LABEL: ddt.define @strided
// CHECK: attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64}
// CHECK-NOT: units
// UNITS-LABEL: ddt.define @strided
// UNITS: attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64}
ddt.define @strided {
  ddt.layout size 80, lb 0, extent 240 {
    ddt.segment at 0 dims [10] strides [24] runs [0] lengths [8]
  }
}

// -----

// A lower triangle of 4x4 doubles: columns of 32, 24, 16 and 8 bytes. Four
// runs per instance are few enough for the strided family (a record). In
// the units family (max-point-runs=1) each is one work unit, all shorter
// than a unit of 32 lanes x 4 chunks of 16 bytes = 2 KiB.
// CHECK-LABEL: ddt.define @small_triangle
// CHECK: attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64}
// CHECK-NOT: units
// UNITS-LABEL: ddt.define @small_triangle
// UNITS: family = #ddt.family<units>
// UNITS-SAME: unit_bytes = 2048
// UNITS-SAME: units = array<i64: 0, 0, 32, 1, 32, 40, 24, 1, 56, 80, 16, 1, 72, 120, 8, 1>
ddt.define @small_triangle {
  ddt.layout size 80, lb 0, extent 128 {
    ddt.segment at 0 dims [] strides [] runs [0, 40, 80, 120] lengths [32, 24, 16, 8]
  }
}

// -----

// Columns of 2560 and 1000 bytes (16-byte aligned), in the units family: cut
// into units of at most 2 KiB, so the long column is spread over two warps
// like the short one.
// CHECK-LABEL: ddt.define @long_columns
// CHECK: family = #ddt.family<strided>
// UNITS-LABEL: ddt.define @long_columns
// UNITS: family = #ddt.family<units>
// UNITS-SAME: unit_bytes = 2048
// UNITS-SAME: units = array<i64: 0, 0, 2048, 1, 2048, 2048, 512, 1, 2560, 4096, 992, 1, 3552, 5088, 8, 0>
ddt.define @long_columns {
  ddt.layout size 3560, lb 0, extent 5112 {
    ddt.segment at 0 dims [] strides [] runs [0, 4096] lengths [2560, 1000]
  }
}

// -----

// Seventeen runs per point, one more than the strided family takes: units.
// CHECK-LABEL: ddt.define @seventeen_runs
// CHECK: family = #ddt.family<units>
// CHECK-SAME: units = array<i64: 0, 0, 8, 1, 8, 16, 8, 1,
ddt.define @seventeen_runs {
  ddt.layout size 136, lb 0, extent 272 {
    ddt.segment at 0 dims [] strides [] runs [0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256] lengths [8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8]
  }
}

// -----

// Sixteen runs of bytes: a strided nest of records.
// CHECK-LABEL: ddt.define @sixteen_runs
// CHECK: family = #ddt.family<strided>
ddt.define @sixteen_runs {
  ddt.layout size 128, lb 0, extent 256 {
    ddt.segment at 0 dims [] strides [] runs [1, 17, 33, 49, 65, 81, 97, 113, 129, 145, 161, 177, 193, 209, 225, 241] lengths [8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8]
  }
}

// -----

// Sixteen runs of doubles (eight or more, of words): units.
// CHECK-LABEL: ddt.define @sixteen_word_runs
// CHECK: family = #ddt.family<units>
ddt.define @sixteen_word_runs {
  ddt.layout size 128, lb 0, extent 256 {
    ddt.segment at 0 dims [] strides [] runs [0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240] lengths [8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8]
  }
}
