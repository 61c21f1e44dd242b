// RUN: ddt-opt %s -split-input-file -verify-diagnostics

ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  // expected-error @+1 {{'ddt.contiguous' op count must be non-negative, got -1}}
  %1 = ddt.contiguous -1, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  // expected-error @+1 {{'ddt.vector' op count must be non-negative, got -3}}
  %1 = ddt.vector -3, 1, 1, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  // expected-error @+1 {{'ddt.hvector' op blocklen must be non-negative, got -2}}
  %1 = ddt.hvector 3, -2, 8, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.indexed' op blocklens has 2 entries but displs has 3}}
  %1 = ddt.indexed [1, 2], [0, 4, 8], %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.hindexed' op blocklens[1] must be non-negative, got -1}}
  %1 = ddt.hindexed [1, -1], [0, 4], %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.indexed_block' op blocklen must be non-negative, got -4}}
  %1 = ddt.indexed_block -4, [0, 4], %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.struct' op blocklens has 2 entries but displs has 1}}
  %1 = ddt.struct [1, 1], [0], (%0, %0)
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.struct' op blocklens has 2 entries but types has 1}}
  %1 = ddt.struct [1, 1], [0, 8], (%0)
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.struct' op blocklens[0] must be non-negative, got -7}}
  %1 = ddt.struct [-7], [0], (%0)
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.subarray' op subarray needs at least one dimension}}
  %1 = ddt.subarray [], [], [], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.subarray' op sizes has 2 entries but subsizes has 1}}
  %1 = ddt.subarray [4, 4], [2], [0, 0], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.subarray' op sizes has 2 entries but starts has 3}}
  %1 = ddt.subarray [4, 4], [2, 2], [0, 0, 0], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.subarray' op sizes[1] must be at least 1, got 0}}
  %1 = ddt.subarray [4, 0], [2, 0], [0, 0], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.subarray' op subsizes[0] must be at least 1, got 0}}
  %1 = ddt.subarray [4, 4], [0, 2], [0, 0], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.subarray' op subsizes[1] = 5 exceeds sizes[1] = 4}}
  %1 = ddt.subarray [4, 4], [2, 5], [0, 0], Fortran, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.subarray' op starts[0] must be non-negative, got -1}}
  %1 = ddt.subarray [4, 4], [2, 2], [-1, 0], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.subarray' op starts[1] + subsizes[1] = 5 exceeds sizes[1] = 4}}
  %1 = ddt.subarray [4, 4], [2, 2], [0, 3], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op size (the number of processes) must be at least 1, got 0}}
  %1 = ddt.darray 0, 0, [8], [block], [default], [1], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op rank must be in [0, size) = [0, 4), got 4}}
  %1 = ddt.darray 4, 4, [8], [block], [default], [4], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op darray needs at least one dimension}}
  %1 = ddt.darray 1, 0, [], [], [], [], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op gsizes has 2 entries but distribs has 1}}
  %1 = ddt.darray 1, 0, [8, 8], [block], [default, default], [1, 1], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op gsizes has 2 entries but dargs has 3}}
  %1 = ddt.darray 1, 0, [8, 8], [block, block], [1, 2, 3], [1, 1], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op gsizes has 1 entries but psizes has 2}}
  %1 = ddt.darray 1, 0, [8], [block], [default], [1, 1], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op gsizes[0] must be at least 1, got 0}}
  %1 = ddt.darray 1, 0, [0], [block], [default], [1], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op psizes[0] must be at least 1, got 0}}
  %1 = ddt.darray 1, 0, [8], [block], [default], [0], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op dargs[0] must be at least 1 or default, got 0}}
  %1 = ddt.darray 2, 0, [8], [cyclic], [0], [2], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op dimension 1 is not distributed (none) so psizes[1] must be 1, got 2}}
  %1 = ddt.darray 4, 0, [8, 8], [block, none], [default, default], [2, 2], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op block distribution of dimension 0 needs dargs[0] * psizes[0] >= gsizes[0], got 3 * 2 < 7}}
  %1 = ddt.darray 2, 1, [7], [block], [3], [2], Fortran, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op the process grid psizes has 6 processes but size is 4}}
  %1 = ddt.darray 4, 0, [8, 8], [block, cyclic], [default, default], [2, 3], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{'ddt.darray' op attribute 'distribs' failed to satisfy constraint: darray distributions}}
  %1 = "ddt.darray"(%0) <{size = 1 : i64, rank = 0 : i64, gsizes = array<i64: 8>, distribs = [7 : i32], dargs = array<i64: -1>, psizes = array<i64: 1>, order = #ddt.order<C>}> : (!ddt.datatype) -> !ddt.datatype
  ddt.yield %1
}

// -----

ddt.define @t {
  // expected-error @+1 {{'ddt.primitive' op unknown MPI primitive type 'MPI_NOPE'}}
  %0 = "ddt.primitive"() <{name = "MPI_NOPE"}> : () -> !ddt.datatype
  ddt.yield %0
}

// -----

ddt.define @t {
  // expected-error @+1 {{unknown MPI primitive type 'MPI_NOPE'}}
  %0 = ddt.primitive MPI_NOPE
  ddt.yield %0
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{expected array order 'C' or 'Fortran'}}
  %1 = ddt.subarray [4], [2], [0], Pascal, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_INT
  // expected-error @+1 {{expected distribution 'block', 'cyclic' or 'none'}}
  %1 = ddt.darray 1, 0, [8], [scatter], [default], [1], C, %0
  ddt.yield %1
}

// -----

// Layout figures that overflow 64-bit byte offsets are rejected where they
// first overflow.
ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.contiguous 1152921504606846975, %0
  // expected-error @+1 {{'ddt.contiguous' op the layout overflows 64-bit byte offsets}}
  %2 = ddt.contiguous 2, %1
  ddt.yield %2
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  // expected-error @+1 {{'ddt.hvector' op the layout overflows 64-bit byte offsets}}
  %1 = ddt.hvector 3, 1, 4611686018427387904, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  // expected-error @+1 {{'ddt.vector' op the layout overflows 64-bit byte offsets}}
  %1 = ddt.vector 2, 1, 1152921504606846976, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  // expected-error @+1 {{'ddt.resized' op lb + extent overflows 64-bit byte offsets}}
  %1 = ddt.resized 9223372036854775807, 8, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  // expected-error @+1 {{'ddt.subarray' op the layout overflows 64-bit byte offsets}}
  %1 = ddt.subarray [4294967296, 4294967296], [1, 1], [4294967295, 0], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  // expected-error @+1 {{'ddt.subarray' op the array's extent overflows 64-bit byte offsets}}
  %1 = ddt.subarray [2147483648, 2147483648], [1, 1], [0, 0], C, %0
  ddt.yield %1
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  // expected-error @+1 {{'ddt.indexed' op the layout overflows 64-bit byte offsets}}
  %1 = ddt.indexed [1], [2305843009213693952], %0
  ddt.yield %1
}

// -----

ddt.define @t {
  // expected-error @+1 {{block with no terminator}}
  %0 = ddt.primitive MPI_DOUBLE
}

// -----

%0 = "ddt.primitive"() <{name = "MPI_INT"}> : () -> !ddt.datatype
// expected-error @+1 {{'ddt.yield' op expects parent op 'ddt.define'}}
"ddt.yield"(%0) : (!ddt.datatype) -> ()

// -----

ddt.define @t {
  ddt.layout size 8, lb 0, extent 8 {
    // expected-error @+1 {{'ddt.segment' op has 2 dimension counts but 1 strides}}
    ddt.segment at 0 dims [2, 2] strides [8] runs [0] lengths [2]
  }
}

// -----

ddt.define @t {
  ddt.layout size 0, lb 0, extent 8 {
    // expected-error @+1 {{'ddt.segment' op dimension 1 count must be at least 1, got 0}}
    ddt.segment at 0 dims [2, 0] strides [8, 4] runs [0] lengths [2]
  }
}

// -----

ddt.define @t {
  ddt.layout size 8, lb 0, extent 8 {
    // expected-error @+1 {{'ddt.segment' op has 1 run offsets but 2 run lengths}}
    ddt.segment at 0 dims [] strides [] runs [0] lengths [4, 4]
  }
}

// -----

ddt.define @t {
  ddt.layout size 0, lb 0, extent 8 {
    // expected-error @+1 {{'ddt.segment' op needs at least one run}}
    ddt.segment at 0 dims [] strides [] runs [] lengths []
  }
}

// -----

ddt.define @t {
  ddt.layout size 4, lb 0, extent 8 {
    // expected-error @+1 {{'ddt.segment' op run 1 length must be at least 1, got 0}}
    ddt.segment at 0 dims [] strides [] runs [0, 4] lengths [4, 0]
  }
}

// -----

ddt.define @t {
  // expected-error @+1 {{'ddt.layout' op size 16 does not match the 24 bytes its segments pack}}
  ddt.layout size 16, lb 0, extent 8 {
    ddt.segment at 0 dims [3] strides [16] runs [0] lengths [8]
  }
}

// -----

ddt.define @t {
  // expected-error @+1 {{'ddt.layout' op segments pack more than 2^63 bytes}}
  ddt.layout size 16, lb 0, extent 8 {
    ddt.segment at 0 dims [4611686018427387904, 4] strides [16, 1] runs [0] lengths [8]
  }
}

// -----

ddt.define @t {
  // expected-error @+1 {{'ddt.layout' op width must be 1, 2, 4, 8 or 16, got 3}}
  ddt.layout size 8, lb 0, extent 8 attributes {width = 3 : i64} {
    ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
  }
}

// -----

ddt.define @t {
  // expected-error @+1 {{'ddt.layout' op attribute 'family' failed to satisfy constraint: a kernel family: strided or units}}
  ddt.layout size 8, lb 0, extent 8 attributes {family = "units"} {
    ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
  }
}

// -----

ddt.define @t {
  // expected-error @+1 {{expected kernel family 'strided' or 'units'}}
  ddt.layout size 8, lb 0, extent 8 attributes {family = #ddt.family<warp>} {
    ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
  }
}

// -----

ddt.define @t {
  // expected-error @+1 {{'ddt.layout' op units must hold quadruples (packed, source, length, wide), got 3 values}}
  ddt.layout size 8, lb 0, extent 8 attributes {units = array<i64: 0, 0, 8>} {
    ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
  }
}

// -----

ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  // expected-error @+1 {{'ddt.segment' op expects parent op 'ddt.layout'}}
  ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
  ddt.yield %0
}

// -----

ddt.define @t {
  // expected-error @+1 {{'ddt.ref' op refers to @nope, which is not a ddt.define}}
  %0 = ddt.ref @nope
  ddt.yield %0
}

// -----

ddt.define @normalized {
  ddt.layout size 8, lb 0, extent 8 {
    ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
  }
}
ddt.define @t {
  // expected-error @+1 {{'ddt.ref' op refers to @normalized, which is already normalized (a ddt.layout cannot be an old type)}}
  %0 = ddt.ref @normalized
  ddt.yield %0
}
