#!/usr/bin/env python3
"""Side by side: each JSON of ddtc-mpi-bench given, per layout and size,
"ddtc us / (a) us  ddtc's bandwidth as a fraction of (a)'s".
   compare.py A.json B.json ..."""
import json
import sys

files = sys.argv[1:]
data = {f: {(p['layout'], p['target_bytes']): p
            for p in json.load(open(f))['points']} for f in files}
print("columns: ddtc us / (a) us, ddtc bandwidth / (a) bandwidth")
print("%-22s %6s " % ("layout", "MiB") + " ".join(
    "%22s" % f.split('/')[-1].replace('.json', '')[:22] for f in files))
for k in data[files[0]]:
    row = []
    for f in files:
        p = data[f].get(k)
        row.append("%22s" % "-" if not p else "%9.1f/%6.1f %5.2f" % (
            p['ddtc_us'], p['a_us'], p['ddtc_vs_a_bandwidth'] or 0))
    print("%-22s %6d " % (k[0], k[1] >> 20) + " ".join(row))
