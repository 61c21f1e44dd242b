"""Writes the layouts of these runs as rows of `bench/layouts.py --tsv`:
rows.tsv (period plans in rows), units.tsv (work-unit layouts: triangles,
random (h)indexed blocks) and extra.tsv (long random blocks of bytes,
shorts and ints; rows of 301 points of 3 floats of every 5). The bench's
own layouts used beside them (lower-*, random-hindexed, indexed-short,
particles, particle-fields, aos-xyz-float, rows-of-records, the vectors)
come from `python3 bench/layouts.py --tsv`."""
import random

M = 64 << 20


def write(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")


def row(name, spec, group, count="1"):
    return (name, group, count, "0", "-", "-", spec.replace("\n", "\\n"))


rows = [
    row("rows1000-xyz-float", f"r = vector(1000, 3, 4, float)\nt = hvector({M // 12000}, 1, 16384, r)", "struct"),
    row("rows300-xyz-float", f"r = vector(300, 3, 4, float)\nt = hvector({M // 3600}, 1, 4864, r)", "struct"),
    row("rows2000-3of5-float", f"r = vector(2000, 3, 5, float)\nt = hvector({M // 24000}, 1, 40064, r)", "struct"),
    row("inst700-xyz-float", "t = vector(700, 3, 4, float)", "struct", str(M // 8400)),
    row("rows600-dchar", f"r = contiguous(600, resized(0, 16, struct([1, 1], [0, 8], [double, char])))\nt = hvector({M // 5400}, 1, 9664, r)", "struct"),
]
write("rows.tsv", rows)

units = []
n = 8000
units.append(row("lower-float-8000", f"t = indexed({[n - j for j in range(n)]}, {[j * n + j for j in range(n)]}, float)", "triangle"))
random.seed(3)
d, bl, pos, tot = [], [], 0, 0
while tot * 8 < M // 4:
    b = random.randint(1, 4)
    pos += random.randint(0, 3)
    d.append(pos)
    bl.append(b)
    pos += b
    tot += b
units.append(row("indexed-tiny-random", f"t = indexed({bl}, {d}, double)", "triangle"))
n = 4000
units.append(row("upper-4000", f"t = indexed({[j + 1 for j in range(n)]}, {[j * n for j in range(n)]}, double)", "triangle"))
random.seed(5)
bl, d, pos, tot = [], [], 0, 0
while tot < M // 2:
    b = random.randint(64, 4096) // 8
    pos += random.randint(1, 64)
    d.append(pos * 8)
    bl.append(b)
    pos += b
    tot += b * 8
units.append(row("hindexed-mid-random", f"t = hindexed({bl}, {d}, double)", "triangle"))
write("units.tsv", units)

extra = []
for T, sz, name in (("char", 1, "bytes"), ("short", 2, "shorts"), ("int", 4, "ints")):
    random.seed(11 + sz)
    bl, d, pos, tot = [], [], 0, 0
    while tot < M // 2:
        b = random.randint(500, 3000) // sz
        pos += random.randint(1, 99)
        d.append(pos * sz)
        bl.append(b)
        pos += b
        tot += b * sz
    extra.append(row(f"{name}-long-random", f"t = hindexed({bl}, {d}, {T})", "triangle"))
extra.append(row("rows301-3of5-float", f"r = vector(301, 3, 5, float)\nt = hvector({M // 3612}, 1, 6032, r)", "struct"))
write("extra.tsv", extra)
