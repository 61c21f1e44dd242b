"""The benchmark layouts, shared by ddtc-bench (through `layouts.py --spec`)
and the torch baseline, so both measure the same bytes.

Each layout is a dict with a name, a .ddt spec of one binding `t`, a count,
and how torch expresses the same gather (`torch` key, see torch_baseline.py).
"""

import argparse
import json
import random

MIB = 1 << 20
PACKED = 64 * MIB  # >= 64 MiB packed: well past the 50 MiB L2 of an H100/H200


def vectors():
    out = []
    for block in [4, 8, 16, 32, 64, 128, 256, 1024, 4096, 65536]:
        count = PACKED // block
        for aligned in (True, False):
            # Aligned: blocks 2x apart from offset 0. Unaligned: a 4-byte
            # offset and a stride that keeps blocks off 8-byte boundaries.
            stride = 2 * block if aligned else 2 * block + 4
            offset = 0 if aligned else 4
            name = f"vector-{block}B-{'aligned' if aligned else 'unaligned'}"
            out.append({
                "name": name, "group": "vector", "block": block,
                "spec": f"t = hvector({count}, {block}, {stride}, char)",
                "offset": offset, "count": 1,
                "torch": {"kind": "strided", "shape": [count, block],
                          "strides": [stride, 1], "offset": offset},
                "memcpy2d": {"width": block, "height": count, "pitch": stride,
                             "offset": offset},
            })
    return out


def cube():
    n = 512
    out = []
    faces = {
        "x-lo": ([1, n - 2, n - 2], [1, 1, 1]), "x-hi": ([1, n - 2, n - 2], [n - 2, 1, 1]),
        "y-lo": ([n - 2, 1, n - 2], [1, 1, 1]), "y-hi": ([n - 2, 1, n - 2], [1, n - 2, 1]),
        "z-lo": ([n - 2, n - 2, 1], [1, 1, 1]), "z-hi": ([n - 2, n - 2, 1], [1, 1, n - 2]),
        "interior": ([n - 2, n - 2, n - 2], [1, 1, 1]),
    }
    for name, (sub, start) in faces.items():
        extra = {}
        if name[0] in "xy":
            # x and y faces are rows of 510 doubles: one cudaMemcpy2D.
            off = ((start[0] * n + start[1]) * n + start[2]) * 8
            pitch = n * 8 if name[0] == "x" else n * n * 8
            extra["memcpy2d"] = {"width": sub[2] * 8, "height": 510,
                                 "pitch": pitch, "offset": off}
        out.append({**extra, 
            "name": f"cube512-{name}", "group": "cube",
            "spec": f"t = subarray([{n}, {n}, {n}], {sub}, {start}, C, double)",
            "offset": 0, "count": 1,
            "torch": {"kind": "subarray", "sizes": [n, n, n], "sub": sub,
                      "start": start, "elem": 8},
            "memcpy3d": {"sizes": [n, n, n], "sub": sub, "start": start,
                         "elem": 8},
        })
    return out


def triangles():
    out = []
    for n in [1000, 2000, 4000, 8000, 16000]:
        lens = ", ".join(str(n - j) for j in range(n))
        displs = ", ".join(str(j * n + j) for j in range(n))
        out.append({
            "name": f"lower-{n}", "group": "triangle", "n": n,
            "spec": f"t = indexed([{lens}], [{displs}], double)",
            "offset": 0, "count": 1,
            "torch": {"kind": "lower", "n": n, "elem": 8},
        })
    return out


def struct_array(name, struct, extent, runs):
    """An array of structs, the spec `struct` (of struct `p`, `extent` bytes
    apart) packed as its `runs` ([offset, length] in each struct)."""
    count = PACKED // sum(n for _, n in runs)
    return {
        "name": name, "group": "struct",
        "spec": (f"p = {struct}\n"
                 f"t = contiguous({count}, resized(0, {extent}, p))"),
        "offset": 0, "count": 1,
        "torch": {"kind": "runs", "runs": runs, "period": extent,
                  "count": count},
    }


def others():
    out = []
    # An array of particle structs: 3 double positions, 3 float velocities,
    # an int id, a char flag; sizeof 48 with padding. Pack all fields.
    out.append(struct_array(
        "particles",
        "struct([3, 3, 1, 1], [0, 24, 36, 40], [double, float, int, char])",
        48, [[0, 40], [40, 1]]))
    # The positions and ids of the same particles, their velocities and
    # flags left out (a struct's fields with gaps: two runs per struct), as
    # one type of all the structs.
    out.append(struct_array("particle-fields",
                            "struct([3, 1], [0, 36], [double, int])", 48,
                            [[0, 24], [36, 4]]))
    # Single runs shorter than a 16-byte chunk: three floats of every four
    # (the positions of float4 points) and of every five, and a double and a
    # char of each 16-byte struct.
    for name, elems, gap, ctype, size in (("aos-xyz-float", 3, 1, "float", 4),
                                          ("aos-3of5-float", 3, 2, "float", 4)):
        count = PACKED // (elems * size)
        out.append({
            "name": name, "group": "struct",
            "spec": f"t = vector({count}, {elems}, {elems + gap}, {ctype})",
            "offset": 0, "count": 1,
            "torch": {"kind": "runs", "runs": [[0, elems * size]],
                      "period": (elems + gap) * size, "count": count},
        })
    out.append(struct_array("double-char",
                            "struct([1, 1], [0, 8], [double, char])", 16,
                            [[0, 9]]))
    # Rows of 1000 of the particle-fields structs, a row every 49152 bytes
    # (rows of a padded 2-d array of structs).
    rows = PACKED // (28 * 1000)
    out.append({
        "name": "rows-of-records", "group": "struct",
        "spec": ("p = struct([3, 1], [0, 36], [double, int])\n"
                 "r = contiguous(1000, resized(0, 48, p))\n"
                 f"t = hvector({rows}, 1, 49152, r)"),
        "offset": 0, "count": 1,
        "torch": {"kind": "runs",
                  "runs": [[48 * i + o, n] for i in range(1000)
                           for o, n in ((0, 24), (36, 4))],
                  "period": 49152, "count": rows},
    })
    # A random hindexed of 8-byte-multiple blocks.
    rng = random.Random(7)
    lens, displs, at = [], [], 0
    while sum(lens) < PACKED:
        gap = rng.randrange(0, 256, 8)
        ln = rng.randrange(8, 2048, 8)
        at += gap
        lens.append(ln)
        displs.append(at)
        at += ln
    out.append({
        "name": "random-hindexed", "group": "hindexed",
        "spec": (f"t = hindexed([{', '.join(map(str, lens))}], "
                 f"[{', '.join(map(str, displs))}], char)"),
        "offset": 0, "count": 1,
        "torch": {"kind": "blocks", "lens": lens, "displs": displs},
    })
    # Indexed blocks of 1-3 doubles 1-4 doubles apart, 1000 blocks a type
    # (short irregular runs: work units of 16 bytes on average), repeated.
    rng = random.Random(11)
    lens, displs, at = [], [], 0
    for _ in range(1000):
        at += rng.randint(1, 4)
        lens.append(rng.randint(1, 3))
        displs.append(at)
        at += lens[-1]
    extent = (at + 1) * 8
    count = PACKED // (8 * sum(lens))
    out.append({
        "name": "indexed-short", "group": "hindexed",
        "spec": (f"t = resized(0, {extent}, indexed("
                 f"[{', '.join(map(str, lens))}], "
                 f"[{', '.join(map(str, displs))}], double))"),
        "offset": 0, "count": count,
        "torch": {"kind": "runs",
                  "runs": [[8 * d, 8 * n] for d, n in zip(displs, lens)],
                  "period": extent, "count": count},
    })
    # A matrix transpose: columns of a 4096x4096 row-major double matrix.
    n = 4096
    out.append({
        "name": "transpose-4096", "group": "transpose",
        "spec": (f"col = resized(0, 8, vector({n}, 1, {n}, double))\n"
                 f"t = contiguous({n}, col)"),
        "offset": 0, "count": 1,
        "torch": {"kind": "transpose", "n": n, "elem": 8},
    })
    return out


def all_layouts():
    return vectors() + cube() + triangles() + others()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true",
                        help="print the layouts as JSON")
    parser.add_argument("--names", action="store_true",
                        help="print the layout names")
    parser.add_argument("--zoo", action="store_true",
                        help="the layouts of zoo.py (shapes no kernel was "
                        "tuned for) instead of the bench layouts")
    parser.add_argument("--tsv", action="store_true",
                        help="print the input of ddtc-bench: name, group, "
                        "count, origin offset, memcpy2d (w,h,pitch,offset or "
                        "-), memcpy3d (sizes,sub,start,elem or -), spec with "
                        "newlines as \\n")
    args = parser.parse_args()
    if args.zoo:
        import zoo
        layouts = zoo.zoo()
    else:
        layouts = all_layouts()
    if args.names:
        print("\n".join(l["name"] for l in layouts))
    elif args.tsv:
        for l in layouts:
            m2 = l.get("memcpy2d")
            m3 = l.get("memcpy3d")
            two = ("%d,%d,%d,%d" % (m2["width"], m2["height"], m2["pitch"],
                                    m2["offset"])) if m2 else "-"
            three = ",".join(str(v) for v in m3["sizes"] + m3["sub"] +
                             m3["start"] + [m3["elem"]]) if m3 else "-"
            print("\t".join([l["name"], l["group"], str(l["count"]),
                             str(l["offset"]), two, three,
                             l["spec"].replace("\n", "\\n")]))
    else:
        print(json.dumps(layouts))
