#!/usr/bin/env bash
# The strided shapes' kernels built into libddtc: ddtc-bench over every
# layout with them (A, the defaults) and without them (B,
# DDTC_BUILTIN_STRIDED=0: every specialized kernel compiled by NVRTC), one
# round each, each run with a kernel cache folder of its own; then the GPU
# suite's random types with the defaults.
#   run.sh BUILD_DIR OUT
set -uo pipefail
build=$1 out=$2
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
export LD_LIBRARY_PATH=$build/lib
t0=$SECONDS
python3 "$root/bench/layouts.py" --tsv > "$out/layouts.tsv"
ROUNDS=1 ENV_B="DDTC_BUILTIN_STRIDED=0" bash "$root/bench/side-by-side.sh" \
  "$out/layouts.tsv" "$build/lib" "$out/ab" "$build" > "$out/ab.txt" 2>&1
echo "side-by-side exit $? after $((SECONDS - t0)) s"
DDTC_CACHE_DIR=$(mktemp -d) timeout 150 \
  "$build/bin/ddtc-gpu-tests" --types 120 --seed 31 --mode all \
  > "$out/gpu-tests.log" 2>&1
echo "gpu-tests exit $? after $((SECONDS - t0)) s"
tail -3 "$out/gpu-tests.log"
rm -f "$out/layouts.tsv"
