#!/usr/bin/env bash
# Two GPUs of one host, one rank each, the receiver's direct reads on two
# streams in turn: the layer test, the model's calibration, the ping-pong of
# ddtc and (a) alone from 1 to 64 MiB with the model's fragments, then with
# fixed fragment schedules (first:largest) for three layouts at 16 and
# 64 MiB (the data for the model's fit), and the 3-d halo exchange.
#   run.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/x2}; mkdir -p "$out"
T0=$SECONDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$build/lib
nvidia-smi -L > "$out/gpus.txt"
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR)
step() { local name=$1; shift; local t0=$SECONDS
  timeout 120 "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -n 1 "$out/$name.log"; }
step layer "${x[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_FRAGMENT=3000 \
  $build/bin/ddtc-mpi-layer-test --cases 100 --suite p2p --expect-ipc used
step calibrate "${x[@]}" -np 2 $build/bin/ddtc-mpi-calibrate --json "$out/calibrate.json"
b=($build/bin/ddtc-mpi-bench --refs device --reps 7 --time ddtc,a)
step bench-model "${x[@]}" -np 2 "${b[@]}" --sizes 1M,4M,16M,64M --json "$out/bench-model.json"
for f in 1M:1M 2M:2M 4M:4M 8M:8M 16M:16M 32M:32M 2M:8M 4M:16M 8M:32M; do
  step fixed-${f/:/-} "${x[@]}" -np 2 -x DDTC_MPI_FRAGMENT_MIN=${f%:*} -x DDTC_MPI_FRAGMENT=${f#*:} \
    "${b[@]}" --layouts vector-4KiB,particles,cube-slab --sizes 16M,64M --json "$out/fixed-${f/:/-}.json"
done
step halo "${x[@]}" -np 2 $build/bin/ddtc-mpi-bench --halo 512 --json "$out/halo.json"
echo "total $((SECONDS-T0)) s"
