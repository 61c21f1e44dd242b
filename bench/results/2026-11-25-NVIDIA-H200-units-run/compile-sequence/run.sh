#!/usr/bin/env bash
O=$OUT
run() { # name lib layouts [env]
  c=$(mktemp -d)
  env $4 LD_LIBRARY_PATH=$PWD/$2 DDTC_CACHE_DIR=$c timeout 150 exp/n/bin/ddtc-bench --layouts $3 --out $O/$1.json > $O/$1.txt 2>&1
  echo "$1 rc $?" >> $O/rc.txt
  rm -rf $c
}
run new-all exp/n/lib exp/all.tsv
run old-all exp/e/lib exp/all.tsv DDTC_EXP_NO_TWOROWS=1
run new-nounits exp/n/lib exp/nounits.tsv
python3 - > $O/compiles.txt <<'P'
import json,os
O=os.environ["OUT"]
for n in ("new-all","old-all","new-nounits"):
    try: L=json.load(open(f"{O}/{n}.json"))["layouts"]
    except Exception as e: print(n,e); continue
    print(n, {k:round(v.get("nvrtc_ms",0),1) for k,v in L.items() if v.get("nvrtc_ms",0)>0})
P
