#!/usr/bin/env bash
# The receiver packing from the sender's buffer (DDTC_MPI_IPC_READ=pull)
# against the default direct reads of the sender's ring. Both ranks on one
# GPU under an MPS daemon of their own, or one rank per GPU where two are
# visible: the layer test with pull (rings of odd fragments, threads,
# wildcards), the ping-pong of ddtc and (a) alone in both modes, twice,
# interleaved, the halo exchange in both modes, then memcheck of pull
# (without MPS).
#   pull.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/pull}; mkdir -p "$out"
T0=$SECONDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$build/lib
nvidia-smi -L > "$out/gpus.txt"
ngpu=$(wc -l < "$out/gpus.txt")
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR)
if [ "$ngpu" -lt 2 ]; then
  export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
  nvidia-cuda-mps-control -d && echo "mps started"
  x+=(-x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY)
fi
layer=$build/bin/ddtc-mpi-layer-test
step() { local name=$1; shift; local t0=$SECONDS
  timeout 150 "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -n 2 "$out/$name.log"; }
pull=(-x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_IPC_READ=pull)
step layer-pull "${x[@]}" -np 2 "${pull[@]}" -x DDTC_MPI_FRAGMENT=3000 \
  -x DDTC_MPI_FRAGMENT_MIN=700 -x DDTC_MPI_DEPTH=2 $layer --cases 300 --expect-ipc pulled
step layer-pull-defaults "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=pull $layer --cases 300 --expect-ipc pulled
step layer-pull-threads "${x[@]}" -np 2 "${pull[@]}" -x DDTC_MPI_FRAGMENT=5000 \
  $layer --cases 200 --threads 4 --suite p2p --expect-ipc pulled
step layer-pull-wildcard "${x[@]}" -np 4 "${pull[@]}" -x DDTC_MPI_FRAGMENT=999 \
  $layer --suite wildcard --expect-ipc pulled
b=($build/bin/ddtc-mpi-bench --refs device --sizes 1M,4M,16M,64M --reps 10 --time ddtc,a)
for round in 1 2; do
  for mode in direct pull; do
    step bench-$mode-$round "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode "${b[@]}" \
      --json "$out/bench-$mode-$round.json"
  done
done
for mode in direct pull; do
  step halo-$mode "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode $build/bin/ddtc-mpi-bench \
    --halo 512 --json "$out/halo-$mode.json"
done
[ "$ngpu" -lt 2 ] && echo quit | nvidia-cuda-mps-control
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
y=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR)
step memcheck-pull "${y[@]}" -np 2 "${pull[@]}" -x DDTC_MPI_FRAGMENT=4096 \
  compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no \
  $layer --cases 20 --suite p2p --expect-ipc pulled
grep "ERROR SUMMARY" "$out/memcheck-pull.log" | head -2
echo "total $((SECONDS-T0)) s"
