#!/usr/bin/env bash
# Two GPUs of one host, one rank each: the receiver's direct reads of the
# sender's ring on one stream against four streams in turn
# (DDTC_MPI_READ_STREAMS). The layer test with 1 and 4 streams, the model's
# calibration, the ping-pong of ddtc and (a) alone from 1 to 64 MiB (two
# interleaved rounds), the 3-d halo exchange (two rounds). Results under OUT.
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
  timeout 120 "$@" >"$out/$name.log" 2>&1; echo "== $name: exit $? after $((SECONDS - t0)) s"
  tail -n 2 "$out/$name.log"; }
for n in 1 4; do
  step layer-streams-$n "${x[@]}" -np 2 -x DDTC_MPI_PROTOCOL=ipc -x DDTC_MPI_FRAGMENT=3000 \
    -x DDTC_MPI_READ_STREAMS=$n $layer --cases 100 --suite p2p --expect-ipc used
done
step calibrate "${x[@]}" -np 2 $build/bin/ddtc-mpi-calibrate --json "$out/calibrate.json"
b=($build/bin/ddtc-mpi-bench --refs device --sizes 1M,4M,16M,64M --reps 10 --time ddtc,a)
for round in 1 2; do
  for n in 1 4; do
    step bench-streams-$n-$round "${x[@]}" -np 2 -x DDTC_MPI_READ_STREAMS=$n "${b[@]}" \
      --json "$out/bench-streams-$n-$round.json"
  done
done
for round in 1 2; do
  for n in 1 4; do
    step halo-streams-$n-$round "${x[@]}" -np 2 -x DDTC_MPI_READ_STREAMS=$n \
      $build/bin/ddtc-mpi-bench --halo 512 --json "$out/halo-streams-$n-$round.json"
  done
done
echo "total $((SECONDS-T0)) s"
