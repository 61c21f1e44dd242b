#!/usr/bin/env bash
# The IPC ring's fragments ordered by the streams (DDTC_MPI_IPC_SYNC=device,
# flag words each side's stream waits on) against ordered by the hosts
# (=host), on the GPUs of one host: the layer test and memcheck with the
# streams ordering, then the ping-pong of ddtc and (a) alone both ways,
# with staged reads, with fixed fragments, and the halo exchange both ways.
#   sync.sh BUILD OUT
set -uo pipefail
build=$1 out=$2
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$build/lib
# The streams' ordering everywhere but where a step asks for the hosts'
# (it was the default of the commit that ran this; the hosts' is now).
export DDTC_MPI_IPC_SYNC=device
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH
   -x DDTC_CACHE_DIR -x DDTC_MPI_IPC_SYNC)
layer=$build/bin/ddtc-mpi-layer-test
ring=(-x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_VERBOSE=0)
step() { local name=$1; shift; local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -n 1 "$out/$name.log"; }
nvidia-smi -L > "$out/gpus.txt" 2>&1
step calibrate "${x[@]}" -np 2 "$build/bin/ddtc-mpi-calibrate" \
  --json "$out/calibrate.json"
step layer-ring "${x[@]}" -np 2 "${ring[@]}" -x DDTC_MPI_FRAGMENT=3000 \
  -x DDTC_MPI_FRAGMENT_MIN=700 -x DDTC_MPI_DEPTH=3 "$layer" --cases 300 \
  --expect-ipc used
step layer-stage "${x[@]}" -np 2 "${ring[@]}" -x DDTC_MPI_IPC_READ=stage \
  -x DDTC_MPI_FRAGMENT=5000 -x DDTC_MPI_DEPTH=2 "$layer" --cases 300 \
  --expect-ipc used
step layer-defaults "${x[@]}" -np 2 "$layer" --cases 300 --expect-ipc used
step layer-threads "${x[@]}" -np 2 "${ring[@]}" -x DDTC_MPI_FRAGMENT=5000 \
  "$layer" --cases 200 --threads 4 --suite p2p --expect-ipc used
step layer-one-gpu "${x[@]}" -np 2 "${ring[@]}" -x CUDA_VISIBLE_DEVICES=0 \
  -x DDTC_MPI_FRAGMENT=7000 "$layer" --cases 200 --expect-ipc used
step layer-wildcard "${x[@]}" -np 4 "${ring[@]}" -x DDTC_MPI_FRAGMENT=999 \
  "$layer" --suite wildcard --expect-ipc used
step memcheck "${x[@]}" -np 2 "${ring[@]}" -x DDTC_MPI_FRAGMENT=4096 \
  compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no \
  "$layer" --cases 30 --suite p2p --expect-ipc used
b=("$build/bin/ddtc-mpi-bench" --refs device --sizes 1M,4M,16M,64M --reps 10
   --time ddtc,a)
DDTC_MPI_IPC_SYNC=host step bench-host "${x[@]}" -np 2 "${b[@]}" \
  --json "$out/bench-host.json"
step bench-device "${x[@]}" -np 2 "${b[@]}" --json "$out/bench-device.json"
step bench-device-stage "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=stage "${b[@]}" \
  --json "$out/bench-device-stage.json"
step bench-device-1M "${x[@]}" -np 2 -x DDTC_MPI_FRAGMENT=1M "${b[@]}" \
  --json "$out/bench-device-1M.json"
step bench-device-256K "${x[@]}" -np 2 -x DDTC_MPI_FRAGMENT=256K "${b[@]}" \
  --json "$out/bench-device-256K.json"
step bench-device-stage-512K "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=stage \
  -x DDTC_MPI_FRAGMENT=512K "${b[@]}" --json "$out/bench-device-stage-512K.json"
DDTC_MPI_IPC_SYNC=host step halo-host "${x[@]}" -np 2 \
  "$build/bin/ddtc-mpi-bench" --halo 512 --json "$out/halo-host.json"
step halo-device "${x[@]}" -np 2 "$build/bin/ddtc-mpi-bench" --halo 512 \
  --json "$out/halo-device.json"
step halo-device-stage "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=stage \
  "$build/bin/ddtc-mpi-bench" --halo 512 --json "$out/halo-device-stage.json"
