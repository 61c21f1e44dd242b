#!/usr/bin/env python3
"""How fast the SMs of one GPU read (or write) a peer GPU's memory over
the link, against the copy engine, by launch shape: a kernel on GPU 1
copies N bytes from GPU 0's memory to its own (or from its own to GPU 0's)
with 16-byte loads, U loads in flight per thread, G blocks of B threads
(grid-stride); --devices F,N picks the two GPUs (far, near). Each
configuration is checked (the destination compared with the source) and
timed with events, median of R runs.
   bench/peer-reads.py [--devices 0,1] [--mib 64] [--reps 15] [--json OUT]"""
import cupy as cp

import peer_buffers

SRC = r"""
extern "C" __global__ void __launch_bounds__(1024) copy_u(const uint4 *__restrict__ src,
                                  uint4 *__restrict__ dst, long long n16,
                                  int unroll) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (unroll == 1) {
    for (; i < n16; i += stride) dst[i] = src[i];
    return;
  }
  // unroll loads issued before any store: that many 16-byte loads in
  // flight per thread.
  for (; i + (unroll - 1) * stride < n16; i += unroll * stride) {
    uint4 v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (k < unroll) v[k] = src[i + k * stride];
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (k < unroll) dst[i + k * stride] = v[k];
  }
  for (; i < n16; i += stride) dst[i] = src[i];
}
"""


def main():
    a, n, fd, nd = peer_buffers.parse_args(__doc__, mib=64, reps=15)
    far, near = peer_buffers.make_buffers(n, fd, nd)
    with cp.cuda.Device(nd):
        mod = cp.RawModule(code=SRC, options=("-std=c++17",))
        k = mod.get_function("copy_u")
        sms = cp.cuda.runtime.getDeviceProperties(nd)["multiProcessorCount"]
        results = []

        timed = peer_buffers.event_timer(nd, a.reps)

        def report(name, us, ok):
            gbps = n / us / 1e3
            results.append({"what": name, "us": us, "GBps": gbps, "check": ok})
            print("%-44s %9.1f us %7.1f GB/s %s" % (name, us, gbps,
                                                    "ok" if ok else "WRONG"))

        def check(dst, src):
            return bool((cp.asnumpy(dst) == cp.asnumpy(src)).all())

        # The copy engine, reading the peer (as (a) does).
        near.fill(0)
        us = timed(lambda: cp.cuda.runtime.memcpyPeerAsync(
            near.data.ptr, nd, far.data.ptr, fd, n,
            cp.cuda.get_current_stream().ptr))
        report("copy engine, peer to local", us, check(near, far))
        n16 = n // 16
        for direction in ("read", "write"):
            src, dst = (far, near) if direction == "read" else (near, far)
            for block in (256, 512, 1024):
                for per_sm in (1, 2, 4, 8, 16):
                    for unroll in (1, 2, 4, 8):
                        grid = sms * per_sm
                        if direction == "read":
                            near.fill(0)
                        else:
                            with cp.cuda.Device(fd):
                                far.fill(0)
                            near[:] = cp.arange(n // 4, dtype=cp.uint32)
                        args = (cp.uint64(src.data.ptr),
                                cp.uint64(dst.data.ptr), cp.int64(n16),
                                cp.int32(unroll))
                        try:
                            us = timed(lambda: k((grid,), (block,), args))
                        except cp.cuda.driver.CUDADriverError as e:
                            print("grid %d x %d unroll %d: %s" % (
                                grid, block, unroll, e))
                            continue
                        ok = check(dst, src)
                        report("SM %s grid %d x %d unroll %d" % (
                            direction, grid, block, unroll), us, ok)
                        if direction == "write":
                            with cp.cuda.Device(fd):
                                far[:] = cp.arange(n // 4, dtype=cp.uint32)
    peer_buffers.write_json(a.json, n, a.reps, fd, nd, results)


if __name__ == "__main__":
    main()
