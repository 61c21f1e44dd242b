#!/usr/bin/env bash
# Small messages (256 B to 64 KiB packed): the default (eager through
# pinned host memory up to 64 KiB) against every message through IPC
# (DDTC_MPI_PROTOCOL=ipc) with direct reads and with pull, ddtc and (a)
# alone. Both ranks on one GPU under MPS.
#   small.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/small}; mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$build/lib DDTC_CACHE_DIR=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR
   -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY)
b=($build/bin/ddtc-mpi-bench --refs device --sizes 256,1K,4K,64K --reps 20 --time ddtc,a)
for round in 1 2; do
  for mode in eager ipc-direct ipc-pull; do
    env=()
    [ $mode != eager ] && env=(-x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_IPC_READ=${mode#ipc-})
    timeout 100 "${x[@]}" -np 2 "${env[@]}" "${b[@]}" --json "$out/$mode-$round.json" \
      > "$out/$mode-$round.log" 2>&1
    echo "== $mode $round: exit $?"
  done
done
echo quit | nvidia-cuda-mps-control
