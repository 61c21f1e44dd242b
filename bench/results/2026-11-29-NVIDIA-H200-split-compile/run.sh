#!/usr/bin/env bash
# NVRTC's --split-compile=N (the optimizer's work spread over N threads; 0:
# as many as the host has) on a 16-core GPU host: the compile times of every
# bench layout's kernels (bench/compile-apart.py, the runtime's way: pack and
# unpack as two programs at once), then the kernels' speed and the runtime's
# cold compiles with it (ddtc-bench over every layout, the defaults against
# DDTC_NVRTC_OPTIONS=--split-compile=0, two alternating rounds).
#   run.sh BUILD_DIR OUT
set -uo pipefail
build=$1 out=$2
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
export LD_LIBRARY_PATH=$build/lib
t0=$SECONDS
for n in 0 4; do
  timeout 150 python3 "$root/bench/compile-apart.py" "$build" --reps 3 \
    --with="--split-compile=$n" --json "$out/split$n.json" \
    > "$out/split$n.txt" 2>&1
  echo "compile-apart --split-compile=$n exit $? after $((SECONDS - t0)) s"
done
python3 "$root/bench/layouts.py" --tsv > "$out/layouts.tsv"
ROUNDS=2 ENV_B="DDTC_NVRTC_OPTIONS=--split-compile=0" bash \
  "$root/bench/side-by-side.sh" "$out/layouts.tsv" "$build/lib" "$out/ab" \
  "$build" > "$out/ab.txt" 2>&1
echo "side-by-side exit $? after $((SECONDS - t0)) s"
rm -f "$out/layouts.tsv"
tail -5 "$out"/split*.txt
