#!/usr/bin/env bash
# Where NVRTC's time goes on this machine: intrinsic compile times, then the
# library's compiles in sequences, then the bench with verbose compiles.
O=${1:?results folder}; mkdir -p $O
exec > $O/log.txt 2>&1
set -x
nproc; grep -m1 "model name" /proc/cpuinfo; free -g; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; uptime
python3 PROBES/nv.py PROBES/*.cu
python3 PROBES/nv.py PROBES/*.cu
for s in aos-3of5-float,aos-xyz-float,rows-of-records \
  lower-16000,random-hindexed,indexed-short,aos-3of5-float,aos-xyz-float,rows-of-records \
  vector-4B-aligned,cube512-interior,particles,aos-3of5-float; do
  DDTC_VERBOSE=1 DDTC_CACHE_DIR=$(mktemp -d) LIB=PROBES/lib/libddtc.so.0 timeout 120 python3 PROBES/seq.py PROBES/all.tsv $s
done
vmstat 1 > $O/vmstat.txt &
V=$!
for i in 1 2; do
  c=$(mktemp -d)
  DDTC_VERBOSE=1 DDTC_CACHE_DIR=$c LD_LIBRARY_PATH=PROBES/lib timeout 250 PROBES/bin/ddtc-bench --layouts PROBES/all.tsv --out $O/bench$i.json > $O/bench$i.txt 2> $O/bench$i.err
  echo "bench $i rc $?"; uptime
done
kill $V
grep -h "compiled" $O/bench*.err | sed 's/.*shape //' 
