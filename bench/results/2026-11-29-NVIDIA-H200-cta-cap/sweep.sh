#!/usr/bin/env bash
# The kernels' grid capped (ddtc-bench --max-ctas N: every pack and unpack
# passes N as its CTA cap, and the kernels loop over their blocks' steps)
# against the library's launch of a block per 256 threads' chunks (N = 0),
# on a layout of each kernel family. Two rounds of the settings in turn,
# each run with a cache folder of its own; the first round checks every
# point's bytes.
#   sweep.sh BUILD_DIR OUT
set -uo pipefail
build=$1 out=${2:-/tmp/cta-cap}
export LD_LIBRARY_PATH="$build/lib:${LD_LIBRARY_PATH:-}"
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
python3 "$root/bench/layouts.py" --tsv > "$out/layouts.tsv"
only=""
for l in cube512-interior vector-16B-aligned vector-256B-aligned \
         vector-256B-unaligned vector-4096B-unaligned particles \
         particle-fields double-char lower-8000 random-hindexed \
         transpose-4096 cube512-z-lo; do
  only="$only --only $l"
done
for round in 1 2; do
  check=; [ $round = 2 ] && check=--no-check
  for n in 0 1056 2112 4224; do
    DDTC_CACHE_DIR=$(mktemp -d) timeout 200 "$build/bin/ddtc-bench" \
      --layouts "$out/layouts.tsv" $only $check --max-ctas $n \
      --out "$out/cap$n-$round.json" > "$out/cap$n-$round.log" 2>&1
    echo "cap $n round $round exit $?"
  done
done
rm -f "$out/layouts.tsv"
