#!/bin/bash
set -u
NCU=$(command -v ncu)
python3 bench/layouts.py --tsv > /tmp/L.tsv
run() { # layout kernel-regex name
  DDTC_CACHE_DIR=$(mktemp -d) timeout 200 $NCU -k regex:"$2" -c 1 \
    --section WarpStateStats --section SourceCounters --section InstructionStats --section SpeedOfLight --section Occupancy \
    --print-details all \
    build/bin/ddtc-bench --layouts /tmp/L.tsv --out /tmp/x.json --only $1 --reps 1 > $OUT/$3.txt 2>&1
  echo "=== $3"; grep -E "Stall|Issued Ipc|Executed Instructions |Warp Cycles Per Issued|Issue Slots Busy|DRAM Throughput" $OUT/$3.txt | head -40
}
run cube512-interior '_pack$' cube-pack
run vector-256B-unaligned '_unpack$' vec256u-unpack
run vector-256B-unaligned '_pack$' vec256u-pack
run particles '_pack$' particles-pack
run vector-256B-aligned '_pack$' vec256a-pack
cd $OUT && tar czf prof2.tgz *.txt && rm -f *.txt
