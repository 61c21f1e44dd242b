#!/usr/bin/env python3
"""The model's prediction for a contiguous message read in place (the z
face), before (start + alpha + M / link) and after (start + M / link)
dropping the first fragment's alpha, against the times measured in two
runs, each with its own calibration's figures (calibrate.txt of each)."""
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
runs = [
    (os.path.join(here, "alone.json"), (14.4, 9.8, 373)),
    (os.path.join(here, "..", "2026-11-29-NVIDIA-H200-x2-launch-and-faces",
                  "ipc", "mpi-ipc-bench-alone.json"), (11.5, 7.0, 384)),
]
for path, (start, alpha, link) in runs:
    print(os.path.relpath(path, here))
    for p in json.load(open(path))["points"]:
        if p["layout"] != "cube-z-face":
            continue
        m, t = p["packed_bytes"], p["ddtc_us"]
        new = start + m / (link * 1e3)
        old = new + alpha
        print("  %9d B  measured %6.1f us  before %6.1f (%+3.0f%%)  now %6.1f "
              "(%+3.0f%%)" % (m, t, old, 100 * (old / t - 1), new,
                             100 * (new / t - 1)))
