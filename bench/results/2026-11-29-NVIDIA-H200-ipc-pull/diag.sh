#!/usr/bin/env bash
# Why pulled messages were slow: three layouts at 4 and 64 MiB, direct
# reads against pull with kernels compiled in the background (the default)
# and compiled before the first launch (DDTC_JIT=sync), each rank printing
# the kernels it launched (DDTC_MPI_PROFILE=1); then a timeline of pulled
# 4 MiB messages. Both ranks on one GPU under MPS.
#   diag.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/diag}; mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$build/lib
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR
   -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x DDTC_MPI_PROFILE=1)
b=($build/bin/ddtc-mpi-bench --refs device --layouts vector-4KiB,cube-x-face,particles
   --sizes 4M,64M --reps 10 --time ddtc,a)
step() { local name=$1; shift; local t0=$SECONDS
  export DDTC_CACHE_DIR=$(mktemp -d)
  timeout 120 "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"; }
step direct "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=direct "${b[@]}" --json "$out/direct.json"
step pull "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=pull "${b[@]}" --json "$out/pull.json"
step pull-sync "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=pull -x DDTC_JIT=sync "${b[@]}" --json "$out/pull-sync.json"
step direct-sync "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=direct -x DDTC_JIT=sync "${b[@]}" --json "$out/direct-sync.json"
step pull-trace "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=pull -x DDTC_JIT=sync -x DDTC_MPI_TRACE=$out/trace-pull \
  $build/bin/ddtc-mpi-bench --refs device --layouts vector-4KiB --sizes 4M --reps 3 --time ddtc
echo quit | nvidia-cuda-mps-control
grep -h "kernels:" "$out"/*.log | sed 's/.*kernels:/kernels:/'
