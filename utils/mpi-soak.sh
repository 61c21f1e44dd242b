#!/usr/bin/env bash
# Runs the MPI layer's test suite on the fake CUDA driver over and over, each
# run with a new seed and a setting drawn from the protocols, fragment sizes,
# ring depths, IPC read modes, thread counts and rank counts that ctest runs
# once each, until the time is up. Every failing run's command and log are
# kept, so that it can be run again alone.
#
#   utils/mpi-soak.sh [--minutes M] [--build DIR] [--out DIR] [--seed S]
#
# Needs a build with MPI (build/bin/ddtc-mpi-layer-test, build/lib/
# libddtc-mpi.so, the fake driver) and mpirun. Exits 1 when a run failed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
minutes=10
build=$root/build
out=
seed=$RANDOM
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "mpi-soak: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$minutes" in
  ''|*[!0-9]*) echo "mpi-soak: --minutes takes a whole number, not '$minutes'" >&2
               exit 2 ;;
esac
test_bin=$build/bin/ddtc-mpi-layer-test
layer=$build/lib/libddtc-mpi.so
fake=$(find "$build" -name 'libddtc-fake-cuda.so' -print -quit 2>/dev/null)
for f in "$test_bin" "$layer" "$fake"; do
  if [ -z "$f" ] || [ ! -e "$f" ]; then
    echo "mpi-soak: ${f:-the fake CUDA driver (libddtc-fake-cuda.so)} is not" \
         "in $build: build with MPI first (utils/build.sh build)" >&2
    exit 2
  fi
done
command -v mpirun >/dev/null || { echo "mpi-soak: no mpirun on PATH" >&2; exit 2; }
out=${out:-$(mktemp -d /tmp/mpi-soak.XXXXXX)}
mkdir -p "$out"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$cache DDTC_JIT=generic DDTC_GENERIC_MAX_UNITS=100000000
RANDOM=$seed

pick() { # pick WORD...: one of the words
  local a=("$@")
  echo "${a[RANDOM % ${#a[@]}]}"
}

end=$((SECONDS + minutes * 60))
runs=0 failed=0
echo "mpi-soak: seed $seed, $minutes min, logs of failures in $out"
while [ $SECONDS -lt $end ]; do
  runs=$((runs + 1))
  protocol=$(pick eager pipeline ipc auto staged)
  ranks=2 suite=all threads=1
  case $(pick plain plain threads wildcard) in
    threads) threads=4 suite=p2p ;;
    wildcard) ranks=$(pick 3 4) suite=wildcard ;;
  esac
  env=(-x DDTC_CUDA_DRIVER="$fake" -x DDTC_FAKE_DELAY_US=$(pick 0 10 30 100)
       -x DDTC_MPI_PROTOCOL=$protocol -x DDTC_CACHE_DIR -x DDTC_JIT
       -x DDTC_GENERIC_MAX_UNITS
       -x DDTC_MPI_FRAGMENT=$(pick 999 1000 2000 3000 4096 4097 65536)
       -x DDTC_MPI_DEPTH=$(pick 1 2 3 4)
       -x DDTC_MPI_EAGER_LIMIT=$(pick 512 4096 65536)
       -x DDTC_MPI_EAGER_ASYNC=$(pick 0 1 1)
       -x DDTC_MPI_HOST_PACK=$(pick 0 1024 1000000)
       -x DDTC_MPI_PROGRESS=$(pick 0 1 1 1))
  case $protocol in
    pipeline) env+=(-x DDTC_MPI_HOST_READ=$(pick direct stage)
                    -x DDTC_MPI_FRAGMENT_MIN=$(pick 333 700 65536)) ;;
    ipc|auto) env+=(-x DDTC_MPI_IPC_READ=$(pick direct stage push push-copy pull auto)
                    -x DDTC_FAKE_GPU_PER_RANK=$(pick 0 1)
                    -x DDTC_MPI_PEER_TYPES=$(pick 2 256)
                    -x DDTC_MPI_IPC_CACHE=$(pick 1 2 3 64)
                    -x DDTC_MPI_FRAGMENT_MIN=$(pick 333 700 65536)) ;;
  esac
  run_seed=$RANDOM$RANDOM
  cmd=(timeout 300 mpirun -n $ranks --oversubscribe --bind-to none
       -x LD_PRELOAD="$layer" "${env[@]}" "$test_bin" --cases 60
       --seed $run_seed --suite $suite --threads $threads)
  log=$out/run-$runs.log
  "${cmd[@]}" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && grep -qE '[1-9][0-9]* passed, 0 failed' "$log"; then
    rm -f "$log"
  else
    failed=$((failed + 1))
    printf '%q ' "${cmd[@]}" >"$out/run-$runs.cmd"
    echo "run $runs FAILED (exit $rc): $out/run-$runs.cmd"
  fi
  if [ $((runs % 10)) -eq 0 ]; then
    echo "mpi-soak: $runs runs, $failed failed, $(((end - SECONDS + 59) / 60)) min left"
  fi
done
echo "mpi-soak: $runs runs, $failed failed (seed $seed)"
[ $failed -eq 0 ]
