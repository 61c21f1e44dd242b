#!/usr/bin/env python3
"""Tabulates side-by-side rounds of ddtc-bench: for every layout and every
variant, the values of the chosen fields over the rounds, sorted.

The folder holds one ddtc-bench JSON per variant and round, named
VARIANT-ROUND.json (old-1.json, new-1.json, ...), as the side-by-side scripts
in bench/results/*/ write them, or A1.json, B1.json, ... as
bench/side-by-side.sh writes them.

  bench/ab-table.py FOLDER [FIELD ...]

FIELD is a key of a layout's record in the JSON (default: pack_us and
unpack_us; e.g. unpack_vs_memcpy, unpack_vs_traffic, pack_vs_traffic).
"""

import argparse
import collections
import glob
import json
import os
import re
import sys


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("fields", nargs="*", default=["pack_us", "unpack_us"])
    args = ap.parse_args()
    runs = collections.defaultdict(lambda: collections.defaultdict(list))
    named = []
    for f in sorted(glob.glob(os.path.join(args.folder, "*.json"))):
        stem = os.path.basename(f)[:-len(".json")]
        m = (re.fullmatch(r"(.+)-(\d+)", stem) or
             re.fullmatch(r"([A-Za-z]+)(\d+)", stem))
        if m:
            named.append((m.group(1), f))
    if not named:
        sys.exit(f"ab-table.py: no VARIANT-ROUND.json or A1.json in "
                 f"{args.folder}")
    for variant, f in named:
        with open(f) as fh:
            layouts = json.load(fh)["layouts"]
        for name, record in layouts.items():
            runs[name][variant].append(record)
    for name, variants in runs.items():
        print(name)
        for variant in sorted(variants):
            cells = []
            for field in args.fields:
                values = sorted(r[field] for r in variants[variant]
                                if r.get(field) is not None)
                if not values:
                    sys.exit(f"ab-table.py: no field {field} in {name}")
                cells.append(f"{field} " + " ".join(f"{v:.3f}" for v in values))
            print(f"  {variant:6s} " + "; ".join(cells))


if __name__ == "__main__":
    main()
