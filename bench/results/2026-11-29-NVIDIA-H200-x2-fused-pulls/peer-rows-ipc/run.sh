#!/bin/bash
# Ran as build-gpu/ipcrows.sh from the repository root (two GPUs, CuPy).
cd "$(dirname "$0")/.."
O=$OUT/ipcrows; mkdir -p $O
for mib in 16 64; do
  timeout 150 python3 bench/peer-rows-ipc.py --mib $mib --reps 15 --json $O/peer-rows-ipc-$mib.json > $O/peer-rows-ipc-$mib.txt 2>&1
  echo "== $mib MiB exit $?"; cat $O/peer-rows-ipc-$mib.txt
done
