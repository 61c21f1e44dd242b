#!/usr/bin/env bash
# The strided kernels' locate of a packed byte: OLD divides it by the
# instance's size for every chunk; NEW skips the division (a uniform branch)
# when the call's bytes lie in the first instance, as in every layout of
# the benchmark but one. ddtc-bench on a layout of each strided kernel and
# a units one (control), the two builds of libddtc alternating, three
# rounds, each run with a cache folder of its own.
#   ab.sh BUILD_DIR OLD_LIB_DIR NEW_LIB_DIR OUT
set -uo pipefail
build=$1 old=$2 new=$3 out=${4:-/tmp/one-instance}
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
python3 "$root/bench/layouts.py" --tsv > "$out/layouts.tsv"
only=""
for l in particles vector-256B-unaligned vector-4096B-unaligned \
         vector-16B-aligned vector-256B-aligned cube512-interior \
         cube512-x-lo cube512-z-lo particle-fields double-char \
         lower-4000; do
  only="$only --only $l"
done
for round in 1 2 3; do
  for which in old new; do
    lib=$old; [ $which = new ] && lib=$new
    DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$lib timeout 200 \
      "$build/bin/ddtc-bench" --layouts "$out/layouts.tsv" $only \
      --out "$out/$which-$round.json" > "$out/$which-$round.log" 2>&1
    echo "$which $round exit $?"
  done
done
rm -f "$out/layouts.tsv"
