// RUN: ddt-opt %s --ddt-transpose-tiles --split-input-file --verify-diagnostics | FileCheck %s

// The columns of a 64 x 64 matrix of doubles: consecutive packed elements
// are a row (512 bytes) apart, dimension 0 steps one element.
// CHECK-LABEL: ddt.define @columns
// CHECK: tile_dim = 0 : i64
ddt.define @columns {
  ddt.layout size 32768, lb 0, extent 32768 attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64} {
    ddt.segment at 0 dims [64, 64] strides [8, 512] runs [0] lengths [8]
  }
}

// -----

// Every other column, counts that are no multiple of a tile, under an
// outer dimension: dimension 1 is the tile's. The innermost dimension uses
// 8 bytes of each 32-byte sector, the tile's 16.
// CHECK-LABEL: ddt.define @every_other
// CHECK: tile_dim = 1 : i64
ddt.define @every_other {
  ddt.layout size 35640, lb 0, extent 210000 attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64} {
    ddt.segment at 0 dims [3, 33, 45] strides [70000, 16, 528] runs [0] lengths [8]
  }
}

// -----

// Every other column of 16-byte elements: both sides use half of each
// sector, a tile would not gain.
// CHECK-LABEL: ddt.define @every_other_16
// CHECK-NOT: tile_dim
ddt.define @every_other_16 {
  ddt.layout size 23760, lb 0, extent 47520 attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 16 : i64} {
    ddt.segment at 0 dims [33, 45] strides [32, 1056] runs [0] lengths [16]
  }
}

// -----

// A dimension between the tile's two (planes of a 3-d array).
// CHECK-LABEL: ddt.define @planes
// CHECK: tile_dim = 0 : i64
ddt.define @planes {
  ddt.layout size 12600, lb 0, extent 12600 attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 4 : i64} {
    ddt.segment at 0 dims [50, 3, 21] strides [4, 4400, 200] runs [0] lengths [4]
  }
}

// -----

// Rows: the innermost dimension is already the close one.
// CHECK-LABEL: ddt.define @rows
// CHECK-NOT: tile_dim
ddt.define @rows {
  ddt.layout size 32768, lb 0, extent 65536 attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64} {
    ddt.segment at 0 dims [64, 64] strides [1024, 16] runs [0] lengths [8]
  }
}

// -----

// The close dimension has 3 elements: fewer than 4, no tile.
// CHECK-LABEL: ddt.define @short_side
// CHECK-NOT: tile_dim
ddt.define @short_side {
  ddt.layout size 1536, lb 0, extent 1536 attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64} {
    ddt.segment at 0 dims [3, 64] strides [8, 512] runs [0] lengths [8]
  }
}

// -----

// Runs of 24 bytes are not one element of at most 16.
// CHECK-LABEL: ddt.define @long_run
// CHECK-NOT: tile_dim
ddt.define @long_run {
  ddt.layout size 98304, lb 0, extent 98304 attributes {family = #ddt.family<strided>, needs_byte_path = false, width = 8 : i64} {
    ddt.segment at 0 dims [64, 64] strides [24, 1536] runs [0] lengths [24]
  }
}

// -----

// A work-unit plan is left alone.
// CHECK-LABEL: ddt.define @units
// CHECK-NOT: tile_dim
ddt.define @units {
  ddt.layout size 80, lb 0, extent 128 attributes {family = #ddt.family<units>, needs_byte_path = false, unit_bytes = 1024 : i64, units = array<i64: 0, 0, 32, 1, 32, 40, 24, 1, 56, 80, 16, 1, 72, 120, 8, 1>, width = 8 : i64} {
    ddt.segment at 0 dims [] strides [] runs [0, 40, 80, 120] lengths [32, 24, 16, 8]
  }
}

// -----

ddt.define @not_balanced {
  // expected-error @+1 {{ddt-transpose-tiles needs the kernel family: run ddt-stair-balancing first}}
  ddt.layout size 32768, lb 0, extent 32768 attributes {needs_byte_path = false, width = 8 : i64} {
    ddt.segment at 0 dims [64, 64] strides [8, 512] runs [0] lengths [8]
  }
}
