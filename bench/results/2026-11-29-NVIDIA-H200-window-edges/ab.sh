#!/usr/bin/env bash
# The window pack's edge vectors: OLD loads them byte-exact by one thread
# after the tile's other loads; NEW loads every vector inside the type's span
# whole with the others. ddtc-bench on the particles (the layout that takes
# the window pack) and a vector of 16-byte blocks (a control, another
# kernel), the two builds of libddtc alternating, three rounds, each run with
# a cache folder of its own.
#   ab.sh BUILD_DIR OLD_LIB_DIR NEW_LIB_DIR OUT
set -uo pipefail
build=$1 old=$2 new=$3 out=${4:-/tmp/window-edges}
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
python3 "$root/bench/layouts.py" --tsv > "$out/layouts.tsv"
for round in 1 2 3; do
  for which in old new; do
    lib=$old; [ $which = new ] && lib=$new
    DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$lib timeout 120 \
      "$build/bin/ddtc-bench" --layouts "$out/layouts.tsv" --only particles \
      --only vector-16B-aligned --out "$out/$which-$round.json" \
      > "$out/$which-$round.log" 2>&1
    echo "$which $round exit $?"
  done
done
rm -f "$out/layouts.tsv"
