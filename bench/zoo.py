"""Layouts no kernel of ddtc was tuned for: the shapes real MPI programs
build (block-cyclic darrays, fields of small structs, permuted gathers,
negative strides, several arrays in one struct, 4-d boxes, triangles of
floats, origins that are not 16-byte aligned), each about 64 MiB packed.
`ddtc-bench` runs them like the bench layouts (`layouts.py --zoo --tsv`),
so a kind of layout that falls far below the memory limit shows up in one
run instead of in a user's program.

Each entry has the keys of `layouts.py` (no torch baseline).
"""

import random

MIB = 1 << 20
PACKED = 64 * MIB


def entry(name, spec, count=1, offset=0):
    return {"name": "zoo-" + name, "group": "zoo", "spec": spec,
            "count": count, "offset": offset}


def shuffled_displs(rng, n, slots):
    """n distinct displacements out of `slots`, in a random order."""
    return rng.sample(range(slots), n)


def zoo():
    rng = random.Random(2026)
    out = []
    # ScaLAPACK-like 2-d block-cyclic distribution: 64x64 blocks of doubles
    # over a 2x2 process grid; rank 1 owns a quarter of 256 MiB.
    out.append(entry("darray-block-cyclic",
                     "t = darray(4, 1, [4096, 8192], [cyclic, cyclic], "
                     "[64, 64], [2, 2], C, double)"))
    # Element-wise cyclic columns: every other double of every row.
    out.append(entry("darray-cyclic-columns",
                     "t = darray(2, 0, [4096, 4096], [none, cyclic], "
                     "[default, 1], [1, 2], C, double)"))
    # The interior of a 3-d field of 12-byte points, Fortran order.
    out.append(entry("float3-field-interior-fortran",
                     "p = contiguous(3, float)\n"
                     "t = subarray([200, 200, 200], [198, 198, 198], "
                     "[1, 1, 1], Fortran, p)"))
    # A gather of single doubles in a random order (a permutation of half
    # the slots of each 16 KiB window), repeated.
    perm = shuffled_displs(rng, 1024, 2048)
    out.append(entry("permuted-doubles",
                     "t = resized(0, 16384, indexed_block(1, [%s], double))"
                     % ", ".join(map(str, perm)),
                     count=PACKED // (8 * 1024)))
    # 4 KiB blocks of a 128 MiB array in a random order.
    perm = shuffled_displs(rng, 16384, 32768)
    out.append(entry("permuted-4KiB-blocks",
                     "t = hindexed_block(4096, [%s], char)"
                     % ", ".join(str(4096 * d) for d in perm)))
    # Two doubles of every 16 in each row, in every other 2048-row plane.
    out.append(entry("vector-of-vectors",
                     "r = vector(2048, 2, 16, double)\n"
                     "t = hvector(2048, 1, 524288, r)"))
    # One double of every 17 (a stride of an odd number of elements).
    out.append(entry("double-every-17",
                     "t = vector(8388608, 1, 17, double)"))
    # A column of a row-major matrix of complex doubles, three wide.
    out.append(entry("complex-column",
                     "t = vector(4194304, 1, 3, MPI_C_DOUBLE_COMPLEX)"))
    # Arrays of small padded structs: {int, double} and {char, int}.
    out.append(entry("int-double-structs",
                     "p = struct([1, 1], [0, 8], [int, double])\n"
                     "t = contiguous(%d, p)" % (PACKED // 12)))
    out.append(entry("char-int-structs",
                     "p = struct([1, 1], [0, 4], [char, int])\n"
                     "t = contiguous(%d, p)" % (PACKED // 5)))
    # Three shorts of every four.
    out.append(entry("short-3of4",
                     "t = vector(%d, 3, 4, short)" % (PACKED // 6)))
    # Blocks of 64 bytes walked backwards (a negative stride).
    n = PACKED // 64
    out.append(entry("negative-stride",
                     "t = hvector(%d, 64, -128, char)" % n,
))
    # Every other double of two arrays 256 MiB apart, in one struct.
    half = PACKED // 16
    out.append(entry("two-arrays",
                     "v = vector(%d, 1, 2, double)\n"
                     "t = struct([1, 1], [0, 268435456], [v, v])" % half))
    # The interior of a 4-d array of doubles.
    out.append(entry("4d-interior",
                     "t = subarray([34, 64, 64, 64], [32, 62, 62, 62], "
                     "[1, 1, 1, 1], C, double)"))
    # The upper triangle of a 5792x5792 float matrix, row by row (blocks
    # shrinking from 5792 floats to one).
    nn = 5792
    out.append(entry("upper-float-5792",
                     "t = indexed([%s], [%s], float)"
                     % (", ".join(str(nn - i) for i in range(nn)),
                        ", ".join(str(i * (nn + 1)) for i in range(nn)))))
    # Odd bytes at an odd stride.
    out.append(entry("7-of-13-bytes",
                     "t = hvector(%d, 7, 13, char)" % (PACKED // 7)))
    # One float of every 4 and two ints of every 3 of two fields, packed
    # together (two segments of different strides).
    m = PACKED // 12
    out.append(entry("mixed-fields",
                     "a = vector(%d, 1, 4, float)\n"
                     "b = vector(%d, 2, 3, int)\n"
                     "t = struct([1, 1], [0, %d], [a, b])" % (m, m, 16 * m)))
    # Two doubles of every three around a negative lower bound.
    out.append(entry("negative-lb-pairs",
                     "p = struct([1, 1], [-8, 0], [double, double])\n"
                     "t = contiguous(%d, resized(-8, 24, p))" % (PACKED // 16),
))
    # Called from a pointer to an array's second element: rows of 62 of 64
    # doubles from an origin 8 bytes past a 16-byte boundary, pairs of
    # floats from one 4 bytes past it.
    out.append(entry("rows-from-second-double",
                     "t = hvector(%d, 496, 512, char)" % (PACKED // 496),
                     offset=8))
    out.append(entry("float-pairs-from-second-float",
                     "t = vector(%d, 2, 4, float)" % (PACKED // 8), offset=4))
    # Blocks of 5 doubles 7 apart (40-byte runs, 56-byte stride).
    out.append(entry("5-of-7-doubles",
                     "t = vector(%d, 5, 7, double)" % (PACKED // 40)))
    # Shuffled gathers as an unstructured mesh's halo lists build them:
    # pairs of doubles (half the slots of a 16 KiB window), and single
    # doubles over a 1 MiB window (half its slots).
    pairs = shuffled_displs(rng, 512, 1024)
    out.append(entry("permuted-double-pairs",
                     "t = resized(0, 16384, indexed_block(2, [%s], double))"
                     % ", ".join(str(2 * d) for d in pairs),
                     count=PACKED // (16 * 512)))
    wide = shuffled_displs(rng, 65536, 131072)
    out.append(entry("permuted-doubles-1MiB",
                     "t = resized(0, %d, indexed_block(1, [%s], double))"
                     % (MIB, ", ".join(map(str, wide))),
                     count=PACKED // (8 * 65536)))
    return out
