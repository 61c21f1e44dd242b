#!/usr/bin/env bash
# Two GPUs of one host, one rank each: the model of the IPC pipeline in its
# max-rate form (PipelineModel.cpp). The layer test, the calibration (its
# fit), and the ping-pong of ddtc and (a) alone from 1 to 64 MiB, which
# prints the model's prediction beside each point. Results under OUT.
#   run.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/x2}; mkdir -p "$out"
T0=$SECONDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$build/lib
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR)
step() { local name=$1; shift; local t0=$SECONDS
  timeout 150 "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -n 2 "$out/$name.log"; }
step layer "${x[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_FRAGMENT=3000 \
  $build/bin/ddtc-mpi-layer-test --cases 100 --suite p2p --expect-ipc used
step calibrate "${x[@]}" -np 2 $build/bin/ddtc-mpi-calibrate --json "$out/calibrate.json"
step bench "${x[@]}" -np 2 $build/bin/ddtc-mpi-bench --refs device --sizes 1M,4M,16M,64M \
  --reps 7 --time ddtc,a --json "$out/bench.json"
echo "total $((SECONDS-T0)) s"
