// Found by ddtc-fuzz: an op that uses its own result sent the dialect
// verifier into endless recursion (a segfault). The verifier now leaves
// such IR to the dominance check, which reports it.
ddt.define @t {
  %0 = ddt.primitive MPI_DOUBLE
  %1 = ddt.primitive MPI_INT
  %3 = ddt.struct [3, 1, 1], [0, 24, 28], (%0, %1, %3)
  ddt.yield %3
}
