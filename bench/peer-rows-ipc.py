#!/usr/bin/env python3
"""The copy engine's rows from a peer GPU as libddtc-mpi's receiver meets
them: the source allocated by another process and mapped through a CUDA IPC
handle (bench/peer-rows.py maps it by peer access within one process). A
child process allocates the rows' source on the far GPU and exports it; this
process maps it on the near GPU and times cudaMemcpy2DAsync of H rows of W
bytes P apart into rows Q apart, against one contiguous copy of the same
bytes from the mapping; median of R runs, each checked.
   bench/peer-rows-ipc.py [--devices 0,1] [--mib 16] [--reps 15] [--json OUT]"""
import multiprocessing as mp

import cupy as cp

import peer_buffers

SHAPES = [(256, 512, 512), (1024, 2048, 2048), (2048, 4096, 4096),
          (4096, 8192, 8192), (4096, 8192, 4096), (8192, 16384, 16384),
          (4080, 4096, 4096)]


def owner(fd, span, conn):
    """Allocates `span` bytes counting up on GPU fd, exports them, and
    keeps them until told to stop."""
    with cp.cuda.Device(fd):
        buf = cp.arange(span // 4, dtype=cp.uint32)
        cp.cuda.Device(fd).synchronize()
        conn.send(cp.cuda.runtime.ipcGetMemHandle(buf.data.ptr))
        conn.recv()


def main():
    a, n, fd, nd = peer_buffers.parse_args(__doc__, mib=16, reps=15)
    span = 2 * n * 2  # room for every shape's source (pitch up to 2x width)
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    child = ctx.Process(target=owner, args=(fd, span, there))
    child.start()
    handle = here.recv()
    results = []
    with cp.cuda.Device(nd):
        src = cp.cuda.runtime.ipcOpenMemHandle(handle)
        want_all = cp.asnumpy(cp.arange(span // 4, dtype=cp.uint32)).view(
            "uint8")
        stream = cp.cuda.get_current_stream()

        timed = peer_buffers.event_timer(nd, a.reps)

        def report(name, us, ok, base=None):
            results.append({"what": name, "us": us, "GBps": n / us / 1e3,
                            "check": ok,
                            "of_contiguous": base / us if base else None})
            print("%-46s %9.1f us %7.1f GB/s %s%s" % (
                name, us, n / us / 1e3, "ok" if ok else "WRONG",
                "  %.3f of contiguous" % (base / us) if base else ""))

        dst = cp.zeros(n, dtype=cp.uint8)
        contiguous = timed(lambda: cp.cuda.runtime.memcpyAsync(
            dst.data.ptr, src, n, cp.cuda.runtime.memcpyDefault, stream.ptr))
        report("contiguous, IPC mapping", contiguous,
               bool((cp.asnumpy(dst) == want_all[:n]).all()))
        for w, p, q in SHAPES:
            h = n // w
            dst = cp.zeros(h * q, dtype=cp.uint8)
            us = timed(lambda: cp.cuda.runtime.memcpy2DAsync(
                dst.data.ptr, q, src, p, w, h, cp.cuda.runtime.memcpyDefault,
                stream.ptr))
            got = cp.asnumpy(dst).reshape(h, q)[:, :w]
            ok = bool((got == want_all[:h * p].reshape(h, p)[:, :w]).all())
            report("rows %d B every %d -> every %d, IPC mapping" % (w, p, q),
                   us, ok, contiguous)
            del dst
        cp.cuda.runtime.ipcCloseMemHandle(src)
    here.send("done")
    child.join()
    peer_buffers.write_json(a.json, n, a.reps, fd, nd, results)


if __name__ == "__main__":
    main()
