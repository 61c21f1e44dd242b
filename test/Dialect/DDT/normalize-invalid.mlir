// RUN: ddt-opt %s --ddt-normalize -split-input-file -verify-diagnostics

// A layout that overflows only with the definition a ddt.ref names is
// reported where ddt-normalize resolves the reference, on the op where it
// overflows.
ddt.define @big {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.contiguous 1152921504606846975, %0
  ddt.yield %1
}
ddt.define @t {
  %0 = ddt.ref @big
  // expected-error @+1 {{the layout overflows 64-bit byte offsets}}
  %1 = ddt.contiguous 2, %0
  ddt.yield %1
}
