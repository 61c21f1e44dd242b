#!/bin/bash
# A/B/C: DDTC_EXP_BATCH=1 (A), 2 (B), 4 (C), alternating twice.
set -u
python3 bench/layouts.py --tsv > /tmp/L.tsv
ONLY=""
for n in ${LAYOUTS:-vector-4B-aligned vector-8B-unaligned vector-32B-unaligned vector-128B-unaligned vector-256B-unaligned vector-1024B-unaligned vector-4096B-unaligned vector-65536B-unaligned cube512-x-lo cube512-y-lo cube512-interior particles}; do ONLY="$ONLY --only $n"; done
for r in 1 2; do
  for v in A B C; do
    case $v in A) k=1;; B) k=2;; C) k=4;; esac
    d=$(mktemp -d)
    DDTC_EXP_BATCH=$k DDTC_CACHE_DIR=$d build/bin/ddtc-bench --layouts /tmp/L.tsv --out $OUT/$v$r.json $ONLY > $OUT/$v$r.txt 2>&1 || echo "FAIL $v$r"
  done
done
python3 - <<'PY'
import json,os
out=os.environ['OUT']
rows={}
for v in 'ABC':
  for r in '12':
    j=json.load(open(f'{out}/{v}{r}.json'))
    for n,l in j['layouts'].items():
      rows.setdefault(n,{})[v+r]=(l.get("pack_vs_memcpy"),l.get("unpack_vs_memcpy"),l.get("host_vs_d2h"),l.get("check"))
print("layout  A=K1 B=K2 C=K4, rounds 1 2: pack unpack host check")
for n,d in rows.items():
  print(f"{n:26s}", "  ".join(f"{k}: " + " ".join(f"{x:.3f}" if isinstance(x,(int,float)) else str(x) for x in d[k]) for k in sorted(d)))
PY
