#!/usr/bin/env bash
# Two GPUs of one host, one rank each, in a short device session: the layer
# test through IPC (direct reads and pulls), then the ping-pong of ddtc and
# (a) alone with direct reads and with pulls at 4 and 16 MiB, then the 3-d
# halo exchange both ways. Results under OUT.
#   run.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/x2}; mkdir -p "$out"
T0=$SECONDS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$build/lib
nvidia-smi -L > "$out/gpus.txt"; nvidia-smi topo -m >> "$out/gpus.txt" 2>&1
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR)
layer=$build/bin/ddtc-mpi-layer-test
step() { local name=$1; shift; local t0=$SECONDS
  timeout 60 "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -n 2 "$out/$name.log"; }
step layer-direct "${x[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_FRAGMENT=3000 \
  $layer --cases 100 --suite p2p --expect-ipc used
step layer-pull "${x[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_IPC_READ=pull \
  -x DDTC_MPI_FRAGMENT=3000 $layer --cases 100 --suite p2p --expect-ipc pulled
b=($build/bin/ddtc-mpi-bench --refs device --sizes 4M,16M --reps 10 --time ddtc,a)
for mode in direct pull; do
  step bench-$mode "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode "${b[@]}" \
    --json "$out/bench-$mode.json"
done
for mode in direct pull; do
  step halo-$mode "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode \
    $build/bin/ddtc-mpi-bench --halo 512 --json "$out/halo-$mode.json"
done
echo "total $((SECONDS-T0)) s"
