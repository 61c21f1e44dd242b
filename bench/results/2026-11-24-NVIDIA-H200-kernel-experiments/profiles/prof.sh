#!/bin/bash
set -u
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"; [ -n "$NCU" ] || { ls /usr/local/cuda/bin | head -50; exit 0; }
python3 bench/layouts.py --tsv > /tmp/L.tsv
for n in particles vector-256B-unaligned vector-256B-aligned cube512-interior lower-8000 random-hindexed; do
  echo "=== $n"
  DDTC_CACHE_DIR=$(mktemp -d) timeout 200 $NCU -k regex:'ddtc.*pack' -c 2 \
    --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    build/bin/ddtc-bench --layouts /tmp/L.tsv --out /tmp/x.json --only $n --reps 1 > $OUT/$n.txt 2>&1
  grep -E "ddtc|Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Issue Slots|Executed Ipc|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Stall|==PROF==|Error" $OUT/$n.txt | head -60
done
cd $OUT && tar czf prof.tgz *.txt && rm -f *.txt
