#!/usr/bin/env bash
# Strided plans of short runs at the runs' own word width (B) against the
# wider width their distance to the packed stream allows, with the byte path
# for the chunks that straddle runs (A, the library before), side by side.
#   run.sh BUILD LIB_A OUT
set -u
build=$1 lib_a=$2 out=$3
here=$(dirname "$0")
ROUNDS=2 bench/side-by-side.sh "$here/layouts.tsv" "$lib_a" "$out" "$build" > "$out/table.txt" 2>&1
