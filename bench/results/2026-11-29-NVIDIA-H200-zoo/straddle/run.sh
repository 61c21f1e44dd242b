#!/usr/bin/env bash
# Chunks across the end of a run and the start of the next moved as two
# pieces of words in the batch (B) against the walk (A, the library before),
# side by side.
#   run.sh BUILD LIB_A OUT
set -u
build=$1 lib_a=$2 out=$3
here=$(dirname "$0")
ROUNDS=2 bench/side-by-side.sh "$here/layouts.tsv" "$lib_a" "$out" "$build" > "$out/table.txt" 2>&1
