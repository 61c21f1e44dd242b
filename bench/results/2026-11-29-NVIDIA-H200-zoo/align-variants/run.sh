#!/usr/bin/env bash
# Calls whose origin lies 4 or 8 bytes past a 16-byte boundary, served by the
# type's own kernels (A, DDTC_ALIGN_VARIANTS=0) or by its variant for that
# offset (B, the default), side by side with the same library; the JIT
# synchronous, so that the variant made at the first call has its own
# kernels before the timed calls.
#   run.sh BUILD OUT
set -u
build=$1 out=$2
here=$(dirname "$0")
ROUNDS=2 ENV_A="DDTC_ALIGN_VARIANTS=0 DDTC_JIT=sync" \
  ENV_B="DDTC_ALIGN_VARIANTS=1 DDTC_JIT=sync" \
  bench/side-by-side.sh "$here/layouts.tsv" "$build/lib" "$out" "$build" > "$out/table.txt" 2>&1
