#!/bin/bash
o=$OUT; b=build
export DDTC_CACHE_DIR=$(mktemp -d)
timeout 300 $b/bin/ddtc-gpu-tests --types 300 --mode all > $o/gpu-test.log 2>&1; echo "gpu-test rc=$?"; tail -4 $o/gpu-test.log
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 --check-api-memory-access no --report-api-errors no $b/bin/ddtc-gpu-tests --types 20 --seed 11 --mode sync > $o/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -3 $o/memcheck.log
python3 bench/layouts.py --tsv > $o/layouts.tsv
L="--only vector-1024B-unaligned --only vector-4096B-unaligned --only vector-65536B-unaligned"
for i in 1 2; do
DDTC_CACHE_DIR=$(mktemp -d) timeout 250 $b/bin/ddtc-bench --layouts $o/layouts.tsv --out $o/runs-$i.json $L > $o/runs-$i.txt 2>&1; echo "runs rc=$?"
DDTC_EXP_RUN_ALIGNED_WORD=1000000000 DDTC_CACHE_DIR=$(mktemp -d) timeout 250 $b/bin/ddtc-bench --layouts $o/layouts.tsv --out $o/gather-$i.json $L > $o/gather-$i.txt 2>&1; echo "gather rc=$?"
done
python3 - "$o" <<'PY'
import json,sys
o=sys.argv[1]
runs={}
for n in ["runs-1","gather-1","runs-2","gather-2"]:
    try: runs[n]=json.load(open(f"{o}/{n}.json"))["layouts"]
    except Exception as e: print(n, e); runs[n]={}
print("layout  unpack_vs_memcpy", " ".join(runs), "| shapes")
for k in runs["runs-1"]:
    u=" ".join(f"{runs[n].get(k,{}).get('unpack_vs_memcpy',0):.3f}" for n in runs)
    print(f"{k:28s} {u} | {runs['runs-1'][k].get('shape')} {runs['gather-1'].get(k,{}).get('shape')} {runs['gather-1'].get(k,{}).get('check')}")
PY
cd $o && tar czf ab3.tgz *.json *.txt *.log && rm -f *.json *.txt layouts.tsv *.log
