"""Merges ddtc-bench's and the torch baseline's JSON of one run into
summary.txt (a table of ratios and the targets reached or missed, Yaksa's
among them when the run had it),
results.json, and plots (PNG) of bandwidth against size. The traffic
calibration (traffic-calibration.json, from ddtc-bench --calibrate-traffic)
is appended to the summary when the run has one.

    python3 bench/summarize.py --dir bench/results/<run>

With --retraffic COUNTS.json (from `ddtc-bench --count-traffic`, no GPU
needed) it instead holds the run's kernel times against the traffic counted
in COUNTS.json, a model the run did not use, and prints the traffic ratios
both ways (writing nothing into the run's folder): the copy times for the
new traffic are not measured but interpolated from the run's copies of
other sizes.
"""

import argparse
import json
import os
import re


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def disk_times(path):
    out = {}
    try:
        for line in open(path):
            m = re.match(r"disk (\S+) ([\d.]+) ([\d.]+) (\d+)", line)
            if m:
                out[m.group(1)] = {"commit_ms": float(m.group(2)),
                                   "disk_load_ms": float(m.group(3)),
                                   "origin": int(m.group(4))}
    except OSError:
        pass
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--retraffic", metavar="COUNTS.json",
                        help="re-derive the traffic ratios of the run in "
                        "--dir from ddtc-bench --count-traffic's counts")
    parser.add_argument("--out", help="with --retraffic: write the table "
                        "here as well")
    args = parser.parse_args()
    if args.retraffic:
        return retraffic(args.dir, args.retraffic, args.out)
    ddtc = load(os.path.join(args.dir, "ddtc.json"))
    torch = load(os.path.join(args.dir, "torch.json")) or {"layouts": {}}
    disk = disk_times(os.path.join(args.dir, "disk-cache.log"))
    if not ddtc:
        print("summarize: no ddtc.json")
        return 1
    tl = torch.get("layouts", {})
    rows, targets = [], []
    empty = ddtc.get("empty_kernel_us", 0)
    for name, r in ddtc["layouts"].items():
        t = tl.get(name, {}).get("us")
        row = {
            "layout": name,
            "MiB": r["packed_bytes"] / 2**20,
            "pack_us": r["pack_us"],
            "pack/memcpy": r["pack_vs_memcpy"],
            "unpack/memcpy": r["unpack_vs_memcpy"],
            "pack/2D3D": r.get("pack_vs_memcpy2d3d"),
            "torch/pack": (t / r["pack_us"]) if t else None,
            # The most any pack can gain on torch: torch's time over the
            # copy time of the traffic the layout forces.
            "torch/traffic limit": (t / r["memcpy_pack_traffic_us"]
                                    if t and r.get("memcpy_pack_traffic_us")
                                    else None),
            "host/D2H": r["host_vs_d2h"],
            "traffic_MiB": (r["pack_traffic_bytes"] / 2**20
                            if "pack_traffic_bytes" in r else None),
            "pack/traffic": r.get("pack_vs_traffic"),
            "unpack/traffic": r.get("unpack_vs_traffic"),
            "host/traffic": r.get("host_vs_traffic"),
            "check": r.get("check"),
            "nvrtc_ms": r.get("nvrtc_ms"),
            "passes_ms": r.get("passes_ms"),
            # DDTC_KERNEL_BUILTIN: the specialized kernel came with the
            # library (no compile).
            "builtin": r.get("kernel_origin") == 2,
            "hit_us": r.get("cache_hit_us"),
            # MPICH's datatype engine on the same buffers (YaksaPeer.h):
            # ddtc/Yaksa > 1 when ddtc is faster.
            "yaksa": r.get("yaksa", "not run"),
            "yaksa_host": r.get("yaksa_host"),
            "yaksa_us": r.get("yaksa_pack_us"),
            "ddtc/yaksa": r.get("ddtc_vs_yaksa_pack"),
            "up ddtc/yaksa": r.get("ddtc_vs_yaksa_unpack"),
            "host ddtc/yaksa": r.get("ddtc_vs_yaksa_host"),
            "yaksa/traffic": r.get("yaksa_pack_vs_traffic"),
            "yaksa up/traffic": r.get("yaksa_unpack_vs_traffic"),
            "yaksa host/traffic": r.get("yaksa_host_vs_traffic"),
        }
        rows.append(row)
    by = {r["layout"]: r for r in rows}

    def target_(desc, names, key, goal):
        target(targets, by, desc, names, key, goal)

    big_vec = [n for n in by if re.match(r"vector-(256|1024|4096|65536)B", n)]
    small_vec = [n for n in by if re.match(r"vector-(4|8|16|32|64)B", n)]
    target_("pack >= 0.95 memcpy, blocks >= 256 B", big_vec, "pack/memcpy", 0.95)
    target_("unpack >= 0.95 memcpy, blocks >= 256 B", big_vec, "unpack/memcpy", 0.95)
    target_("pack >= 0.95 memcpy, cube interior", ["cube512-interior"],
           "pack/memcpy", 0.95)
    target_("pack >= 0.95 memcpy, lower n >= 8000",
           ["lower-8000", "lower-16000"], "pack/memcpy", 0.95)
    target_("pack >= 1.2x torch, blocks 4-64 B", small_vec, "torch/pack", 1.2)
    # Where torch is within 1/1.2 of the memory limit, 1.2x torch would take
    # a pack faster than the memory allows.
    beyond = [n for n in small_vec
              if by[n]["torch/traffic limit"] is not None and
              by[n]["torch/traffic limit"] < 1.2]
    if beyond:
        targets.append(
            f"NOTE 1.2x torch is beyond the traffic limit for {len(beyond)} of "
            f"{len(small_vec)}: " + ", ".join(
                f"{n} (at most {by[n]['torch/traffic limit']:.2f}x)"
                for n in beyond))
    target_("faster than cudaMemcpy2D/3D everywhere",
           [n for n in by if by[n]["pack/2D3D"]], "pack/2D3D", 1.0)
    # These targets are set for 64 MiB packed or more (within 1%: the bench
    # layouts of 64 MiB); the smaller layouts' worst is noted beside them.
    large = [n for n in by if by[n]["MiB"] >= 64 * 0.99]
    smaller = [n for n in by if n not in large]

    def target_large(desc, key, goal):
        target_(desc + ", every layout of >= 64 MiB", large, key, goal)
        vals = [(n, by[n][key]) for n in smaller if by[n][key]]
        if vals:
            n, v = min(vals, key=lambda x: x[1])
            targets.append(f"NOTE {desc}, layouts under 64 MiB (not in the "
                           f"target): worst {n} {v:.3f}")

    target_large("into mapped host >= 0.95 pinned D2H", "host/D2H", 0.95)
    # The memory limit: cudaMemcpy moving the DRAM traffic the layout forces.
    target_large("pack >= 0.90 of the traffic limit", "pack/traffic", 0.90)
    target_large("unpack >= 0.90 of the traffic limit", "unpack/traffic", 0.90)
    target_large("into mapped host >= 0.90 of the traffic limit",
                 "host/traffic", 0.90)
    uncounted = [n for n in by if by[n]["pack/traffic"] is None]
    if uncounted:
        targets.append("NOTE traffic not counted for " + ", ".join(uncounted))
    yaksa_targets(by, targets, ddtc.get("yaksa_run"))
    faces = [n for n in by if n.startswith("cube512-") and "interior" not in n]
    if faces and empty:
        worst = max(faces, key=lambda n: by[n]["pack_us"])
        ratio = by[worst]["pack_us"] / empty
        targets.append(f"{'MET ' if ratio <= 2 else 'MISS'} 2 MB halo face <= 2x "
                       f"empty launch ({empty:.2f} us): worst {worst} "
                       f"{by[worst]['pack_us']:.2f} us = {ratio:.2f}x")
    compiles = [r["nvrtc_ms"] + r["passes_ms"] for r in rows if r["nvrtc_ms"]]
    if compiles:
        worst = max(compiles)
        # Runs before the bench turned the driver's compute cache off timed
        # hits of it wherever an earlier process had compiled the kernel.
        cache = ddtc.get("driver_compute_cache",
                         "on: a kernel compiled before on this machine is a hit")
        targets.append(f"{'MET ' if worst <= 40 else 'MISS'} cold compile <= 40 ms "
                       f"per type: worst {worst:.1f} ms, median "
                       f"{sorted(compiles)[len(compiles) // 2]:.1f} ms "
                       f"(driver compute cache {cache}; "
                       f"{sum(1 for r in rows if r['builtin'])} of {len(rows)} "
                       f"layouts' kernels built into the library, not counted)")
    hits = [r["hit_us"] for r in rows if r["hit_us"] is not None]
    if hits:
        worst = max(hits)
        targets.append(f"{'MET ' if worst <= 2 else 'MISS'} in-process cache hit "
                       f"<= 2 us: worst {worst:.2f} us")
    if disk:
        worst = max(v["commit_ms"] for v in disk.values())
        targets.append(f"{'MET ' if worst <= 2 else 'MISS'} disk-cache load in a "
                       f"new process <= 2 ms: worst {worst:.3f} ms")

    def fmt(v, spec):
        if isinstance(v, (int, float)):
            return format(v, spec)
        return format("-", ">" + re.match(r"\d*", spec).group(0))

    lines = [f"device: {ddtc.get('device')}; torch {torch.get('torch', '-')}",
             f"empty kernel launch: {empty:.2f} us (waited), "
             f"{ddtc.get('empty_kernel_back_to_back_us', 0):.2f} us back to back",
             "",
             f"{'layout':26s} {'MiB':>8s} {'pack us':>9s} {'pk/mcp':>7s} "
             f"{'up/mcp':>7s} {'pk/2D3D':>7s} {'torch/pk':>8s} {'host/d2h':>8s} "
             f"{'trafMiB':>8s} {'pk/traf':>7s} {'up/traf':>7s} {'ho/traf':>7s} "
             f"{'nvrtc ms':>8s} {'hit us':>7s} {'yaksa us':>9s} "
             f"{'dd/yak':>7s} {'up d/y':>7s} check"]
    for r in rows:
        lines.append(
            f"{r['layout']:26s} {r['MiB']:8.2f} {r['pack_us']:9.1f} "
            f"{fmt(r['pack/memcpy'], '7.3f')} {fmt(r['unpack/memcpy'], '7.3f')} "
            f"{fmt(r['pack/2D3D'], '7.2f')} {fmt(r['torch/pack'], '8.2f')} "
            f"{fmt(r['host/D2H'], '8.3f')} {fmt(r['traffic_MiB'], '8.1f')} "
            f"{fmt(r['pack/traffic'], '7.3f')} {fmt(r['unpack/traffic'], '7.3f')} "
            f"{fmt(r['host/traffic'], '7.3f')} {fmt(r['nvrtc_ms'], '8.1f')} "
            f"{fmt(r['hit_us'], '7.2f')} {fmt(r['yaksa_us'], '9.1f')} "
            f"{fmt(r['ddtc/yaksa'], '7.2f')} {fmt(r['up ddtc/yaksa'], '7.2f')} "
            f"{r['check']}")
    legend = traffic_legend(ddtc)
    if legend:
        lines.append(legend)
    lines += ["", "targets:"] + ["  " + t for t in targets]
    calibration = load(os.path.join(args.dir, "traffic-calibration.json"))
    if calibration:
        lines += ["", *calibration_lines(calibration)]
    if disk:
        lines.append("disk cache, fresh process: " + ", ".join(
            f"{n} {v['commit_ms']:.3f} ms" for n, v in disk.items()))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.dir, "summary.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(args.dir, "results.json"), "w") as f:
        json.dump({"ddtc": ddtc, "torch": torch, "disk": disk,
                   "traffic_calibration": calibration,
                   "rows": rows, "targets": targets}, f, indent=1)
    print(text)
    plot(args.dir, ddtc, tl)
    return 0


def traffic_legend(ddtc):
    """The traffic model a run of ddtc-bench divided by, in one line: the
    read granule and partial write cost it records, or, for runs before
    them, the sector model with its partial write reads."""
    if "read_granule" in ddtc:
        return (f"traffic: reads in {ddtc['read_granule']:g}-byte granules "
                f"({ddtc.get('read_granule_from', '?')}), writes in 32-byte "
                f"sectors, a sector written in part costing "
                f"{ddtc['partial_write_cost']:.3g} full ones "
                f"({ddtc.get('partial_write_cost_from', '?')})")
    if "partial_write_reads" in ddtc:
        return (f"traffic: sectors read + bytes written; an unpack pays "
                f"{ddtc['partial_write_reads']:g} sector read(s) per sector "
                f"it writes in part")
    return None


def copy_time_model(layouts):
    """A function from bytes of traffic to the time cudaMemcpy D2D took to
    move them in this run, from the copies timed for every layout (its
    packed bytes, its traffic): grouped in half-octaves of size, each group
    its median size and median time, linear between groups, proportional
    beyond the largest and below the smallest. The groups smooth the noise
    of single copies (a few percent); it is still an estimate, the copies of
    other sizes were not timed."""
    import math
    groups = {}
    for r in layouts.values():
        pairs = [(2 * r.get("packed_bytes", 0), r.get("memcpy_d2d_us"))]
        for what in ("pack", "unpack", "host"):
            key = "host_device" if what == "host" else what
            pairs.append((r.get(f"{key}_traffic_bytes"),
                          r.get(f"memcpy_{what}_traffic_us")))
        for traffic, us in pairs:
            if traffic and us:
                group = math.floor(2 * math.log2(traffic))
                groups.setdefault(group, []).append((traffic, us))

    def median(v):
        v = sorted(v)
        return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2

    points = sorted((median([b for b, _ in g]), median([t for _, t in g]))
                    for g in groups.values())

    def estimate(traffic):
        if not points:
            return None
        if traffic <= points[0][0]:
            return points[0][1] * traffic / points[0][0]
        if traffic >= points[-1][0]:
            return points[-1][1] * traffic / points[-1][0]
        for (b0, t0), (b1, t1) in zip(points, points[1:]):
            if b0 <= traffic <= b1:
                return t0 + (t1 - t0) * (traffic - b0) / (b1 - b0)
        return None
    return estimate


def retraffic(run_dir, counts_path, out_path):
    """The run's traffic ratios against a model it did not use: each
    direction's copy time for the new traffic over the kernel time the run
    measured. The copy time is the layout's own copy of its old traffic,
    scaled by how copy_time_model's estimate grows from the old traffic to
    the new (so a layout whose traffic did not change keeps its ratio, and
    the noise of the other copies does not move it)."""
    ddtc = load(os.path.join(run_dir, "ddtc.json"))
    counts = load(counts_path)
    if not ddtc or not counts:
        print(f"summarize: cannot read {run_dir}/ddtc.json or {counts_path}")
        return 1
    estimate = copy_time_model(ddtc["layouts"])
    lines = [f"traffic ratios of {run_dir} ({ddtc.get('device')}), re-derived",
             "  was: " + (traffic_legend(ddtc) or "traffic: -"),
             "  now: " + (traffic_legend(counts) or "traffic: -"),
             "  (copy times for traffic the run did not copy are "
             "interpolated from its copies of other sizes)", "",
             f"{'layout':26s} {'trafMiB':>8s} {'now':>8s} "
             f"{'pk/traf':>7s} {'now':>7s} {'up/traf':>7s} {'now':>7s} "
             f"{'ho/traf':>7s} {'now':>7s}"]
    by = {}

    def fmt(v, width):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return f"{v:{width}.3f}"
        return f"{'-':>{width}s}"

    for name, r in ddtc["layouts"].items():
        c = counts.get("layouts", {}).get(name)
        if not c or "pack_traffic_bytes" not in c or "pack_traffic_bytes" not in r:
            continue
        row = {"layout": name}
        for what, kernel, key in (("pack", "pack_us", "pack_traffic_bytes"),
                                  ("unpack", "unpack_us",
                                   "unpack_traffic_bytes"),
                                  ("host", "pack_to_host_us",
                                   "host_device_traffic_bytes")):
            us = r.get(f"memcpy_{what}_traffic_us")
            same = abs(c[key] - r[key]) <= 1e-5 * max(r[key], 1)
            if us and not same:
                before, after = estimate(r[key]), estimate(c[key])
                us = us * after / before if before and after else None
            if us and r.get(kernel):
                if what == "host":
                    us = max(us, r.get("memcpy_d2h_us", 0))
                row[f"{what}/traffic"] = us / r[kernel]
            prefix = "host" if what == "host" else what
            row[f"{prefix}/traffic was"] = r.get(f"{prefix}_vs_traffic")
        row["MiB was"] = r["pack_traffic_bytes"] / 2**20
        row["MiB"] = c["pack_traffic_bytes"] / 2**20
        by[name] = row
        lines.append(
            f"{name:26s} {row['MiB was']:8.1f} {row['MiB']:8.1f} "
            f"{fmt(row.get('pack/traffic was'), 7)} "
            f"{fmt(row.get('pack/traffic'), 7)} "
            f"{fmt(row.get('unpack/traffic was'), 7)} "
            f"{fmt(row.get('unpack/traffic'), 7)} "
            f"{fmt(row.get('host/traffic was'), 7)} "
            f"{fmt(row.get('host/traffic'), 7)}")
    if not by:
        lines.append("(no layout of the run has traffic figures in both "
                     "files: the run predates the traffic ratio, or the "
                     "counts are of other layouts)")
    targets = []
    for key, what in (("pack/traffic", "pack"), ("unpack/traffic", "unpack"),
                      ("host/traffic", "into mapped host")):
        for suffix, when in ((" was", "was"), ("", "now")):
            sub = {n: {key: by[n].get(key + suffix)} for n in by}
            target(targets, sub, f"{what} >= 0.90 of the traffic limit, every "
                   f"layout ({when})", list(sub), key, 0.90)
    lines += ["", "targets:"] + ["  " + t for t in targets]
    text = "\n".join(lines) + "\n"
    if out_path:
        with open(out_path, "w") as f:
            f.write(text)
    print(text)
    return 0


def yaksa_targets(by, targets, run):
    """ddtc against MPICH's datatype engine, measured in the same run: ahead
    on every layout Yaksa handles (its bytes equal ddtc's), and >= 1.2x
    wherever Yaksa reaches < 0.8 of the memory limit (the traffic ratio:
    cudaMemcpy moving the DRAM traffic the layout forces, over Yaksa's
    time). Layouts Yaksa did not handle are listed with the reason."""
    if not run:
        targets.append("NOTE Yaksa not run (no library: bench/build-yaksa.sh, "
                       "then DDTC_YAKSA_LIB or ddtc-bench --yaksa)")
        return
    handled = [n for n in by if by[n]["yaksa"] == "passed"]
    for key, what in (("ddtc/yaksa", "pack"), ("up ddtc/yaksa", "unpack"),
                      ("host ddtc/yaksa", "into mapped host")):
        target(targets, by, f"{what} ahead of Yaksa, every layout it handles",
               handled, key, 1.0)
        traffic = {"ddtc/yaksa": "yaksa/traffic",
                   "up ddtc/yaksa": "yaksa up/traffic",
                   "host ddtc/yaksa": "yaksa host/traffic"}[key]
        slow = [n for n in handled
                if by[n][traffic] is not None and by[n][traffic] < 0.8]
        target(targets, by, f"{what} >= 1.2x Yaksa where Yaksa < 0.8 of the "
               f"traffic limit", slow, key, 1.2)
    for n in by:
        if by[n]["yaksa"] != "passed":
            targets.append(f"NOTE Yaksa on {n}: {by[n]['yaksa']}")
    # Its pack into mapped host memory, where it did not pass, by reason.
    reasons = {}
    for n in handled:
        why = by[n]["yaksa_host"]
        if why and why != "passed":
            reasons.setdefault(why, []).append(n)
    for why, names in reasons.items():
        targets.append(f"NOTE Yaksa into mapped host, {why}: "
                       f"{len(names)} layout(s): {', '.join(names)}")


def target(targets, by, desc, names, key, goal):
    """A target line: the worst of `key` over `names` against `goal`."""
    vals = [(n, by[n][key]) for n in names if n in by and by[n][key]]
    if not vals:
        return
    worst = min(vals, key=lambda v: v[1])
    ok = worst[1] >= goal
    targets.append(f"{'MET ' if ok else 'MISS'} {desc}: worst {worst[0]} "
                   f"{worst[1]:.3f} (goal >= {goal})")


def calibration_lines(c):
    """The traffic calibration as a table: per pattern the bandwidth of the
    bytes it touches and of the sectors they lie in, against the pattern
    that touches every sector of the same memory (vs base) and against what
    the traffic model predicts (vs model: sectors at the memcpy traffic
    rate; for host writes, the bytes at the pinned D2H rate)."""
    out = [f"traffic calibration ({c.get('device')}): cudaMemcpy D2D "
           f"{c['memcpy_d2d_traffic_GBps']:.1f} GB/s of traffic, pinned D2H "
           f"{c['memcpy_d2h_GBps']:.1f} GB/s",
           f"  {'target':18s} {'pattern':27s} {'GB/s':>8s} {'sect GB/s':>9s} "
           f"{'vs base':>7s} {'vs model':>8s} check"]
    for p in c["patterns"]:
        out.append(f"  {p['target']:18s} {p['name']:27s} {p['useful_GBps']:8.1f} "
                   f"{p['sector_GBps']:9.1f} {p['vs_base']:7.3f} "
                   f"{p['vs_model']:8.3f} {p['check']}")
    return out


def plot(outdir, ddtc, tl):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("summarize: matplotlib missing, no plots")
        return
    L = ddtc["layouts"]

    def gbps(r, key):
        return r["packed_bytes"] / r[key] / 1e3 if r.get(key) else None

    for aligned in ("aligned", "unaligned"):
        names = [n for n in L if n.startswith("vector-") and n.endswith("-" + aligned)]
        names.sort(key=lambda n: int(re.search(r"(\d+)B", n).group(1)))
        xs = [int(re.search(r"(\d+)B", n).group(1)) for n in names]
        fig, ax = plt.subplots(figsize=(7, 4))
        for key, label in (("pack_us", "ddtc pack"), ("unpack_us", "ddtc unpack"),
                           ("memcpy_d2d_us", "cudaMemcpy (packed bytes)"),
                           ("memcpy2d_d2d_us", "cudaMemcpy2D")):
            ax.plot(xs, [gbps(L[n], key) for n in names], marker="o", label=label)
        ax.plot(xs, [L[n]["packed_bytes"] / tl[n]["us"] / 1e3 if n in tl else None
                     for n in names], marker="x", label="torch .contiguous()")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("block bytes (64 MiB packed)")
        ax.set_ylabel("GB/s of packed bytes")
        ax.set_title(f"vectors, {aligned} ({ddtc.get('device')})")
        ax.legend()
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, f"vectors-{aligned}.png"), dpi=110)
        plt.close(fig)
    names = [n for n in L if n.startswith("lower-")]
    names.sort(key=lambda n: int(n.split("-")[1]))
    if names:
        xs = [int(n.split("-")[1]) for n in names]
        fig, ax = plt.subplots(figsize=(7, 4))
        for key, label in (("pack_us", "ddtc pack"), ("unpack_us", "ddtc unpack"),
                           ("memcpy_d2d_us", "cudaMemcpy (packed bytes)")):
            ax.plot(xs, [gbps(L[n], key) for n in names], marker="o", label=label)
        ax.plot(xs, [L[n]["packed_bytes"] / tl[n]["us"] / 1e3 if n in tl else None
                     for n in names], marker="x", label="torch boolean mask")
        ax.set_xlabel("n (lower triangle of n x n doubles)")
        ax.set_ylabel("GB/s of packed bytes")
        ax.set_title(f"lower-triangular ({ddtc.get('device')})")
        ax.legend()
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "triangles.png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
