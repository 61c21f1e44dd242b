#!/bin/bash
# A/B: commit 75f8cab's kernels (A) vs runs of one or two 4-byte words loaded together (B), alternating twice.
set -u
python3 bench/layouts.py --tsv > /tmp/L.tsv
ONLY=""
for n in ${LAYOUTS:-vector-4B-aligned vector-4B-unaligned vector-8B-unaligned vector-16B-unaligned vector-32B-unaligned vector-64B-unaligned vector-256B-unaligned}; do ONLY="$ONLY --only $n"; done
for r in 1 2; do
  for v in A B; do
    d=$(mktemp -d)
    if [ $v = A ]; then L=$PWD/exp/wordsA/lib; else L=$PWD/build/lib; fi
    DDTC_CACHE_DIR=$d env LD_LIBRARY_PATH=$L build/bin/ddtc-bench --layouts /tmp/L.tsv --out $OUT/$v$r.json $ONLY > $OUT/$v$r.txt 2>&1 || echo "FAIL $v$r"
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
      rows.setdefault(n,{})[v+r]=(l.get("pack_vs_memcpy"),l.get("pack_vs_traffic"),l.get("host_vs_d2h"),l.get("check"),l.get("shape"))
print("layout  A1/A2/B1/B2: pack/memcpy pack/traffic host check shape")
for n,d in rows.items():
  print(f"{n:26s}", "  ".join(f"{k}: " + " ".join(f"{x:.3f}" if isinstance(x,float) else str(x) for x in d[k]) for k in sorted(d)))
PY
