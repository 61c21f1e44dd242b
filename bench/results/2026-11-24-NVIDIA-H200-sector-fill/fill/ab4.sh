#!/bin/bash
# Three libraries: A exp/old (no fill), P exp/pf (prefetch.L2), C build (ld.global.cg)
set -u
B=build
/usr/local/cuda/bin/cuobjdump -sass exp/v.cubin | grep -E "LDG|CCTL" | head -20
ONLY=""
for n in $(cut -f1 exp/L3.tsv); do ONLY="$ONLY --only $n"; done
for r in 1 2; do
  for v in A P C; do
    d=$(mktemp -d)
    case $v in A) LP=$PWD/exp/old/lib;; P) LP=$PWD/exp/pf/lib;; C) LP=$PWD/$B/lib;; esac
    LD_LIBRARY_PATH=$LP DDTC_CACHE_DIR=$d $B/bin/ddtc-bench --layouts exp/L3.tsv --out $OUT/$v$r.json $ONLY > $OUT/$v$r.txt 2>&1 || echo "FAIL $v$r"
  done
done
python3 - <<'PY'
import json,os
out=os.environ['OUT']
rows={}
for v in 'APC':
  for r in '12':
    j=json.load(open(f'{out}/{v}{r}.json'))
    for n,l in j['layouts'].items():
      rows.setdefault(n,{})[v+r]=(l.get('unpack_vs_memcpy'),l.get('unpack_vs_traffic'))
for n,d in rows.items():
  print(f"{n:24s}", " ".join(f"{k}:{d[k][0]:.3f}/{d[k][1]:.2f}" for k in sorted(d)))
PY
