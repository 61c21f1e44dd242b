#!/bin/bash
set -u
B=build
for v in A B; do
  d=$(mktemp -d)
  if [ $v = A ]; then LP=$PWD/exp/old/lib; else LP=$PWD/$B/lib; fi
  LD_LIBRARY_PATH=$LP DDTC_CACHE_DIR=$d $B/bin/ddtc-bench --layouts exp/L2.tsv --out $OUT/$v.json > $OUT/$v.txt 2>&1 || echo "FAIL $v"
  cat $OUT/$v.txt | cut -c1-200
done
python3 - <<'PY'
import json,os
out=os.environ['OUT']
for v in 'AB':
  j=json.load(open(f'{out}/{v}.json'))
  for n,l in j['layouts'].items():
    print(v, f"{n:12s}", l.get('shape'), round(l['pack_vs_memcpy'],3), round(l['unpack_vs_memcpy'],3), round(l['pack_vs_traffic'],3), round(l['unpack_vs_traffic'],3), l['pack_us'], l['unpack_us'])
PY
