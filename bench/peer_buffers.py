"""What the link probes (bench/peer-reads.py, peer-fragments.py, peer-rows.py
and peer-rows-ipc.py) share: their command line (--devices FAR,NEAR, --mib,
--reps, --json), the far GPU's source buffer and the near GPU's zeroed
destination (with peer access from the near GPU), the timing of a call with
events, and the JSON they write."""
import argparse
import json

import cupy as cp


def parse_args(doc, mib, reps):
    """The shared options, with this script's defaults; returns the parsed
    arguments, the bytes to move and the far and near GPUs."""
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=int, default=mib)
    ap.add_argument("--reps", type=int, default=reps)
    ap.add_argument("--json")
    ap.add_argument("--devices", default="0,1",
                    help="the far and the near GPU (the same one twice: a "
                         "trial of the script, no link)")
    a = ap.parse_args()
    far, near = (int(x) for x in a.devices.split(","))
    return a, a.mib << 20, far, near


def make_buffers(n, fd, nd):
    """n bytes counting up on GPU fd, n zero bytes on GPU nd, which may
    access fd's memory."""
    with cp.cuda.Device(fd):
        far = cp.arange(n // 4, dtype=cp.uint32)
    with cp.cuda.Device(nd):
        if fd != nd:
            cp.cuda.runtime.deviceEnablePeerAccess(fd)
        near = cp.zeros(n // 4, dtype=cp.uint32)
    return far, near


def event_timer(device, reps):
    """A function that runs fn() once, then `reps` times between two events
    on GPU `device`'s current stream, and returns the median in
    microseconds."""
    with cp.cuda.Device(device):
        start, stop = cp.cuda.Event(), cp.cuda.Event()

    def timed(fn):
        with cp.cuda.Device(device):
            fn()
            cp.cuda.Device(device).synchronize()
            ts = []
            for _ in range(reps):
                start.record()
                fn()
                stop.record()
                stop.synchronize()
                ts.append(cp.cuda.get_elapsed_time(start, stop) * 1e3)
        ts.sort()
        return ts[len(ts) // 2]

    return timed


def write_json(path, n, reps, fd, nd, results):
    if path:
        with open(path, "w") as f:
            json.dump({"bytes": n, "reps": reps, "devices": [fd, nd],
                       "results": results}, f, indent=1)
