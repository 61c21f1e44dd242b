#!/usr/bin/env bash
# Which other path slows the first IPC message after it: the ping-pong of
# 64 MiB vectors timed with (b) alone, with (c) alone, and with every path
# while the receiver stages its reads (a copy engine instead of the unpack
# kernel reading the peer's memory).
#   probe2.sh BUILD OUT
set -uo pipefail
build=$1 out=$2
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$build/lib
x=(mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
   -np 2 -x LD_PRELOAD=$build/lib/libddtc-mpi.so -x LD_LIBRARY_PATH
   -x DDTC_CACHE_DIR)
"${x[@]}" "$build/bin/ddtc-mpi-calibrate" >"$out/calibrate.txt" 2>&1
b=("$build/bin/ddtc-mpi-bench" --refs device --sizes 64M --reps 10
   --layouts vector-4KiB,particles)
run() { local name=$1; shift
  "$@" --json "$out/$name.json" >"$out/$name.txt" 2>&1
  echo "== $name rc $?"; }
run ddtc-b "${x[@]}" "${b[@]}" --time ddtc,b
run ddtc-c "${x[@]}" "${b[@]}" --time ddtc,c
run all-stage "${x[@]}" -x DDTC_MPI_IPC_READ=stage "${b[@]}"
for f in ddtc-b ddtc-c all-stage; do
  python3 - "$out/$f.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d['points']:
    m = p['methods']
    print(sys.argv[1].split('/')[-1], p['layout'], p['packed_bytes'],
          [round(x) for x in m['ddtc']['one_way_us']],
          [round(x) for x in m['a']['one_way_us']])
PY
done
