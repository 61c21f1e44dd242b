#!/usr/bin/env bash
# One H200, both ranks on it under an MPS daemon of their own: the layer
# test with push-copy and with the streams ordering the IPC ring, the
# ping-pong of ddtc and (a) alone with direct reads and with push-copy, the
# halo exchange, and memcheck of both modes (without MPS).
#   one-gpu.sh BUILD   (results in /tmp/res1)
set -uo pipefail
build=${1:-build}
out=/tmp/res1; mkdir -p $out
T0=$SECONDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$build/lib
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-smi -L > $out/gpus.txt
nvidia-cuda-mps-control -d && echo "mps started"
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR
   -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY)
layer=$build/bin/ddtc-mpi-layer-test
step() { local name=$1; shift; local t0=$SECONDS
  timeout 120 "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -n 1 "$out/$name.log"; }
step layer-defaults "${x[@]}" -np 2 $layer --cases 300 --expect-ipc used
step layer-push-copy "${x[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_IPC_READ=push-copy \
  -x DDTC_MPI_FRAGMENT=3000 -x DDTC_MPI_FRAGMENT_MIN=700 -x DDTC_MPI_DEPTH=2 $layer --cases 300 --expect-ipc used
step layer-push-copy-defaults "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=push-copy $layer --cases 300 --expect-ipc used
step layer-stream-sync "${x[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_IPC_SYNC=device \
  -x DDTC_MPI_FRAGMENT=3000 -x DDTC_MPI_DEPTH=2 $layer --cases 300 --expect-ipc used
step layer-stream-sync-threads "${x[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_IPC_SYNC=device \
  -x DDTC_MPI_FRAGMENT=5000 $layer --cases 200 --threads 4 --suite p2p --expect-ipc used
b=($build/bin/ddtc-mpi-bench --refs device --sizes 1M,4M,16M,64M --reps 10 --time ddtc,a)
for mode in direct push-copy; do
  step bench-$mode "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode "${b[@]}" --json $out/bench-$mode.json
done
step halo "${x[@]}" -np 2 $build/bin/ddtc-mpi-bench --halo 512 --json $out/halo.json
echo quit | nvidia-cuda-mps-control
# memcheck without MPS (the tool does not run under it)
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
y=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR)
for mode in "DDTC_MPI_IPC_READ=push-copy" "DDTC_MPI_IPC_SYNC=device"; do
  step memcheck-${mode#*=} "${y[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x $mode -x DDTC_MPI_FRAGMENT=4096 \
    compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no \
    $layer --cases 20 --suite p2p --expect-ipc used
  grep "ERROR SUMMARY" $out/memcheck-${mode#*=}.log | head -2
done
echo "total $((SECONDS-T0)) s"
