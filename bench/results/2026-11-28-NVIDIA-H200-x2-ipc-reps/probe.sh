#!/usr/bin/env bash
# Why a 64 MiB message through IPC takes longer after the first repetition:
# the ping-pong with every path timed (interleaved), with ddtc and (a) alone,
# with fixed 16 MiB fragments, and a timeline; the GPUs' clocks logged.
#   probe.sh BUILD OUT
set -uo pipefail
build=$1 out=$2
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$build/lib
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -np 2 -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH
   -x DDTC_CACHE_DIR)
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw \
  --format=csv -lms 20 >"$out/clocks.csv" 2>&1 &
smi=$!
"${x[@]}" "$build/bin/ddtc-mpi-calibrate" >"$out/calibrate.txt" 2>&1
b=("$build/bin/ddtc-mpi-bench" --refs device --sizes 64M,16M --reps 10
   --layouts vector-4KiB,particles,cube-x-face)
run() { local name=$1; shift; echo "== $name $(date +%T.%N)" >>"$out/marks.txt"
  "$@" --json "$out/$name.json" >"$out/$name.txt" 2>&1
  echo "== $name rc $? $(date +%T.%N)" >>"$out/marks.txt"; }
run all "${x[@]}" "${b[@]}"
run ddtc-a "${x[@]}" "${b[@]}" --time ddtc,a
run ddtc-a-fixed16M "${x[@]}" -x DDTC_MPI_FRAGMENT=16M \
  -x DDTC_MPI_FRAGMENT_MIN=16M "${b[@]}" --time ddtc,a
run ddtc-a-trace "${x[@]}" -x DDTC_MPI_TRACE=$out/trace \
  "$build/bin/ddtc-mpi-bench" --refs device --sizes 64M --reps 4 \
  --layouts vector-4KiB --time ddtc,a
run all-trace "${x[@]}" -x DDTC_MPI_TRACE=$out/trace-all \
  "$build/bin/ddtc-mpi-bench" --refs device --sizes 64M --reps 4 \
  --layouts vector-4KiB --time ddtc,a,b,c
kill $smi
