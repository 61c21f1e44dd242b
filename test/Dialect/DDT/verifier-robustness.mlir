// RUN: ddt-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// The verifier stands any IR the parser accepts: it never follows an operand
// into a cycle, and a value computed after its use is left to the dominance
// check.

// An op whose operand is its own result.
ddt.define @self {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.primitive MPI_INT
  // expected-error @+2 {{operand #2 does not dominate this use}}
  // expected-note @+1 {{operand defined here}}
  %3 = ddt.struct [3, 1, 1], [0, 24, 28], (%0, %1, %3)
  ddt.yield %3
}

// -----

// A cycle through two ops.
ddt.define @cycle {
  // expected-error @+1 {{operand #0 does not dominate this use}}
  %0 = ddt.contiguous 2, %1
  // expected-note @+1 {{operand defined here}}
  %1 = ddt.vector 2, 1, 3, %0
  ddt.yield %1
}

// -----

// An operand computed after its use, no cycle.
ddt.define @later {
  // expected-error @+1 {{operand #0 does not dominate this use}}
  %0 = ddt.contiguous 2, %1
  // expected-note @+1 {{operand defined here}}
  %1 = ddt.primitive MPI_DOUBLE
  ddt.yield %0
}

// -----

// A datatype from another dialect's op.
ddt.define @foreign {
  %0 = "other.make"() : () -> !ddt.datatype
  // expected-error @+1 {{'ddt.contiguous' op operand #0 must be computed by a ddt constructor or ddt.ref op of the same definition}}
  %1 = ddt.contiguous 2, %0
  ddt.yield %1
}

// -----

ddt.define @foreign_yield {
  %0 = "other.make"() : () -> !ddt.datatype
  // expected-error @+1 {{'ddt.yield' op the yielded datatype must be computed by a ddt constructor or ddt.ref op of the same definition}}
  ddt.yield %0
}

// -----

// Constructor ops outside a definition, on a block argument and in a cycle
// (another dialect's region may be a graph): each checks its own arguments,
// and no tree is built.
"other.region"() ({
^bb0(%arg0: !ddt.datatype):
  %0 = ddt.contiguous 2, %arg0
  %1 = ddt.struct [1, 1], [0, 8], (%0, %1)
  "other.end"() : () -> ()
}) : () -> ()

// -----

"other.region"() ({
^bb0(%arg0: !ddt.datatype):
  // expected-error @+1 {{'ddt.contiguous' op count must be non-negative, got -1}}
  %0 = ddt.contiguous -1, %arg0
  "other.end"() : () -> ()
}) : () -> ()

// -----

// A cycle through a reference: a definition can only refer to an earlier one.
ddt.define @a {
  // expected-error @+1 {{'ddt.ref' op refers to @b, which is not defined before this use}}
  %0 = ddt.ref @b
  ddt.yield %0
}
ddt.define @b {
  %0 = ddt.ref @a
  ddt.yield %0
}

// -----

ddt.define @itself {
  // expected-error @+1 {{'ddt.ref' op refers to @itself, which is not defined before this use}}
  %0 = ddt.ref @itself
  ddt.yield %0
}
