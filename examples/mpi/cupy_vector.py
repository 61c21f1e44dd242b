"""Strided CuPy views sent with MPI derived datatypes through mpi4py.

An unchanged mpi4py program: with libddtc-mpi preloaded, the device buffers
go through ddtc's kernels (the MPI library itself is not CUDA-aware).

    mpirun -np 2 -x LD_PRELOAD=build/lib/libddtc-mpi.so \\
        python3 examples/mpi/cupy_vector.py

Rank 0 sends column 3 of an n x n float64 matrix (a strided view: one
element every n) described by a subarray type; rank 1 receives it into a
contiguous CuPy vector. Then rank 1 sends a contiguous vector back into
column 5 of rank 0's matrix (a vector type on the receive side), and both
check every element on the host. Prints "cupy_vector: N checks passed";
exits 1 on a mismatch, 77 when mpi4py or CuPy is missing.
"""

import sys

try:
    import cupy as cp
    from mpi4py import MPI
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"cupy_vector: skipped: {e}")
    sys.exit(77)

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
if size != 2:
    if rank == 0:
        print("cupy_vector: needs exactly 2 ranks")
    sys.exit(2)
cp.cuda.Device(rank % cp.cuda.runtime.getDeviceCount()).use()

n = 512
checks = 0
failed = 0


def check(ok, what):
    global checks, failed
    checks += 1
    if not ok:
        failed += 1
        print(f"cupy_vector: rank {rank}: FAILED: {what}", flush=True)


# Column 3 of a C-ordered n x n matrix, as a subarray of the whole matrix.
column3 = MPI.DOUBLE.Create_subarray([n, n], [n, 1], [0, 3]).Commit()
# Column 5 as a vector starting at element 5 (displacement given by the
# buffer offset below).
column = MPI.DOUBLE.Create_vector(n, 1, n).Commit()

a = cp.arange(n * n, dtype=cp.float64).reshape(n, n) + 1000.0 * rank
cp.cuda.runtime.deviceSynchronize()
if rank == 0:
    comm.Send([a, 1, column3], dest=1, tag=7)
    # Receive into column 5: the buffer starts at element (0, 5).
    view = a.ravel()[5:]
    comm.Recv([view, 1, column], source=1, tag=8)
    got = cp.asnumpy(a)
    expect = cp.asnumpy(cp.arange(n, dtype=cp.float64) * 2.0 + 0.5)
    check((got[:, 5] == expect).all(), "column 5 received from rank 1")
    untouched = cp.asnumpy(cp.arange(n * n, dtype=cp.float64).reshape(n, n))
    mask = cp.asnumpy(cp.ones((n, n), dtype=bool))
    mask[:, 5] = False
    check((got[mask] == untouched[mask]).all(), "other columns unchanged")
else:
    r = cp.full(n, -1.0, dtype=cp.float64)
    status = MPI.Status()
    comm.Recv([r, n, MPI.DOUBLE], source=0, tag=7, status=status)
    expect = cp.asnumpy(cp.arange(n * n, dtype=cp.float64).reshape(n, n)[:, 3])
    check((cp.asnumpy(r) == expect).all(), "column 3 received from rank 0")
    check(status.Get_count(MPI.DOUBLE) == n, "status count")
    back = cp.arange(n, dtype=cp.float64) * 2.0 + 0.5
    cp.cuda.runtime.deviceSynchronize()
    comm.Send([back, n, MPI.DOUBLE], dest=0, tag=8)

column3.Free()
column.Free()
total = comm.allreduce(failed)
checks = comm.allreduce(checks)
if rank == 0:
    print(f"cupy_vector: {checks - total} checks passed, {total} failed")
sys.exit(1 if total else 0)
