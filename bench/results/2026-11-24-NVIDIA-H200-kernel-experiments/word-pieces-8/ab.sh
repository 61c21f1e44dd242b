#!/bin/bash
# A/B: old build (A) vs this build (B), alternating twice.
set -u
python3 bench/layouts.py --tsv > /tmp/L.tsv
ONLY=""
for n in ${LAYOUTS:-vector-16B-unaligned vector-64B-unaligned vector-128B-unaligned vector-256B-unaligned vector-1024B-unaligned vector-4096B-unaligned vector-65536B-unaligned vector-256B-aligned vector-4096B-aligned cube512-x-lo cube512-y-lo cube512-interior particles lower-8000}; do ONLY="$ONLY --only $n"; done
for r in 1 2; do
  for v in A B; do
    d=$(mktemp -d)
    if [ $v = A ]; then BIN="build/bin/ddtc-bench"; else BIN="env DDTC_EXP_W4RUN8=1 build/bin/ddtc-bench"; fi
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
      rows.setdefault(n,{})[v+r]=(l.get("pack_vs_memcpy"),l.get("unpack_vs_memcpy"),l.get("host_vs_d2h"),l.get("pack_vs_traffic"),l.get("check"),l.get("shape"))
print("layout  A1/A2/B1/B2: pack unpack host check")
for n,d in rows.items():
  print(f"{n:26s}", "  ".join(f"{k}: " + " ".join(f"{x:.3f}" if isinstance(x,(int,float)) else str(x) for x in d[k]) for k in sorted(d)))
PY
