#!/usr/bin/env bash
# Measures two builds of libddtc side by side on the same GPU: ddtc-bench
# over the same layouts with library A (a folder holding libddtc.so.0 of
# another commit) and library B (the build folder's), alternating A, B for
# several rounds in one process tree, each with a fresh kernel cache. Then
# prints, per layout and run, pack and unpack against memcpy and against
# the traffic limit, mapped host against pinned D2H, and the check.
#
#   bench/side-by-side.sh LAYOUTS.tsv LIB_A OUT_DIR [BUILD_DIR]
#
# LAYOUTS.tsv: rows of `bench/layouts.py --tsv` (name, group, count, origin
# offset, memcpy2D and memcpy3D shapes or -, spec with \n for newlines).
# LIB_A: a folder with libddtc.so.0 (e.g. built at the commit to compare
# against with `ninja -C build lib/libddtc.so.0.1.0` and copied there under
# that name). BUILD_DIR (default build) gives ddtc-bench and library B.
# ROUNDS (default 2) sets the rounds. ENV_A and ENV_B (default empty) are
# settings for one side's runs only, e.g. ENV_A="DDTC_MAPPED_CHUNKS=0" with
# LIB_A the build's own lib folder compares one library with and without a
# setting; a word without `=` (or starting with `-`) continues the value
# before it. Writes OUT_DIR/{A,B}<round>.{json,txt}.
set -u
usage() { sed -n '2,/^[^#]/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  usage
  exit 0
fi
if [ $# -lt 3 ]; then
  usage >&2
  exit 2
fi
layouts=$1 lib_a=$2 out=$3 build=${4:-build}
rounds=${ROUNDS:-2}
for f in "$layouts" "$lib_a/libddtc.so.0" "$build/bin/ddtc-bench" \
  "$build/lib/libddtc.so.0"; do
  [ -e "$f" ] || { echo "side-by-side.sh: $f does not exist" >&2; exit 2; }
done
mkdir -p "$out"
only=()
for n in $(cut -f1 "$layouts"); do only+=(--only "$n"); done
for r in $(seq 1 "$rounds"); do
  for v in A B; do
    if [ $v = A ]; then lib=$(cd "$lib_a" && pwd); settings=${ENV_A:-}
    else lib=$(cd "$build/lib" && pwd); settings=${ENV_B:-}; fi
    cache=$(mktemp -d)
    echo "round $r, library $v ($lib)${settings:+, $settings}"
    # Settings are words of NAME=VALUE; a word without `=` continues the
    # value before it (DDTC_NVRTC_OPTIONS=-DA=1 -DB=2 is one setting).
    words=()
    for w in $settings; do
      if [[ $w == *=* && $w != -* ]] || [ ${#words[@]} -eq 0 ]; then words+=("$w")
      else words[-1]+=" $w"; fi
    done
    env "${words[@]}" LD_LIBRARY_PATH=$lib DDTC_CACHE_DIR=$cache "$build/bin/ddtc-bench" \
      --layouts "$layouts" --out "$out/$v$r.json" "${only[@]}" \
      > "$out/$v$r.txt" 2>&1 || echo "side-by-side.sh: run $v$r failed (see $out/$v$r.txt)"
    rm -rf "$cache"
  done
done
OUT=$out python3 - <<'PY'
import json, os
out = os.environ["OUT"]
keys = ("pack_vs_memcpy", "unpack_vs_memcpy", "pack_vs_traffic",
        "unpack_vs_traffic", "host_vs_d2h", "check")
rows = {}
for name in sorted(os.listdir(out)):
    if not name.endswith(".json") or name[0] not in "AB":
        continue
    try:
        layouts = json.load(open(os.path.join(out, name)))["layouts"]
    except (OSError, ValueError, KeyError) as e:
        print(name, "unreadable:", e)
        continue
    for layout, fig in layouts.items():
        rows.setdefault(layout, {})[name[:-5]] = [fig.get(k) for k in keys]
print("columns: pack/memcpy unpack/memcpy pack/traffic unpack/traffic "
      "host/d2h check")
for layout, runs in rows.items():
    print(layout)
    for run in sorted(runs):
        print("   ", run, " ".join(f"{x:.3f}" if isinstance(x, (int, float))
                                   else str(x) for x in runs[run]))
PY
