// RUN: ddt-opt %s --ddt-stair-balancing --split-input-file -verify-diagnostics

// Each planning pass says which one must run before it.

ddt.define @unaligned {
  // expected-error @+1 {{ddt-stair-balancing needs the access width: run ddt-alignment-prologues first}}
  ddt.layout size 8, lb 0, extent 8 {
    ddt.segment at 0 dims [] strides [] runs [0] lengths [8]
  }
}

// -----

// expected-error @+1 {{ddt-stair-balancing needs a ddt.layout: run ddt-normalize first}}
ddt.define @constructors {
  %0 = ddt.primitive MPI_DOUBLE
  ddt.yield %0
}
