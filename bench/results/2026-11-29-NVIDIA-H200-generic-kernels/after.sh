#!/usr/bin/env bash
# After the nest kernels took a 16-byte chunk a thread: the GPU suite with
# the generic kernels forced (random types checked against the reference),
# memcheck of a part of it (API errors not reported: the suite passes bad
# pointers on purpose), then generic.sh again.
#   after.sh BUILD OUT
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/after}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$build/lib
t0=$SECONDS
DDTC_CACHE_DIR=$(mktemp -d) timeout 200 $build/bin/ddtc-gpu-tests --mode generic --types 300 \
  > "$out/gpu-tests-generic.log" 2>&1
echo "== gpu-tests generic: exit $? after $((SECONDS - t0)) s"; tail -n 3 "$out/gpu-tests-generic.log"
t0=$SECONDS
DDTC_CACHE_DIR=$(mktemp -d) timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no \
  $build/bin/ddtc-gpu-tests --mode generic --types 25 > "$out/memcheck-generic.log" 2>&1
echo "== memcheck generic: exit $? after $((SECONDS - t0)) s"; tail -n 3 "$out/memcheck-generic.log"
bash "$here/generic.sh" "$build" "$out/bench"
