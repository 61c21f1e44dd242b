#!/usr/bin/env bash
# The probe alone, then under MPS alone and two at once (as two ranks on one
# GPU), then the layer's small messages under MPS for the same machine.
#   probe.sh BUILD_DIR OUT   (BUILD_DIR/bin/recv-ahead-probe built from probe.cu)
set -uo pipefail
build=$1 out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH=$build/lib
"$build/bin/recv-ahead-probe" 3000 > "$out/alone.txt" 2>&1
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d
"$build/bin/recv-ahead-probe" 3000 > "$out/mps-alone.txt" 2>&1
"$build/bin/recv-ahead-probe" 3000 > "$out/mps-two-a.txt" 2>&1 &
"$build/bin/recv-ahead-probe" 3000 > "$out/mps-two-b.txt" 2>&1
wait
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
DDTC_CACHE_DIR=$(mktemp -d) timeout 200 mpirun -np 2 --oversubscribe --bind-to none \
  --mca pml ob1 --mca btl self,vader -x LD_PRELOAD=$build/lib/libddtc-mpi.so \
  -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR -x CUDA_MPS_PIPE_DIRECTORY \
  -x CUDA_MPS_LOG_DIRECTORY "$build/bin/ddtc-mpi-bench" --sizes 8,1K,4K \
  --reps 50 --host-iters 1000 --host-reps 3 --json "$out/mpi-small.json" \
  > "$out/mpi-small.txt" 2>&1
echo "mpi-bench exit $?"
echo quit | nvidia-cuda-mps-control
head -50 "$out"/*.txt
