#!/bin/bash
# A/B: this build (A) vs units kernels with two chunks a lane loaded together (B), alternating twice.
set -u
python3 bench/layouts.py --tsv > /tmp/L.tsv
ONLY=""
for n in ${LAYOUTS:-lower-1000 lower-2000 lower-4000 lower-8000 lower-16000 random-hindexed}; do ONLY="$ONLY --only $n"; done
for r in 1 2; do
  for v in A B; do
    d=$(mktemp -d)
    if [ $v = A ]; then BIN="env LD_LIBRARY_PATH=$PWD/build/lib build/bin/ddtc-bench"; else BIN="env LD_LIBRARY_PATH=$PWD/exp/units/lib build/bin/ddtc-bench"; fi
    DDTC_CACHE_DIR=$d $BIN --layouts /tmp/L.tsv --out $OUT/$v$r.json $ONLY > $OUT/$v$r.txt 2>&1 || echo "FAIL $v$r"
  done
done
python3 - <<'PY'
import json,os
out=os.environ['OUT']
rows={}
for v in 'AB':
  for r in '12':
    j=json.load(open(f'{out}/{v}{r}.json'))
    for n,l in j['layouts'].items():
      rows.setdefault(n,{})[v+r]=(l.get("pack_vs_memcpy"),l.get("unpack_vs_memcpy"),l.get("host_vs_d2h"),l.get("check"),l.get("kernel_origin"))
print("layout  A1/A2/B1/B2: pack unpack host check origin")
for n,d in rows.items():
  print(f"{n:26s}", "  ".join(f"{k}: " + " ".join(f"{x:.3f}" if isinstance(x,float) else str(x) for x in d[k]) for k in sorted(d)))
PY
