#!/usr/bin/env python3
"""How fast a copy engine moves rows of a strided layout from a peer GPU's
memory: cudaMemcpy2DAsync of H rows of W bytes, P bytes apart on the far GPU,
into rows of W bytes Q bytes apart on the near GPU, against one contiguous
copy of the same bytes from the peer (what a contiguous message costs) and
against a kernel on the near GPU reading the rows (16-byte loads, a thread
per 16 bytes). Each configuration is checked (the rows compared with the
source's) and timed with events, median of R runs; --mib is the payload.
   bench/peer-rows.py [--devices 0,1] [--mib 4] [--reps 15] [--json OUT]"""
import cupy as cp

import peer_buffers

SRC = r"""
extern "C" __global__ void rows(const unsigned char *__restrict__ src,
                                unsigned char *__restrict__ dst,
                                long long width, long long spitch,
                                long long dpitch, long long n16) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long per = width / 16;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < n16; i += stride) {
    long long r = i / per, c = (i - r * per) * 16;
    *(uint4 *)(dst + r * dpitch + c) = *(const uint4 *)(src + r * spitch + c);
  }
}
"""

# (row bytes, source pitch, destination pitch): vectors of 16 B to 4 KiB
# blocks at twice their size into the same and into contiguous rows, and
# the rows of the interior of a cube of doubles (4080 of every 4096 bytes).
SHAPES = [(16, 32, 32), (64, 128, 128), (256, 512, 512), (256, 512, 256),
          (1024, 2048, 2048), (4096, 8192, 8192), (4096, 8192, 4096),
          (4080, 4096, 4096)]


def main():
    a, n, fd, nd = peer_buffers.parse_args(__doc__, mib=4, reps=15)
    results = []
    with cp.cuda.Device(nd):
        mod = cp.RawModule(code=SRC)
        k = mod.get_function("rows")
        stream = cp.cuda.get_current_stream()

        timed = peer_buffers.event_timer(nd, a.reps)

        def report(name, us, ok, base=None):
            gbps = n / us / 1e3
            results.append({"what": name, "us": us, "GBps": gbps, "check": ok,
                            "of_contiguous": base / us if base else None})
            print("%-46s %9.1f us %7.1f GB/s %s%s" % (
                name, us, gbps, "ok" if ok else "WRONG",
                "  %.3f of contiguous" % (base / us) if base else ""))

        far, near = peer_buffers.make_buffers(n, fd, nd)
        contiguous = timed(lambda: cp.cuda.runtime.memcpyPeerAsync(
            near.data.ptr, nd, far.data.ptr, fd, n, stream.ptr))
        report("contiguous, copy engine", contiguous,
               bool((cp.asnumpy(near) == cp.asnumpy(far)).all()))
        del far, near
        for w, p, q in SHAPES:
            h = n // w
            with cp.cuda.Device(fd):
                src = cp.arange(h * p // 4, dtype=cp.uint32).view(cp.uint8)
            dst = cp.zeros(h * q, dtype=cp.uint8)
            want = cp.asnumpy(src).reshape(h, p)[:, :w]

            def rows_ok():
                got = cp.asnumpy(dst).reshape(h, q)[:, :w]
                return bool((got == want).all())

            us = timed(lambda: cp.cuda.runtime.memcpy2DAsync(
                dst.data.ptr, q, src.data.ptr, p, w, h,
                cp.cuda.runtime.memcpyDefault, stream.ptr))
            report("rows %d B every %d -> every %d, copy engine" % (w, p, q),
                   us, rows_ok(), contiguous)
            dst.fill(0)
            n16 = n // 16
            args = (cp.uint64(src.data.ptr), cp.uint64(dst.data.ptr),
                    cp.int64(w), cp.int64(p), cp.int64(q), cp.int64(n16))
            grid = (n16 + 255) // 256
            us = timed(lambda: k((grid,), (256,), args))
            report("rows %d B every %d -> every %d, kernel" % (w, p, q), us,
                   rows_ok(), contiguous)
            del src, dst
    peer_buffers.write_json(a.json, n, a.reps, fd, nd, results)


if __name__ == "__main__":
    main()
