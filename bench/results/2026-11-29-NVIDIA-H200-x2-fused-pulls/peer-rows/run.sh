#!/bin/bash
# Ran as build-gpu/rows.sh from the repository root (two GPUs, CuPy).
cd "$(dirname "$0")/.."
O=$OUT/rows; mkdir -p $O
for mib in 4 64; do
  timeout 200 python3 bench/peer-rows.py --mib $mib --reps 15 --json $O/peer-rows-$mib.json > $O/peer-rows-$mib.txt 2>&1
  echo "== $mib MiB exit $?"; cat $O/peer-rows-$mib.txt
done
