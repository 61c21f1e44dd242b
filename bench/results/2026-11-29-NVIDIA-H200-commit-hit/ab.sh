#!/usr/bin/env bash
# The commit of a type seen before, right after the parse of its spec, with
# two builds of libddtc side by side: BEFORE (each new handle's first commit
# allocates its kernel record) and AFTER (the handle brings it), alternating,
# eight rounds per layout.
#   ab.sh COMMIT_HIT_BINARY BEFORE_LIB_DIR AFTER_LIB_DIR OUT
set -uo pipefail
bin=$1 before=$2 after=$3 out=${4:-/tmp/commit-hit}
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
export DDTC_CACHE_DIR=$(mktemp -d)
for layout in random-hindexed lower-16000 lower-8000 particles; do
  python3 - "$root/bench" "$layout" > "$out/$layout.spec" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import layouts
print(next(l["spec"] for l in layouts.all_layouts() if l["name"] == sys.argv[2]))
PY
  for round in 1 2 3 4 5 6 7 8; do
    for which in before after; do
      lib=$before; [ $which = after ] && lib=$after
      echo "$layout $which $(LD_LIBRARY_PATH=$lib "$bin" "$out/$layout.spec")"
    done
  done
done | tee "$out/ab.txt"
