#!/usr/bin/env bash
# Three ddtc-bench processes one after the other, each with a fresh kernel
# cache: this library on every layout, the older library on every layout,
# this library without the units layouts; then each layout's NVRTC time.
#
#   run.sh BENCH NEW_LIB_DIR OLD_LIB_DIR ALL.tsv NOUNITS.tsv OUT
#
# ALL.tsv: `python3 bench/layouts.py --tsv`; NOUNITS.tsv: the same less the
# rows lower-*, random-hindexed and indexed-short. The older library ran
# with DDTC_EXP_NO_TWOROWS=1, a setting of its experimental build that
# turns off what it had of the later two-row tiles.
bench=$1 new=$2 old=$3 all=$4 nounits=$5 O=$6
mkdir -p "$O"
run() { # name lib layouts [setting]
  c=$(mktemp -d)
  env $4 LD_LIBRARY_PATH="$2" DDTC_CACHE_DIR=$c timeout 150 "$bench" \
    --layouts "$3" --out "$O/$1.json" > "$O/$1.txt" 2>&1
  echo "$1 rc $?" >> "$O/rc.txt"
  rm -rf "$c"
}
run new-all "$new" "$all"
run old-all "$old" "$all" DDTC_EXP_NO_TWOROWS=1
run new-nounits "$new" "$nounits"
O=$O python3 - > "$O/compiles.txt" <<'P'
import json, os
O = os.environ["O"]
for n in ("new-all", "old-all", "new-nounits"):
    try:
        L = json.load(open(f"{O}/{n}.json"))["layouts"]
    except Exception as e:
        print(n, e)
        continue
    print(n, {k: round(v.get("nvrtc_ms", 0), 1) for k, v in L.items()
              if v.get("nvrtc_ms", 0) > 0})
P
