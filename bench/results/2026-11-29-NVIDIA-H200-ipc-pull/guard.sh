#!/usr/bin/env bash
# After pull was kept to types whose pack reads at most 4 bytes per packed
# byte: the cube's x face and two other layouts, direct against pull, and
# the halo exchange of a 512^3 cube in both modes, twice. Both ranks on one
# GPU under MPS.
#   guard.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/guard}; mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$build/lib DDTC_CACHE_DIR=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR
   -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY)
b=($build/bin/ddtc-mpi-bench --refs device --layouts cube-x-face,cube-slab,particles
   --sizes 4M,64M --reps 10 --time ddtc,a)
step() { local name=$1; shift; local t0=$SECONDS
  timeout 120 "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  grep -h "typed / contiguous" "$out/$name.log"; }
for mode in direct pull; do
  step bench-$mode "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode "${b[@]}" --json "$out/bench-$mode.json"
done
for round in 1 2; do
  for mode in direct pull; do
    step halo-$mode-$round "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode $build/bin/ddtc-mpi-bench \
      --halo 512 --json "$out/halo-$mode-$round.json"
  done
done
echo quit | nvidia-cuda-mps-control
