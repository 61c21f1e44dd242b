#!/usr/bin/env bash
# The nest kernels (DDTC_JIT=generic) against the types' own (sync) on the
# strided layouts generic.sh leaves out: vectors of narrow and misaligned
# blocks, a y face, and the records. One H200.
#   strided.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/strided}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$build/lib
python3 bench/layouts.py --tsv > "$out/layouts.tsv"
only=()
for l in vector-4B-aligned vector-4B-unaligned vector-8B-unaligned \
         vector-16B-unaligned vector-32B-unaligned vector-64B-unaligned \
         vector-128B-unaligned vector-1024B-unaligned cube512-y-lo \
         particle-fields aos-3of5-float double-char rows-of-records; do
  only+=(--only $l)
done
for mode in generic sync; do
  t0=$SECONDS
  DDTC_CACHE_DIR=$(mktemp -d) DDTC_JIT=$mode timeout 120 $build/bin/ddtc-bench \
    --layouts "$out/layouts.tsv" --out "$out/$mode.json" --reps 15 "${only[@]}" \
    > "$out/$mode.log" 2>&1
  echo "== $mode: exit $? after $((SECONDS - t0)) s"
done
rm -f "$out/layouts.tsv"
python3 "$here/compare.py" "$out/generic.json" "$out/sync.json" | tee "$out/compare.txt"
