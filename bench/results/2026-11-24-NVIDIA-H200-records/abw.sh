#!/bin/bash
# A/B: old library (A, exp/base/lib) vs the working tree's (B), alternating twice.
set -u
B=build
L=${L:-exp/W.tsv}
cp $L $OUT/L.tsv
ONLY=""
for n in $(cut -f1 $L); do ONLY="$ONLY --only $n"; done
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
keys=('pack_vs_memcpy','unpack_vs_memcpy','pack_vs_traffic','unpack_vs_traffic','host_vs_d2h','check')
for v in 'AB':
  for r in '12':
    try: j=json.load(open(f'{out}/{v}{r}.json'))
    except Exception as e: print(v,r,e); continue
    for n,l in j['layouts'].items():
      rows.setdefault(n,{})[v+r]=tuple(l.get(k) for k in keys)
print("columns: pack/memcpy unpack/memcpy pack/traffic unpack/traffic host/d2h check")
for n,d in rows.items():
  print(n)
  for k in sorted(d):
    print("   ", k, " ".join(f"{x:.3f}" if isinstance(x,(int,float)) else str(x) for x in d[k]))
PY
