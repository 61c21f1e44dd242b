#!/bin/bash
set -u
B=build
NCU=/usr/local/cuda/bin/ncu
python3 bench/layouts.py --tsv > /tmp/L.tsv
n=particles
for k in unpack pack; do
  d=$(mktemp -d)
  DDTC_CACHE_DIR=$d timeout 300 $NCU --kernel-name regex:"_${k}\$" --launch-skip 2 --launch-count 1 --set full -o /tmp/$k \
      $B/bin/ddtc-bench --layouts /tmp/L.tsv --only $n --out /tmp/x.json > /tmp/$k.log 2>&1 || echo "FAIL $k"
  $NCU -i /tmp/$k.ncu-rep --page source --csv --print-source sass > $OUT/$k-sass.csv 2>&1
  $NCU -i /tmp/$k.ncu-rep --page details > $OUT/$k-details.txt 2>&1
  grep -E "ddtc_|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache|Issue Slots Busy|Executed Instructions  |Registers Per|Achieved Occ|highest-utilized" $OUT/$k-details.txt
done
