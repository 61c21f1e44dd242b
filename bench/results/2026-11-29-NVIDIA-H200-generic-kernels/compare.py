#!/usr/bin/env python3
"""Per layout, the pack and unpack times of two ddtc-bench JSON files (A
then B), which kernels ran (kernel_origin) and A's time over B's.
   compare.py A.json B.json"""
import json
import sys

a, b = (json.load(open(f))['layouts'] for f in sys.argv[1:3])
print("%-24s %8s %-10s %-10s %9s %9s %6s %9s %9s %6s" % (
    "layout", "MiB", "A kernel", "B kernel", "A pack", "B pack", "A/B",
    "A unpack", "B unpack", "A/B"))
for name, x in a.items():
    y = b.get(name)
    if not y:
        continue
    print("%-24s %8.1f %-10s %-10s %9.1f %9.1f %6.2f %9.1f %9.1f %6.2f" % (
        name, x['packed_bytes'] / 2**20, str(x.get('kernel_origin'))[:10],
        str(y.get('kernel_origin'))[:10], x['pack_us'], y['pack_us'],
        x['pack_us'] / y['pack_us'], x['unpack_us'], y['unpack_us'],
        x['unpack_us'] / y['unpack_us']))
