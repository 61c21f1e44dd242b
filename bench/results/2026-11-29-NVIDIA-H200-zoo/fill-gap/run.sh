#!/usr/bin/env bash
# The unpack's L2 prefetch of partial run edges on (A, the default range
# compiled with the options) and off (B), side by side, over layouts whose
# runs are 16 bytes apart, after chunks across two runs stopped walking.
# (ab1/ and ab2/ were measured with a build that also had a setting for
# the smallest gap between runs to fill, not kept: ab1/A is the default,
# ab1/B a gap of 32 bytes, ab2/A 64 bytes, ab2/B no prefetch. This script
# measures the two ends with the settings the library has.)
#   run.sh BUILD OUT
set -u
build=$1 out=$2
here=$(dirname "$0")
o=DDTC_NVRTC_OPTIONS
ROUNDS=2 ENV_A="$o=-DDDTC_FILL_MIN_RUN=32 -DDDTC_FILL_MAX_RUN=2048" \
  ENV_B="$o=-DDDTC_FILL_MIN_RUN=4096 -DDDTC_FILL_MAX_RUN=0" \
  bench/side-by-side.sh "$here/layouts.tsv" "$build/lib" "$out" "$build" > "$out/table.txt" 2>&1
