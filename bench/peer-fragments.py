#!/usr/bin/env python3
"""What cutting a read of a peer GPU's memory into fragments costs: a kernel
on GPU N copies M bytes from GPU F's memory to its own in fragments of S
bytes, one kernel per fragment, on one stream (each kernel's tail waits for
the last loads over the link before the next one starts) or on 2 and 4
streams in turn (a fragment's tail overlaps the next one's head), against
the copy engine doing the same fragments and against one kernel for the
whole. Each configuration is checked and timed with events around the whole
sequence (queued behind a kernel that holds the stream, so that they time
the GPU and not the launches), median of R runs.
   bench/peer-fragments.py [--devices 0,1] [--mib 16] [--reps 21] [--json OUT]"""
import cupy as cp

import peer_buffers

SRC = r"""
extern "C" __global__ void copy16(const uint4 *__restrict__ src,
                                  uint4 *__restrict__ dst, long long n16) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n16;
       i += stride)
    dst[i] = src[i];
}
// Holds the stream for about `ns` nanoseconds, so that every launch of the
// sequence timed after it is queued before the first one runs: the events
// then time the GPU's work, not the host's launches.
extern "C" __global__ void hold(long long ns) {
  long long t0 = clock64();
  while (clock64() - t0 < ns * 2) {
  }
}
"""


def main():
    a, n, fd, nd = peer_buffers.parse_args(__doc__, mib=16, reps=21)
    far, near = peer_buffers.make_buffers(n, fd, nd)
    results = []
    with cp.cuda.Device(nd):
        mod = cp.RawModule(code=SRC)
        k = mod.get_function("copy16")
        hold = mod.get_function("hold")
        sms = cp.cuda.runtime.getDeviceProperties(nd)["multiProcessorCount"]
        main_stream = cp.cuda.Stream(non_blocking=True)
        side = [cp.cuda.Stream(non_blocking=True) for _ in range(4)]
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        joins = [cp.cuda.Event(disable_timing=True) for _ in range(4)]

        def run(frag, streams, engine):
            with main_stream:
                hold((1,), (1,), (cp.int64(1000 * (20 + 8 * (n // frag))),))
            start.record(main_stream)
            used = side[:streams] if streams > 1 else [main_stream]
            if streams > 1:
                for s in used:
                    s.wait_event(start)
            for i, lo in enumerate(range(0, n, frag)):
                s = used[i % len(used)]
                size = min(frag, n - lo)
                if engine:
                    cp.cuda.runtime.memcpyPeerAsync(
                        near.data.ptr + lo, nd, far.data.ptr + lo, fd, size,
                        s.ptr)
                else:
                    blocks = min(sms * 4, max(1, size // (256 * 16)))
                    with s:
                        k((blocks,), (256,),
                          (cp.uint64(far.data.ptr + lo),
                           cp.uint64(near.data.ptr + lo),
                           cp.int64(size // 16)))
            if streams > 1:
                for s, e in zip(used, joins):
                    e.record(s)
                    main_stream.wait_event(e)
            stop.record(main_stream)
            stop.synchronize()
            return cp.cuda.get_elapsed_time(start, stop) * 1e3

        for engine in (True, False):
            for frag_kib in (n >> 10, 8192, 4096, 2048, 1024, 512, 256):
                frag = min(n, frag_kib << 10)
                for streams in (1, 2, 4):
                    if frag == n and streams > 1:
                        continue
                    near.fill(0)
                    run(frag, streams, engine)
                    ok = bool((cp.asnumpy(near) == cp.asnumpy(far)).all())
                    ts = sorted(run(frag, streams, engine)
                                for _ in range(a.reps))
                    us = ts[len(ts) // 2]
                    what = "%s, %d KiB fragments, %d stream%s" % (
                        "copy engine" if engine else "SM kernel", frag >> 10,
                        streams, "s" if streams > 1 else "")
                    results.append({"what": what, "engine": engine,
                                    "fragment": frag, "streams": streams,
                                    "us": us, "GBps": n / us / 1e3,
                                    "check": ok})
                    print("%-48s %8.1f us %7.1f GB/s %s" % (
                        what, us, n / us / 1e3, "ok" if ok else "WRONG"),
                        flush=True)
    peer_buffers.write_json(a.json, n, a.reps, fd, nd, results)


if __name__ == "__main__":
    main()
