"""Plans every layout of a ddtc-bench layouts file with `ddtc --emit=explain`
and prints `<name> <shape line>` for each; exits 1 at the first layout ddtc
refuses.

    python3 plan_layouts.py LAYOUTS.tsv DDTC TMPDIR
"""
import os
import subprocess
import sys

tsv, ddtc, tmp = sys.argv[1:4]
for line in open(tsv):
    fields = line.rstrip("\n").split("\t")
    name, spec = fields[0], fields[6].replace("\\n", "\n")
    path = os.path.join(tmp, name + ".ddt")
    with open(path, "w") as f:
        f.write(spec + "\n")
    out = subprocess.run([ddtc, "--emit=explain", path], capture_output=True,
                         text=True)
    if out.returncode != 0:
        print(f"{name}: {out.stderr.strip()}")
        sys.exit(1)
    shape = [l.strip() for l in out.stdout.splitlines() if "shape:" in l]
    print(name, shape[0] if shape else "(no shape line)")
