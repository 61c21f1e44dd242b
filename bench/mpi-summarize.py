"""Summarizes the JSON of ddtc-mpi-bench: a table of every point, the
targets met or missed (with the numbers), and a PNG of bandwidth against
message size per layout.

    python3 bench/mpi-summarize.py RUN/mpi-bench.json [RUN/mpi-bench-tcp.json]
        [--out DIR]

For each FILE.json it prints the summary, writes DIR/FILE-summary.txt and
DIR/FILE-bandwidth.png (DIR defaults to the folder of FILE.json; the plot
needs matplotlib and is skipped with a message without it). Exits 1 when a
file cannot be read or a correctness check failed, else 0 (missed
performance targets do not change the exit status).

Targets (a point counts at the size it aimed at, e.g. a 4193408-byte cube
face as 4 MiB, unless its packed bytes are more than 2x off):
  - bandwidth >= 0.90 of (a)'s (the same packed bytes, contiguous in host
    memory, PMPI) for every point from 4 MiB packed, every layout;
  - faster than (b) (copy the whole extent, send from host) and (c) (pack,
    copy to pinned, send MPI_PACKED) at every point from 64 KiB packed;
  - one-way latency of messages <= 1 KiB packed <= (a) + 8 us;
  - added cost on host buffers <= 0.3 us per call;
  - with --contend F: the ddtc path loses <= 10% to the busy kernel at
    every point (contended / uncontended one-way time - 1, same run).
A halo-exchange report (ddtc-mpi-bench --halo, "mode": "halo") gets its
table and its target instead: the typed exchange within 1.3x of the same
bytes as contiguous buffers, and its checks.
"""

import argparse
import json
import math
import os
import sys

KIB = 1024
MIB = 1024 * 1024


def num(v):
    return v if isinstance(v, (int, float)) and math.isfinite(v) else None


def fmt(v, spec):
    v = num(v)
    if v is not None:
        return format(v, spec)
    width = spec.split(".")[0]
    return "-".rjust(int(width) if width.isdigit() else 1)


def human(b):
    if b >= MIB and b % MIB == 0:
        return f"{b // MIB} MiB"
    if b >= KIB and b % KIB == 0:
        return f"{b // KIB} KiB"
    return f"{b} B"


def nominal(p):
    """The size class of a point: the size aimed at, unless the layout could
    not come within a factor of 2 of it (then the packed bytes)."""
    target, packed = p.get("target_bytes") or 0, p["packed_bytes"]
    if target and 0.5 <= packed / target <= 2:
        return target
    return packed


def summarize(data):
    """Returns (text lines, number of failed checks)."""
    env = data.get("environment", {})
    opts = data.get("options", {})
    points = data.get("points", [])
    host = data.get("host_added_cost", {})
    mca = env.get("ompi_mca_env", {})
    btl = mca.get("OMPI_MCA_btl", "default")
    lines = [
        f"GPU: {env.get('gpu', '?')}; ranks share one GPU: "
        f"{env.get('ranks_share_gpu', '?')}",
        f"MPI: {env.get('mpi_library_version', '?').splitlines()[0] if env.get('mpi_library_version') else '?'}"
        f"; btl {btl}",
        f"MPI_Send from {env.get('mpi_send_from', '?')} (intercepted: "
        f"{env.get('mpi_send_intercepted', '?')})",
        f"DDTC_MPI_* settings: "
        + (", ".join(f"{k}={v}" for k, v in env.get("ddtc_mpi_env", {}).items())
           or "none"),
        f"CUDA MPS: "
        + ("on (CUDA_MPS_PIPE_DIRECTORY set)"
           if env.get("cuda_env", {}).get("CUDA_MPS_PIPE_DIRECTORY")
           else "not set up by the run"),
        f"reps {opts.get('reps', '?')}, one-way = round trip / 2, medians"
        + (f"; {data['elapsed_s']:.0f} s" if num(data.get("elapsed_s")) else ""),
    ]
    if not data.get("complete", True):
        lines.append("WARNING: the run did not complete"
                     + (f" ({data['aborted']})" if data.get("aborted") else ""))
    lines += [
        "",
        f"{'layout':18s} {'bytes':>10s} {'ddtc us':>9s} {'GB/s':>8s} "
        f"{'a us':>9s} {'ddtc/a':>7s} {'b us':>10s} {'c us':>9s} "
        f"{'vs b':>7s} {'vs c':>7s}  check",
    ]
    for p in points:
        lines.append(
            f"{p['layout']:18s} {p['packed_bytes']:10d} {fmt(p.get('ddtc_us'), '9.2f')} "
            f"{fmt(p.get('ddtc_GBps'), '8.3f')} {fmt(p.get('a_us'), '9.2f')} "
            f"{fmt(p.get('ddtc_vs_a_bandwidth'), '7.3f')} "
            f"{fmt(p.get('b_us'), '10.2f')} {fmt(p.get('c_us'), '9.2f')} "
            f"{fmt(p.get('speedup_vs_b'), '7.2f')} "
            f"{fmt(p.get('speedup_vs_c'), '7.2f')}  {p.get('check', '?')}")

    layouts = []
    for p in points:
        if p["layout"] not in layouts:
            layouts.append(p["layout"])
    targets = []

    def mark(ok):
        return "NO DATA" if ok is None else ("MET    " if ok else "MISSED ")

    # 1. >= 0.90 of (a)'s bandwidth from 4 MiB.
    per = []
    all_ok = None
    for name in layouts:
        pts = [p for p in points if p["layout"] == name
               and nominal(p) >= 4 * MIB]
        vals = [(p["packed_bytes"], num(p.get("ddtc_vs_a_bandwidth")))
                for p in pts]
        have = [v for v in vals if v[1] is not None]
        if not pts:
            per.append(f"      {name}: no point >= 4 MiB")
            continue
        if not have:
            per.append(f"      {name}: not measured")
            all_ok = False
            continue
        worst = min(have, key=lambda v: v[1])
        ok = worst[1] >= 0.90 and len(have) == len(vals)
        all_ok = ok if all_ok is None else (all_ok and ok)
        per.append(f"      {name}: worst {worst[1]:.3f} at {human(worst[0])}"
                   + ("" if len(have) == len(vals) else
                      f" ({len(vals) - len(have)} points not measured)")
                   + ("" if ok else "  <- missed"))
    targets.append(f"{mark(all_ok)} bandwidth >= 0.90 of (a) from 4 MiB, "
                   f"every layout")
    targets += per

    # 2. Faster than (b) and (c) from 64 KiB.
    for key, label in (("speedup_vs_b", "(b) copy the whole extent"),
                       ("speedup_vs_c", "(c) hand-written pack + pinned")):
        pts = [p for p in points if nominal(p) >= 64 * KIB]
        have = [p for p in pts if num(p.get(key)) is not None]
        if not have:
            targets.append(f"{mark(None)} faster than {label} from 64 KiB")
            continue
        slower = [p for p in have if p[key] <= 1.0]
        worst = min(have, key=lambda p: p[key])
        ok = not slower and len(have) == len(pts)
        targets.append(
            f"{mark(ok)} faster than {label} at every size from 64 KiB: "
            f"worst {worst['layout']} {human(worst['packed_bytes'])} "
            f"{worst[key]:.2f}x; {len(slower)} of {len(have)} points not "
            f"faster" + ("" if len(have) == len(pts) else
                          f"; {len(pts) - len(have)} not measured"))
        for p in slower:
            targets.append(f"      {p['layout']} {human(p['packed_bytes'])}: "
                           f"{p[key]:.2f}x")

    # 3. Latency of <= 1 KiB packed <= (a) + 8 us.
    small = [p for p in points if nominal(p) <= KIB]
    have = [p for p in small if num(p.get("ddtc_us")) is not None
            and num(p.get("a_us")) is not None]
    if have:
        over = [p for p in have if p["ddtc_us"] > p["a_us"] + 8.0]
        worst = max(have, key=lambda p: p["ddtc_us"] - p["a_us"])
        ok = not over and len(have) == len(small)
        targets.append(
            f"{mark(ok)} one-way latency <= (a) + 8 us for <= 1 KiB packed: "
            f"worst {worst['layout']} {human(worst['packed_bytes'])} "
            f"{worst['ddtc_us']:.2f} us vs (a) {worst['a_us']:.2f} us "
            f"(+{worst['ddtc_us'] - worst['a_us']:.2f} us); {len(over)} of "
            f"{len(have)} over" + ("" if len(have) == len(small) else
                                   f"; {len(small) - len(have)} not measured"))
        for name in layouts:
            mine = [p for p in have if p["layout"] == name]
            if mine:
                w = max(mine, key=lambda p: p["ddtc_us"] - p["a_us"])
                targets.append(
                    f"      {name}: worst +{w['ddtc_us'] - w['a_us']:.2f} us "
                    f"at {human(w['packed_bytes'])} ({w['ddtc_us']:.2f} vs "
                    f"{w['a_us']:.2f} us)")
    else:
        targets.append(f"{mark(None)} one-way latency <= (a) + 8 us for "
                       f"<= 1 KiB packed")

    # 4. Added cost on host buffers.
    per_call = num(host.get("added_per_call_us"))
    if host.get("measured") and per_call is not None:
        targets.append(
            f"{mark(per_call <= 0.3)} added cost on host buffers <= 0.3 us "
            f"per call: {per_call:.3f} us per call "
            f"(one-way {num(host.get('mpi_one_way_median_us')) or 0:.3f} us "
            f"intercepted vs {num(host.get('pmpi_one_way_median_us')) or 0:.3f}"
            f" us PMPI, difference {host.get('added_one_way_us', 0):.3f} us "
            f"per one-way trip = one send + one receive)")
    else:
        targets.append(f"{mark(None)} added cost on host buffers <= 0.3 us "
                       f"per call")

    # 5. The loss to a busy kernel (--contend).
    contend = num(opts.get("contend_fraction_of_sms"))
    if contend:
        have = [p for p in points if num(p.get("ddtc_contention_loss"))
                is not None]
        if have:
            over = [p for p in have if p["ddtc_contention_loss"] > 0.10]
            worst = max(have, key=lambda p: p["ddtc_contention_loss"])
            targets.append(
                f"{mark(not over)} loss to a kernel holding {contend:.0%} of "
                f"the SMs <= 10%: worst {worst['layout']} "
                f"{human(worst['packed_bytes'])} "
                f"{worst['ddtc_contention_loss']:+.1%} "
                f"({worst['ddtc_contended_us']:.2f} vs {worst['ddtc_us']:.2f}"
                f" us); {len(over)} of {len(have)} over")
            for p in over:
                targets.append(
                    f"      {p['layout']} {human(p['packed_bytes'])}: "
                    f"{p['ddtc_contention_loss']:+.1%}")
            expired = sum(m.get("contended_reps_past_limit", 0)
                          for p in points
                          for m in p.get("methods", {}).values())
            if expired:
                targets.append(
                    f"      {expired} contended repetitions reached the busy "
                    f"kernel's time limit: those transfers waited for it")
        else:
            targets.append(f"{mark(None)} loss to a busy kernel <= 10%")

    failures = data.get("failures", [])
    failed_points = sum(1 for p in points if p.get("check") == "FAILED")
    checked = sum(1 for p in points if p.get("check") in ("passed", "FAILED"))
    targets.append(
        f"{'MET    ' if not failures else 'MISSED '} correctness: {checked} "
        f"points checked, {failed_points} with the ddtc path failing, "
        f"{len(failures)} path failures in all")
    for f in failures:
        targets.append(f"      {f.get('layout')} {f.get('packed_bytes')} B "
                       f"path {f.get('path')}: {f.get('detail')}")
    lines += ["", "targets:"] + ["  " + t for t in targets]
    return lines, len(failures)


def summarize_halo(data):
    """The halo exchange: returns (text lines, number of failed checks)."""
    env = data.get("environment", {})
    h = data.get("halo", {})
    block = h.get("block_zyx") or ["?"] * 3
    lines = [
        f"GPU: {env.get('gpu', '?')}; ranks share one GPU: "
        f"{env.get('ranks_share_gpu', '?')}",
        f"halo exchange, 2 ranks, each {block[0]} x {block[1]} x {block[2]} "
        f"(z y x) doubles plus ghosts"
        + (f" (a {h['cube']}^3 cube)" if h.get("cube") else "")
        + f"; {h.get('bytes_each_way', '?')} B each way per exchange; "
        f"{len(h.get('typed_us', []))} exchanges of each, medians",
    ]
    if not data.get("complete", True):
        lines.append("WARNING: the run did not complete")
    lines += [
        "",
        f"{'':14s} {'typed us':>10s} {'contig us':>10s} {'ratio':>7s}",
        f"{'halo':14s} {fmt(h.get('typed_median_us'), '10.2f')} "
        f"{fmt(h.get('contig_median_us'), '10.2f')} "
        f"{fmt(h.get('typed_over_contig'), '7.3f')}",
        "",
        "targets:",
    ]
    q = num(h.get("typed_over_contig"))
    target = num(h.get("target_ratio")) or 1.3
    ok = None if q is None else q <= target
    lines.append(f"  {'NO DATA' if ok is None else ('MET    ' if ok else 'MISSED ')}"
                 f" typed exchange <= {target}x the contiguous one: "
                 + (f"{q:.3f}" if q is not None else "not measured"))
    checks = (h.get("check_before_timing"), h.get("check_after_timing"))
    failed = int(any(c == "FAILED" for c in checks))
    lines.append(f"  {'MISSED ' if failed else 'MET    '} correctness: before "
                 f"timing {checks[0]}, after timing {checks[1]}"
                 + (f": {h.get('check_detail')}" if failed else ""))
    return lines, failed


def plot(data, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("mpi-summarize: matplotlib missing, no plot")
        return False
    points = data.get("points", [])
    layouts = []
    for p in points:
        if p["layout"] not in layouts:
            layouts.append(p["layout"])
    if not layouts:
        print("mpi-summarize: no points, no plot")
        return False
    cols = 3
    rows = (len(layouts) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows),
                             squeeze=False)
    # --refs device measures other references under the same letters.
    device = data.get("options", {}).get("references") == "device"
    series = (("ddtc_GBps", "ddtc (MPI_Send, device)", "o"),
              ("a_GBps", "(a) contiguous device buffer, libddtc-mpi" if device
               else "(a) host contiguous, PMPI", "s"),
              ("b_GBps", "(b) copy extent + host send", "^"),
              ("c_GBps", "(c) libddtc-mpi through host memory" if device
               else "(c) pack + pinned + MPI_PACKED", "v"))
    for i, name in enumerate(layouts):
        ax = axes[i // cols][i % cols]
        mine = sorted((p for p in points if p["layout"] == name),
                      key=lambda p: p["packed_bytes"])
        for key, label, marker in series:
            xs = [p["packed_bytes"] for p in mine if num(p.get(key))]
            ys = [p[key] for p in mine if num(p.get(key))]
            if xs:
                ax.plot(xs, ys, marker=marker, markersize=4, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel("packed bytes")
        ax.set_ylabel("GB/s (packed bytes / one-way)")
        ax.grid(True, alpha=0.3)
    for j in range(len(layouts), rows * cols):
        axes[j // cols][j % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+", help="ddtc-mpi-bench --json output")
    parser.add_argument("--out", help="folder for the summaries and plots "
                        "(default: the folder of each JSON file)")
    args = parser.parse_args()
    status = 0
    for path in args.json:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"mpi-summarize: cannot read {path}: {e}")
            status = 1
            continue
        outdir = args.out or os.path.dirname(os.path.abspath(path))
        os.makedirs(outdir, exist_ok=True)
        stem = os.path.splitext(os.path.basename(path))[0]
        halo = data.get("mode") == "halo"
        lines, failed = summarize_halo(data) if halo else summarize(data)
        text = "\n".join([f"== {path}"] + lines) + "\n"
        print(text)
        with open(os.path.join(outdir, stem + "-summary.txt"), "w") as f:
            f.write(text)
        if halo:
            status = status or int(failed > 0)
            continue
        env = data.get("environment", {})
        btl = env.get("ompi_mca_env", {}).get("OMPI_MCA_btl", "default btl")
        png = os.path.join(outdir, stem + "-bandwidth.png")
        if plot(data, png, f"ddtc-mpi-bench, {env.get('gpu', '?')}, {btl}"):
            print(f"mpi-summarize: wrote {png}")
        if failed:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
