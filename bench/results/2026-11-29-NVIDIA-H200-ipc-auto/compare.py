#!/usr/bin/env python3
"""Prints, per layout and packed size, ddtc's one-way time over (a)'s and the
bandwidth fraction of (a) for each ddtc-mpi-bench JSON named, side by side.
   compare.py FILE.json...   (the column names are the file names)"""
import json
import os
import sys

runs = [(os.path.basename(f).removesuffix(".json"), json.load(open(f)))
        for f in sys.argv[1:]]
print("columns: ddtc us / (a) us, ddtc bandwidth / (a) bandwidth")
print(f"{'layout':22}{'MiB':>5}" + "".join(f"{n:>24}" for n, _ in runs))
keys = []
for _, r in runs:
    for p in r["points"]:
        k = (p["layout"], p["packed_bytes"])
        if k not in keys:
            keys.append(k)
for layout, size in keys:
    row = f"{layout:22}{size / 2**20:5.0f}"
    for _, r in runs:
        p = next((q for q in r["points"]
                  if (q["layout"], q["packed_bytes"]) == (layout, size)), None)
        if p is None or p.get("check") != "passed":
            row += f"{'-':>24}"
            continue
        row += f"{p['ddtc_us']:9.1f}/{p['a_us']:7.1f}{p['ddtc_vs_a_bandwidth']:6.2f}  "
    print(row)
failures = sum(len(r.get("failures", [])) for _, r in runs)
print(f"check failures in these files: {failures}")
