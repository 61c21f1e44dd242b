#!/usr/bin/env bash
# The sender's kernels pushing fragments into the receiver's ring
# (DDTC_MPI_IPC_READ=push) against the receiver's kernels reading the
# sender's ring (direct, the default), on the GPUs of one host: the layer
# test and memcheck with push, then the ping-pong of ddtc and (a) alone,
# push and direct side by side, then every path with push.
#   push.sh BUILD OUT
set -uo pipefail
build=$1 out=$2
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$build/lib
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH
   -x DDTC_CACHE_DIR)
layer=$build/bin/ddtc-mpi-layer-test
push=(-x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_IPC_READ=push)
step() { local name=$1; shift; local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -n 1 "$out/$name.log"; }
step calibrate "${x[@]}" -np 2 "$build/bin/ddtc-mpi-calibrate" \
  --json "$out/calibrate.json"
step layer-push "${x[@]}" -np 2 "${push[@]}" -x DDTC_MPI_FRAGMENT=3000 \
  -x DDTC_MPI_FRAGMENT_MIN=700 -x DDTC_MPI_DEPTH=3 "$layer" --cases 300 \
  --expect-ipc used
step layer-push-defaults "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=push "$layer" \
  --cases 300 --expect-ipc used
step layer-push-threads "${x[@]}" -np 2 "${push[@]}" -x DDTC_MPI_FRAGMENT=5000 \
  "$layer" --cases 200 --threads 4 --suite p2p --expect-ipc used
step layer-push-one-gpu "${x[@]}" -np 2 "${push[@]}" -x CUDA_VISIBLE_DEVICES=0 \
  -x DDTC_MPI_FRAGMENT=7000 "$layer" --cases 200 --expect-ipc used
step memcheck-push "${x[@]}" -np 2 "${push[@]}" -x DDTC_MPI_FRAGMENT=4096 \
  compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no \
  "$layer" --cases 30 --suite p2p --expect-ipc used
b=("$build/bin/ddtc-mpi-bench" --refs device --sizes 1M,4M,16M,64M --reps 10)
step bench-alone-push "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=push "${b[@]}" \
  --time ddtc,a --json "$out/bench-alone-push.json"
step bench-alone-direct "${x[@]}" -np 2 "${b[@]}" --time ddtc,a \
  --json "$out/bench-alone-direct.json"
step bench-push "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=push \
  "$build/bin/ddtc-mpi-bench" --refs device --max-bytes 256M --reps 10 \
  --json "$out/bench-push.json"
