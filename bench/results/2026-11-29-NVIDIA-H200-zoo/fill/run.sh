#!/usr/bin/env bash
# The unpack kernels' L2 prefetch of the partial sectors at the ends of runs
# of 32 B - 2 KiB, on (A, the default range compiled with the options) and
# off (B), side by side; both compiled by NVRTC (DDTC_NVRTC_OPTIONS turns the
# built-in kernels off).
#   run.sh BUILD OUT
set -u
build=$1 out=$2
here=$(dirname "$0")
ROUNDS=2 ENV_A="DDTC_NVRTC_OPTIONS=-DDDTC_FILL_MIN_RUN=32 -DDDTC_FILL_MAX_RUN=2048" \
  ENV_B="DDTC_NVRTC_OPTIONS=-DDDTC_FILL_MIN_RUN=4096 -DDDTC_FILL_MAX_RUN=0" \
  bench/side-by-side.sh "$here/layouts.tsv" "$build/lib" "$out" "$build" > "$out/table.txt" 2>&1
