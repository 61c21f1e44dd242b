import random
L=[]
def add(name, spec, group="struct"):
    L.append((name, group, "1", "0", "-", "-", spec.replace("\n","\\n")))
M=64<<20
add("aos-xyz-double", f"t = vector({M//24}, 3, 4, double)", "vector")
add("aos-xyz-float", f"t = vector({M//12}, 3, 4, float)", "vector")
add("aos-3of5-float", f"t = vector({M//12}, 3, 5, float)", "vector")
add("transpose-float-4096", "c = resized(0, 4, vector(4096, 1, 4096, float))\nt = contiguous(4096, c)", "vector")
add("transpose-c16-2048", "z = contiguous(2, double)\nc = resized(0, 16, vector(2048, 1, 2048, z))\nt = contiguous(2048, c)", "vector")
add("rows-of-records", "p = struct([3, 1], [0, 36], [double, int])\nr = contiguous(1000, resized(0, 48, p))\nt = hvector(1678, 1, 49152, r)")
add("rows-of-xyz", "r = vector(1000, 3, 4, double)\nt = hvector(2797, 1, 33280, r)", "vector")
add("int-double", f"p = struct([1, 1], [0, 8], [int, double])\nt = contiguous({M//12}, resized(0, 16, p))")
add("double-char", f"p = struct([1, 1], [0, 8], [double, char])\nt = contiguous({M//9}, resized(0, 16, p))")
add("char-column", f"t = vector({(16<<20)}, 1, 64, char)", "vector")
add("short-column", f"t = vector({(16<<20)}, 1, 20, short)", "vector")
add("blockcyclic-2d", "b = vector(32, 64, 256, double)\nt = hvector(4096, 1, 65536*4, b)".replace("65536*4", str(8192*8*4)), "vector")
add("sub3d-thick4-float", "t = subarray([512, 512, 512], [512, 512, 16], [0, 0, 100], C, float)\nu = contiguous(16, t)".replace("u = contiguous(16, t)","").rstrip(), "vector")
random.seed(3)
d=[];pos=0;bl=[];tot=0
while tot*8 < M//4:
    b=random.randint(1,4); pos+=random.randint(0,3); d.append(pos); bl.append(b); pos+=b; tot+=b
add("indexed-tiny-random", f"t = indexed({bl}, {d}, double)", "triangle")
n=4000
add("upper-4000", f"t = indexed({[j+1 for j in range(n)]}, {[j*n for j in range(n)]}, double)", "triangle")
n=8000
add("lower-float-8000", f"t = indexed({[n-j for j in range(n)]}, {[j*n+j for j in range(n)]}, float)", "triangle")
random.seed(4)
d=[];pos=0
while len(d)*16*8 < M:
    pos+=random.randint(2,6)*2; d.append(pos)
add("indexed-block-2dbl", f"t = indexed_block(2, {d}, double)", "triangle")
for r in L: print("\t".join(r))
