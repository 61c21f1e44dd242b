#!/usr/bin/env python3
"""Puts ddtc-mpi-bench runs side by side: for every layout and message size,
the one-way time of ddtc's path (median, us) and its bandwidth as a fraction
of (a), one column per run, in the order given.

  bench/mpi-compare.py NAME=RUN.json [NAME=RUN.json ...] [--layouts A,B]

NAME labels the column (default: the file's name without .json)."""

import argparse
import json
import os


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--layouts", default="")
    args = ap.parse_args()
    columns, order, table = [], [], {}
    for spec in args.runs:
        name, _, path = spec.rpartition("=")
        if not name:
            name = os.path.basename(path).removesuffix(".json")
        columns.append(name)
        with open(path) as f:
            data = json.load(f)
        for p in data["points"]:
            key = (p["layout"], p["target_bytes"])
            if key not in table:
                table[key] = {}
                order.append(key)
            ratio = p.get("ddtc_vs_a_bandwidth")
            table[key][name] = (p.get("ddtc_us"), ratio, p.get("check"))
    wanted = set(filter(None, args.layouts.split(",")))
    print("one-way time (us) and ddtc / (a) by bandwidth; each column one "
          "mpirun, in this order")
    print("%-18s %5s " % ("layout", "MiB") +
          "".join("%18s" % c for c in columns))
    for key in order:
        layout, size = key
        if wanted and layout not in wanted:
            continue
        cells = []
        for c in columns:
            us, ratio, check = table[key].get(c, (None, None, None))
            if us is None:
                cells.append("%18s" % "-")
            else:
                bad = "" if check in (None, "passed") else "!"
                cells.append("%10.1f %5.3f%s " % (us, ratio or 0, bad or " "))
        print("%-18s %5d " % (layout, size >> 20) + "".join(cells))


if __name__ == "__main__":
    main()
