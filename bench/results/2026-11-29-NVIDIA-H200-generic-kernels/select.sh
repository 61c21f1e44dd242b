#!/usr/bin/env bash
# After the runtime launches the nest kernels for single runs of whole
# words per point instead of their record period kernels: the GPU suite in
# sync mode (each type's own kernels, or the nest kernels where they serve
# better), then ddtc-bench on the layouts concerned and a record of two runs
# beside them. One H200.
#   select.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/select}; mkdir -p "$out"
export LD_LIBRARY_PATH=$build/lib
t0=$SECONDS
DDTC_CACHE_DIR=$(mktemp -d) timeout 100 $build/bin/ddtc-gpu-tests --mode sync --types 150 \
  > "$out/gpu-tests-sync.log" 2>&1
echo "== gpu-tests sync: exit $? after $((SECONDS - t0)) s"; tail -n 2 "$out/gpu-tests-sync.log"
python3 bench/layouts.py --tsv > "$out/layouts.tsv"
t0=$SECONDS
DDTC_CACHE_DIR=$(mktemp -d) DDTC_JIT=sync timeout 100 $build/bin/ddtc-bench \
  --layouts "$out/layouts.tsv" --out "$out/sync.json" --reps 15 --only aos-xyz-float \
  --only aos-3of5-float --only particle-fields > "$out/sync.log" 2>&1
echo "== bench sync: exit $? after $((SECONDS - t0)) s"
rm -f "$out/layouts.tsv"
cat "$out/sync.log" | head -8
