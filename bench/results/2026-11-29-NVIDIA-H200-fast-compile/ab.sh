#!/usr/bin/env bash
# NVRTC's --Ofast-compile: the same kernels compiled for speed of compiling.
# ddtc-bench over every layout of bench/layouts.py, the library's defaults
# (base) against DDTC_NVRTC_OPTIONS=--Ofast-compile=max (max), alternating,
# two rounds, then one round of --Ofast-compile=mid; each run with a kernel
# cache folder of its own (cold compiles: ddtc-bench turns the driver's
# compute cache off). Then the GPU suite's random types with max.
#   ab.sh BUILD_DIR OUT
set -uo pipefail
build=$1 out=$2
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
export LD_LIBRARY_PATH=$build/lib
python3 "$root/bench/layouts.py" --tsv > "$out/layouts.tsv"
run() { # name, options
  local t0=$SECONDS
  DDTC_CACHE_DIR=$(mktemp -d) DDTC_NVRTC_OPTIONS="$2" timeout 120 \
    "$build/bin/ddtc-bench" --layouts "$out/layouts.tsv" \
    --out "$out/$1.json" > "$out/$1.log" 2>&1
  echo "$1 (${2:-defaults}) exit $? after $((SECONDS - t0)) s"
}
for round in 1 2; do
  run "base-$round" ""
  run "max-$round" "--Ofast-compile=max"
done
run "mid-1" "--Ofast-compile=mid"
t0=$SECONDS
DDTC_CACHE_DIR=$(mktemp -d) DDTC_NVRTC_OPTIONS=--Ofast-compile=max timeout 150 \
  "$build/bin/ddtc-gpu-tests" --types 120 --seed 29 --mode all \
  > "$out/gpu-tests-max.log" 2>&1
echo "gpu-tests with max exit $? after $((SECONDS - t0)) s"
rm -f "$out/layouts.tsv"
