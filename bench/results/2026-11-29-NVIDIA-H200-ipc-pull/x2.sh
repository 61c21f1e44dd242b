#!/usr/bin/env bash
# Two GPUs of one host, one rank each: pull against direct reads. The layer
# test with pull, memcheck of pull, the model's calibration, the ping-pong
# of ddtc and (a) alone in both modes (two interleaved rounds), the halo
# exchange in both modes (two rounds), and the SMs' peer read and write
# rates against the copy engine (what a pack from the peer's memory can
# reach). Results under OUT, packed by the caller.
#   x2.sh BUILD OUT
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
  timeout 150 "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -n 2 "$out/$name.log"; }
pull=(-x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_IPC_READ=pull)
step layer-pull "${x[@]}" -np 2 "${pull[@]}" -x DDTC_MPI_FRAGMENT=3000 \
  -x DDTC_MPI_FRAGMENT_MIN=700 -x DDTC_MPI_DEPTH=2 $layer --cases 300 --expect-ipc pulled
step layer-pull-threads "${x[@]}" -np 2 "${pull[@]}" -x DDTC_MPI_FRAGMENT=5000 \
  $layer --cases 200 --threads 4 --suite p2p --expect-ipc pulled
step memcheck-pull "${x[@]}" -np 2 "${pull[@]}" -x DDTC_MPI_FRAGMENT=4096 \
  compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no \
  $layer --cases 20 --suite p2p --expect-ipc pulled
step calibrate "${x[@]}" -np 2 $build/bin/ddtc-mpi-calibrate --json "$out/calibrate.json"
b=($build/bin/ddtc-mpi-bench --refs device --sizes 1M,4M,16M,64M --reps 10 --time ddtc,a)
for round in 1 2; do
  for mode in direct pull; do
    step bench-$mode-$round "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode "${b[@]}" \
      --json "$out/bench-$mode-$round.json"
  done
done
for round in 1 2; do
  for mode in direct pull; do
    step halo-$mode-$round "${x[@]}" -np 2 -x DDTC_MPI_IPC_READ=$mode \
      $build/bin/ddtc-mpi-bench --halo 512 --json "$out/halo-$mode-$round.json"
  done
done
step peer-reads timeout 120 python3 bench/peer-reads.py --devices 0,1 --json "$out/peer-reads.json"
echo "total $((SECONDS-T0)) s"
