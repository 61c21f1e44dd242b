#!/usr/bin/env bash
# DDTC_MPI_IPC_READ=auto (pull within one GPU, the ring across GPUs) against
# direct reads of the sender's ring. Both ranks on one GPU under an MPS
# daemon of their own: the layer test with auto (checked to pull), the
# ping-pong of ddtc and (a) alone in both modes, twice, interleaved, and the
# halo exchange of a 512^3 cube in both modes, twice.
#   auto.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/auto}; mkdir -p "$out"
T0=$SECONDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$build/lib
nvidia-smi -L > "$out/gpus.txt"
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d && echo "mps started"
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR
   -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY)
layer=$build/bin/ddtc-mpi-layer-test
step() { local name=$1; shift; local t0=$SECONDS
  timeout 150 "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -n 2 "$out/$name.log"; }
step layer-auto "${x[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_IPC_READ=auto $layer --cases 300 --expect-ipc pulled
step layer-auto-threads "${x[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_IPC_READ=auto -x DDTC_MPI_FRAGMENT=5000 \
  $layer --cases 200 --threads 4 --suite p2p --expect-ipc pulled
b=($build/bin/ddtc-mpi-bench --refs device --sizes 1M,4M,16M,64M --reps 10 --time ddtc,a)
for round in 1 2; do
  for mode in direct auto; do
    step bench-$mode-$round "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode "${b[@]}" \
      --json "$out/bench-$mode-$round.json"
  done
done
for round in 1 2; do
  for mode in direct auto; do
    step halo-$mode-$round "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode $build/bin/ddtc-mpi-bench \
      --halo 512 --json "$out/halo-$mode-$round.json"
    grep -h "typed / contiguous" "$out/halo-$mode-$round.log"
  done
done
echo quit | nvidia-cuda-mps-control
echo "total $((SECONDS-T0)) s"
