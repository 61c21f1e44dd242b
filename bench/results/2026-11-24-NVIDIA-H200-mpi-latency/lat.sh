#!/bin/bash
set -u
# From the repository root, with build/ holding a Release build and OUT set.
here=$(dirname "$0")
nvcc -O2 -arch=sm_90 -o /tmp/lat "$here/lat.cu"
echo "== alone, no MPS"; /tmp/lat
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d
echo "== alone, under MPS"; /tmp/lat
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
M="mpirun -np 2 --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x LD_LIBRARY_PATH"
python3 bench/layouts.py --tsv > /dev/null
for ipc in 0 1; do
  mkdir -p $OUT/tr$ipc
  $M -x LD_PRELOAD=$PWD/build/lib/libddtc-mpi.so -x DDTC_MPI_IPC=$ipc -x DDTC_MPI_TRACE=$OUT/tr$ipc/t build/bin/ddtc-mpi-bench --sizes 1K --layouts vector-256B,vector-to-contig --reps 20 --host-iters 100 --host-reps 1 > $OUT/tr$ipc/bench.txt 2>&1
  tail -5 $OUT/tr$ipc/bench.txt
done
echo quit | nvidia-cuda-mps-control
cd $OUT && tar czf traces.tgz tr0 tr1 && rm -rf tr0 tr1
