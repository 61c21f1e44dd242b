#!/bin/bash
# Final batch: latency A/B of host pack, binding, then the MPI layer tests on the GPU.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=/tmp/fin; mkdir -p $R
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d
M="mpirun -np 2 --oversubscribe --mca pml ob1 --mca btl self,vader -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x LD_LIBRARY_PATH -x LD_PRELOAD=$PWD/build/lib/libddtc-mpi.so -x DDTC_MPI_IPC=0"
L=vector-16B,vector-256B,vector-4KiB,cube-x-face,cube-z-face,particles,lower-triangular,vector-to-contig
for r in 1 2; do
  for hp in 0 4096; do
    timeout 120 $M --bind-to none -x DDTC_MPI_HOST_PACK=$hp build/bin/ddtc-mpi-bench --sizes 8,1K,4K --layouts $L --reps 30 --host-iters 1000 --host-reps 3 --json $R/hp$hp-$r.json > $R/hp$hp-$r.txt 2>&1
    echo "hostpack $hp round $r rc $?"; grep -A14 "one-way latency" $R/hp$hp-$r.txt | head -30
  done
done
timeout 120 $M --bind-to core --map-by core -x DDTC_MPI_HOST_PACK=0 build/bin/ddtc-mpi-bench --sizes 1K --layouts vector-256B,vector-to-contig --reps 30 --host-iters 1000 --host-reps 3 > $R/bind-core.txt 2>&1
echo "bind-to core rc $?"; grep -A5 "one-way latency" $R/bind-core.txt
echo quit | nvidia-cuda-mps-control
DDTC_GPU_STEPS=mpi-tests timeout 330 bench/run-gpu.sh build $R/mt > $R/mt.log 2>&1
echo "mpi-tests rc $?"; grep -E "^== .*(exit|passed|FAIL)|passed, [0-9]+ failed|checks passed" $R/mt.log | head -40
cd /tmp && tar czf $OUT/fin.tgz fin
