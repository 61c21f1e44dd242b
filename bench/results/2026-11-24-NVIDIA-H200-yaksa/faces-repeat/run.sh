#!/bin/bash
set -u
tar xJf .external/yaksa-lib.tar.xz -C /tmp
python3 bench/layouts.py --tsv > /tmp/L.tsv
for r in 1 2 3; do
  DDTC_CACHE_DIR=$(mktemp -d) timeout 120 build/bin/ddtc-bench --layouts /tmp/L.tsv --out $OUT/z$r.json --yaksa /tmp/yaksa/lib/libyaksa.so --yaksa-no-host --yaksa-timeout 20 --only cube512-z-lo --only cube512-z-hi --only cube512-x-hi --only cube512-y-hi > $OUT/z$r.txt 2>&1
done
python3 - <<'PY'
import json,os
o=os.environ['OUT']
for r in '123':
  j=json.load(open(f'{o}/z{r}.json'))
  for n,l in j['layouts'].items():
    print(r, f"{n:14s} pack {l['pack_us']:.2f} yk {l.get('yaksa_pack_us',0):.2f}  unpack {l['unpack_us']:.2f} yk {l.get('yaksa_unpack_us',0):.2f}  ratio up {l.get('ddtc_vs_yaksa_unpack',0):.3f} shape {l['shape']}")
PY
