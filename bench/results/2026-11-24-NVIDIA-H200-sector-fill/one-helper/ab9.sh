#!/bin/bash
# A/B: old library (A, exp/base/lib) vs the working tree's (B), alternating twice.
set -u
B=build
cp exp/L9.tsv $OUT/L.tsv
ONLY=""
for n in $(cut -f1 exp/L9.tsv); do ONLY="$ONLY --only $n"; done
for r in 1 2; do
  for v in A B; do
    d=$(mktemp -d)
    if [ $v = A ]; then LP=$PWD/exp/base/lib; else LP=$PWD/$B/lib; fi
    LD_LIBRARY_PATH=$LP DDTC_CACHE_DIR=$d $B/bin/ddtc-bench --layouts $OUT/L.tsv --out $OUT/$v$r.json $ONLY > $OUT/$v$r.txt 2>&1 || echo "FAIL $v$r"
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
      rows.setdefault(n,{})[v+r]=(l.get('pack_vs_memcpy'),l.get('unpack_vs_memcpy'),l.get('check'))
for n,d in rows.items():
  print(f"{n:28s}", "  ".join(f"{k}: " + " ".join(f"{x:.3f}" if isinstance(x,(int,float)) else str(x) for x in d[k]) for k in sorted(d)))
PY
