"""ddtc-bench in parts: when a Yaksa call does not return, ddtc-bench writes
the layouts done (the stuck one marked "timed out") and exits with 85;
bench/run-gpu.sh then runs the layouts left in a new process and merges its
JSON into the first.

    python3 bench/bench-parts.py left LAYOUTS.tsv DDTC.json
        prints the names of the layouts DDTC.json does not hold yet
    python3 bench/bench-parts.py merge DDTC.json PART.json
        adds PART.json's layouts to DDTC.json (its other keys stay)
    python3 bench/bench-parts.py host-stuck DDTC.json
        exits 0 when a layout's Yaksa pack into mapped host memory did not
        return (the parts after it then leave that pack out), 1 otherwise
"""

import json
import sys


def left(tsv, done_path):
    with open(done_path) as f:
        done = json.load(f).get("layouts", {})
    for line in open(tsv):
        name = line.split("\t", 1)[0].strip()
        if name and name not in done:
            print(name)


def merge(into_path, part_path):
    with open(into_path) as f:
        into = json.load(f)
    try:
        with open(part_path) as f:
            part = json.load(f)
    except (OSError, ValueError):
        return  # the part ended before writing anything
    into.setdefault("layouts", {}).update(part.get("layouts", {}))
    with open(into_path, "w") as f:
        json.dump(into, f, indent=1)


def host_stuck(path):
    try:
        with open(path) as f:
            layouts = json.load(f).get("layouts", {})
    except (OSError, ValueError):
        return False
    return any(str(r.get("yaksa_host", "")).startswith("timed out")
               for r in layouts.values())


def main(argv):
    if len(argv) == 4 and argv[1] == "left":
        left(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "merge":
        merge(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "host-stuck":
        return 0 if host_stuck(argv[2]) else 1
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
