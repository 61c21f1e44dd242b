"""torch baseline for ddtc-bench: times how torch gathers the same bytes as
each benchmark layout (.contiguous() on a strided view where torch can
express the layout as one; indexing otherwise), with CUDA events, after a
warm-up, as the median of many repetitions. Writes JSON.

    python3 bench/torch_baseline.py --out torch.json [--reps 30] [--only NAME...]
"""

import argparse
import json
import statistics
import sys

import torch

import layouts as layout_defs


def widest_dtype(*values):
    for dt, w in ((torch.int64, 8), (torch.int32, 4), (torch.int16, 2)):
        if all(v % w == 0 for v in values):
            return dt, w
    return torch.uint8, 1


def build(layout):
    """Returns (source tensor, function that produces the packed tensor,
    packed bytes)."""
    t = layout["torch"]
    kind = t["kind"]
    if kind == "strided":
        count, block = t["shape"]
        stride, offset = t["strides"][0], t["offset"]
        dt, w = widest_dtype(block, stride, offset)
        total = offset + (count - 1) * stride + block
        src = torch.randint(0, 255, (total // w + 1,), dtype=torch.int64,
                            device="cuda").to(dt)
        view = src.as_strided((count, block // w), (stride // w, 1), offset // w)
        return src, lambda: view.contiguous(), count * block
    if kind == "subarray":
        n0, n1, n2 = t["sizes"]
        s0, s1, s2 = t["sub"]
        a0, a1, a2 = t["start"]
        src = torch.rand((n0, n1, n2), dtype=torch.float64, device="cuda")
        view = src[a0:a0 + s0, a1:a1 + s1, a2:a2 + s2]
        return src, lambda: view.contiguous(), s0 * s1 * s2 * 8
    if kind == "lower":
        n = t["n"]
        # Column-major lower triangle = row-major upper triangle of the
        # transposed storage: gather with a boolean mask (row-major order of
        # the mask matches column-major order of the triangle).
        src = torch.rand((n, n), dtype=torch.float64, device="cuda")
        mask = torch.triu(torch.ones((n, n), dtype=torch.bool, device="cuda"))
        return src, lambda: src[mask], n * (n + 1) // 2 * 8
    if kind == "transpose":
        n = t["n"]
        src = torch.rand((n, n), dtype=torch.float64, device="cuda")
        return src, lambda: src.t().contiguous(), n * n * 8
    if kind == "runs":
        period, count = t["period"], t["count"]
        src = torch.randint(0, 255, (count * period,), dtype=torch.uint8,
                            device="cuda")
        rows = src.view(count, period)
        cols = torch.cat([torch.arange(o, o + n, device="cuda")
                          for o, n in t["runs"]])
        packed = sum(n for _, n in t["runs"]) * count
        return src, lambda: rows[:, cols].contiguous(), packed
    if kind == "blocks":
        lens, displs = t["lens"], t["displs"]
        idx = torch.cat([torch.arange(d // 8, (d + n) // 8) for d, n in
                         zip(displs, lens)]).cuda()
        total = displs[-1] + lens[-1]
        src = torch.randint(0, 1 << 30, (total // 8,), dtype=torch.int64,
                            device="cuda")
        return src, lambda: src.index_select(0, idx), sum(lens)
    raise ValueError(f"unknown torch kind {kind}")


def time_it(fn, reps, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)  # us
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_baseline: no CUDA device", file=sys.stderr)
        return 2
    results = {"device": torch.cuda.get_device_name(0),
               "torch": torch.__version__, "layouts": {}}
    for layout in layout_defs.all_layouts():
        if args.only and layout["name"] not in args.only:
            continue
        src, fn, packed = build(layout)
        median, lo, hi = time_it(fn, args.reps)
        results["layouts"][layout["name"]] = {
            "us": median, "min_us": lo, "max_us": hi, "bytes": packed,
            "GBps": packed / median / 1e3}
        print(f"torch {layout['name']:32s} {median:10.1f} us "
              f"{packed / median / 1e3:8.1f} GB/s", flush=True)
        del src, fn
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
