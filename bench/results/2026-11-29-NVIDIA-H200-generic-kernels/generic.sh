#!/usr/bin/env bash
# What a type's first calls run before its own kernels are compiled: the
# built-in generic kernels (nest kernels for strided layouts, the work-unit
# kernel otherwise), timed by ddtc-bench with DDTC_JIT=generic, against the
# type's specialized kernels (DDTC_JIT=sync) in the same call, one H200.
#   generic.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/generic}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$build/lib
python3 bench/layouts.py --tsv > "$out/layouts.tsv"
only=()
for l in vector-16B-aligned vector-256B-unaligned vector-4096B-aligned \
         cube512-x-lo cube512-z-lo cube512-interior lower-4000 particles \
         aos-xyz-float random-hindexed indexed-short transpose-4096; do
  only+=(--only $l)
done
for mode in generic sync; do
  t0=$SECONDS
  DDTC_CACHE_DIR=$(mktemp -d) DDTC_JIT=$mode timeout 280 $build/bin/ddtc-bench \
    --layouts "$out/layouts.tsv" --out "$out/$mode.json" --reps 20 "${only[@]}" \
    > "$out/$mode.log" 2>&1
  echo "== $mode: exit $? after $((SECONDS - t0)) s"
done
rm -f "$out/layouts.tsv"
python3 "$here/compare.py" "$out/generic.json" "$out/sync.json" | tee "$out/compare.txt"
