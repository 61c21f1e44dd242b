#!/usr/bin/env bash
# The halo exchange of a 512^3 cube (twelve 2 MiB messages in flight per
# rank pair) with the model's fragments against fixed ones (one fragment a
# message: 4M; 1M; 512K), direct reads, two rounds. Both ranks on one GPU
# under MPS.
#   halo-fragments.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/halo}; mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$build/lib DDTC_CACHE_DIR=$(mktemp -d)
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR
   -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY)
for round in 1 2; do
  for f in model 4M 1M 512K; do
    env=()
    [ $f != model ] && env=(-x DDTC_MPI_FRAGMENT=$f -x DDTC_MPI_FRAGMENT_MIN=$f)
    timeout 60 "${x[@]}" -np 2 "${env[@]}" $build/bin/ddtc-mpi-bench --halo 512 \
      --json "$out/halo-$f-$round.json" > "$out/halo-$f-$round.log" 2>&1
    echo "$f round $round: $(grep -h '^halo-512' "$out/halo-$f-$round.log")"
  done
done
echo quit | nvidia-cuda-mps-control
