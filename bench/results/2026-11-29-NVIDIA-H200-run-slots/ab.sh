#!/usr/bin/env bash
# The run-aligned unpack of runs that all start at one place modulo 16:
# OLD gives every run (len + 14) / 16 + 1 destination vectors; NEW one
# fewer where that place leaves the last out (the particles: 3, not 4).
# ddtc-bench on the particles and 256 B aligned blocks (another kernel, a
# control), the two builds of libddtc alternating, three rounds, each run
# with a cache folder of its own; then the GPU suite and memcheck on a
# subset with NEW, and Nsight Compute on one unpack of each.
#   ab.sh BUILD_DIR OLD_LIB_DIR NEW_LIB_DIR OUT
# AB_BENCH_ONLY=1 skips the suite, memcheck and Nsight Compute.
set -uo pipefail
build=$1 old=$2 new=$3 out=${4:-/tmp/run-slots}
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
python3 "$root/bench/layouts.py" --tsv > "$out/layouts.tsv"
only="--only particles"
only="$only --only vector-256B-aligned"
for round in 1 2 3; do
  for which in old new; do
    lib=$old; [ $which = new ] && lib=$new
    DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$lib timeout 150 \
      "$build/bin/ddtc-bench" --layouts "$out/layouts.tsv" $only \
      --out "$out/$which-$round.json" > "$out/$which-$round.log" 2>&1
    echo "$which $round exit $?"
  done
done
if [ "${AB_BENCH_ONLY:-0}" = 1 ]; then rm -f "$out/layouts.tsv"; exit 0; fi
DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$new timeout 300 \
  "$build/bin/ddtc-gpu-tests" --types 300 --mode all > "$out/gpu-test.log" 2>&1
echo "gpu-test exit $?"
if command -v compute-sanitizer > /dev/null; then
  DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$new timeout 300 \
    compute-sanitizer --tool memcheck --error-exitcode 3 \
    --check-api-memory-access no --report-api-errors no \
    "$build/bin/ddtc-gpu-tests" --types 20 --seed 11 --mode sync \
    > "$out/memcheck.log" 2>&1
  echo "memcheck exit $?"
fi
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
  for which in old new; do
    lib=$old; [ $which = new ] && lib=$new
    for l in particles; do
      DDTC_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH=$lib timeout 150 \
        "$NCU" -k regex:'_unpack$' -c 1 --section SpeedOfLight \
        --section WarpStateStats --section InstructionStats \
        --section MemoryWorkloadAnalysis \
        "$build/bin/ddtc-bench" --layouts "$out/layouts.tsv" --only $l \
        --reps 1 --out /tmp/prof.json > "$out/ncu-$which-$l.txt" 2>&1
      echo "ncu $which $l exit $?"
    done
  done
fi
rm -f "$out/layouts.tsv"
