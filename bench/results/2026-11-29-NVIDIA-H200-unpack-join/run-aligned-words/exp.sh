#!/usr/bin/env bash
# Unpack of runs of 4-byte words whose place in a 16-byte vector varies from
# run to run (blocks at a 4-byte offset, stride not a multiple of 16): the
# gather kernel (A: chunks aligned in the packed buffer, three stores a
# chunk) against the run-aligned kernel (B: one aligned destination vector
# a thread) and the run-aligned kernel filling its runs' partial sectors
# ahead (C), chosen by DDTC_EXP_WORD_RUNS when the plan is made. Three
# alternating rounds of ddtc-bench, a cache folder each; then Nsight
# Compute on the unpack of three layouts under A and B/C.
#   exp.sh BUILD_DIR OUT
set -uo pipefail
build=$1 out=${2:-/tmp/word-runs}
export LD_LIBRARY_PATH="$build/lib:${LD_LIBRARY_PATH:-}"
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
python3 "$root/bench/layouts.py" --tsv > "$out/layouts.tsv"
only=""
for l in vector-32B-unaligned vector-64B-unaligned vector-128B-unaligned \
         vector-256B-unaligned vector-1024B-unaligned vector-4096B-unaligned \
         vector-65536B-unaligned vector-256B-aligned particles; do
  only="$only --only $l"
done
for round in 1 2 3; do
  for v in A B C; do
    exp=; [ $v = B ] && exp=1; [ $v = C ] && exp=2
    env ${exp:+DDTC_EXP_WORD_RUNS=$exp} DDTC_CACHE_DIR=$(mktemp -d) timeout 200 \
      "$build/bin/ddtc-bench" --layouts "$out/layouts.tsv" $only \
      --out "$out/$v-$round.json" > "$out/$v-$round.log" 2>&1
    echo "$v $round exit $?"
  done
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
prof() { # variant layout
  exp=; [ $1 = B ] && exp=1; [ $1 = C ] && exp=2
  env ${exp:+DDTC_EXP_WORD_RUNS=$exp} DDTC_CACHE_DIR=$(mktemp -d) timeout 150 \
    "$NCU" -k regex:'_unpack$' -c 1 --section SpeedOfLight \
    --section WarpStateStats --section InstructionStats \
    --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
    "$build/bin/ddtc-bench" --layouts "$out/layouts.tsv" --only "$2" --reps 1 \
    --out /tmp/prof.json > "$out/ncu-$1-$2.txt" 2>&1
  echo "ncu $1 $2 exit $?"
}
if [ -n "$NCU" ]; then
  prof A vector-256B-unaligned; prof B vector-256B-unaligned
  prof A vector-4096B-unaligned; prof B vector-4096B-unaligned
  prof A particles; prof C particles
  prof A cube512-interior
fi
rm -f "$out/layouts.tsv"
