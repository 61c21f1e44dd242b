#!/usr/bin/env bash
# Two GPUs of one host, one rank each: the receiver's direct reads on one
# stream against two in turn (DDTC_MPI_READ_STREAMS), the model's fragments,
# ddtc and (a) alone at 4, 16 and 64 MiB in alternating rounds; then the
# ping-pong with a kernel holding half of each GPU (two streams, no cap).
#   run2.sh BUILD OUT
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
  tail -n 1 "$out/$name.log"; }
step calibrate "${x[@]}" -np 2 $build/bin/ddtc-mpi-calibrate --json "$out/calibrate.json"
b=($build/bin/ddtc-mpi-bench --refs device --sizes 4M,16M,64M --reps 7 --time ddtc,a)
for round in 1 2; do
  for n in 1 2; do
    step ab-streams-$n-$round "${x[@]}" -np 2 -x DDTC_MPI_READ_STREAMS=$n "${b[@]}" \
      --json "$out/ab-streams-$n-$round.json"
  done
done
step contend-half "${x[@]}" -np 2 $build/bin/ddtc-mpi-bench --refs device \
  --layouts vector-4KiB,particles,cube-slab,lower-triangular --sizes 4M,64M --reps 7 \
  --contend 0.5 --json "$out/contend-half.json"
echo "total $((SECONDS-T0)) s"
