#!/bin/bash
# A/B: the host pipeline's receiver reading pinned memory (direct) or staging it on the device (stage).
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$PWD/build/lib
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d
export DDTC_CACHE_DIR=$(mktemp -d)
for r in 1 2; do
  for v in direct stage; do
    timeout 250 mpirun -np 2 --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader \
      -x LD_PRELOAD=$PWD/build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR \
      -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x DDTC_MPI_IPC=0 -x DDTC_MPI_HOST_READ=$v \
      build/bin/ddtc-mpi-bench --sizes 1M,4M,16M,64M --layouts vector-256B,cube-z-face,cube-x-face,particles,lower-triangular --reps 8 \
      --host-iters 100 --host-reps 1 --json $OUT/$v$r.json > $OUT/$v$r.txt 2>$OUT/$v$r.err || echo "FAIL $v$r"
  done
done
echo quit | nvidia-cuda-mps-control
for f in $OUT/*.txt; do echo "== $f"; grep -E '^(vector|cube|particles|lower)' $f | awk '{print $1, $2, $3, $5, $6, $10}'; done
