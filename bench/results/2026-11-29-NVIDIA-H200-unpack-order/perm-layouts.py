"""Prints the shuffled gathers of this run and their twins with the same
displacements sorted, as rows of `bench/layouts.py --tsv`."""
import random

MIB = 1 << 20
rng = random.Random(2026)
rows = []


def add(name, spec, count):
    rows.append("\t".join([name, "exp", str(count), "0", "-", "-",
                           spec.replace("\n", "\\n")]))


def window(name, displs, slots_bytes, block, count):
    for order, d in (("random", displs), ("sorted", sorted(displs))):
        add("%s-%s" % (name, order),
            "t = resized(0, %d, indexed_block(%d, [%s], double))"
            % (slots_bytes, block, ", ".join(map(str, d))), count)


perm = rng.sample(range(2048), 1024)  # the zoo's permuted-doubles
window("perm16k", perm, 16384, 1, 8192)
r2 = random.Random(7)
window("perm1m", r2.sample(range(131072), 65536), MIB, 1, 128)
pairs = [2 * x for x in r2.sample(range(1024), 512)]
add("perm16k-pairs-random",
    "t = resized(0, 16384, indexed_block(2, [%s], double))"
    % ", ".join(map(str, pairs)), 8192)
print("\n".join(rows))
