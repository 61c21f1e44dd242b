#!/usr/bin/env python3
"""What one ddtc_pack or ddtc_unpack call costs the calling thread, by where
the packed buffer lives: this GPU's memory, a peer GPU's memory reached
through peer access, or a peer process's memory opened from a CUDA IPC
handle (as libddtc-mpi's receiver reads a sender's ring); and the GPU's
time to unpack a whole message from each of them, against a copy engine
copying the same bytes from there. Each timed call moves
a small range (--bytes) so that the kernels never hold the launches back;
calls are timed in batches of --batch with the stream synchronized between
batches; the median per call is printed, beside a call of the C API that
launches nothing (what ctypes itself costs).
   bench/launch-cost.py LIBDDTC [--devices 0,1] [--bytes 65536] [--json OUT]
The GPU named first holds the far buffers (a child process exports them);
the second runs the calls."""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

import cupy as cp

SPECS = {
    "vector-4KiB": ("t = hvector(16384, 4096, 8192, char)", 16384 * 4096),
    "vector-16B": ("t = hvector(4194304, 16, 32, char)", 4194304 * 16),
    "particles": ("p = struct([3, 3, 1, 1], [0, 24, 36, 40], "
                  "[double, float, int, char])\n"
                  "t = contiguous(349526, resized(0, 48, p))", 349526 * 41),
}


def exporter(device, nbytes):
    """Child: allocates nbytes on `device`, prints its IPC handle, waits."""
    with cp.cuda.Device(device):
        buf = cp.zeros(nbytes, dtype=cp.uint8)
        handle = cp.cuda.runtime.ipcGetMemHandle(buf.data.ptr)
        sys.stdout.write(bytes(handle).hex() + "\n")
        sys.stdout.flush()
        sys.stdin.readline()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--devices", default="0,1")
    ap.add_argument("--bytes", type=int, default=65536)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--json")
    ap.add_argument("--export", nargs=2, type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.export:
        return exporter(*a.export)
    fd, nd = (int(x) for x in a.devices.split(","))
    lib = ctypes.CDLL(a.lib)
    lib.ddtc_pack.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                              ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                              ctypes.c_void_p, ctypes.c_int]
    lib.ddtc_unpack.argtypes = lib.ddtc_pack.argtypes
    lib.ddtc_type_packed_size.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                          ctypes.POINTER(ctypes.c_int64)]
    far_bytes = 64 << 20
    child = subprocess.Popen([sys.executable, __file__, a.lib, "--export",
                              str(fd), str(far_bytes)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    handle = bytes.fromhex(child.stdout.readline().strip())
    results = []
    with cp.cuda.Device(nd):
        ipc_ptr = cp.cuda.runtime.ipcOpenMemHandle(handle)
        peer_ptr = None
        if fd != nd:
            cp.cuda.runtime.deviceEnablePeerAccess(fd)
            with cp.cuda.Device(fd):
                peer = cp.zeros(far_bytes, dtype=cp.uint8)
            peer_ptr = peer.data.ptr
        local = cp.zeros(far_bytes, dtype=cp.uint8)
        stream = cp.cuda.Stream(non_blocking=False)
        places = [("local", local.data.ptr), ("ipc", ipc_ptr)]
        if peer_ptr:
            places.insert(1, ("peer access", peer_ptr))
        for name, (spec, size) in SPECS.items():
            t = ctypes.c_void_p()
            rc = lib.ddtc_type_from_spec(spec.encode(), b"t", ctypes.byref(t))
            rc = rc or lib.ddtc_type_commit(t)
            lib.ddtc_type_wait(t)
            if rc:
                print("%s: type error %d" % (name, rc))
                continue
            span = 2 * size + 4096
            origin = cp.zeros(span, dtype=cp.uint8)
            out = ctypes.c_int64()

            def per_call(fn):
                fn()
                stream.synchronize()
                ts = []
                for _ in range(a.batches):
                    t0 = time.perf_counter()
                    for _ in range(a.batch):
                        fn()
                    ts.append((time.perf_counter() - t0) / a.batch * 1e6)
                    stream.synchronize()
                ts.sort()
                return ts[len(ts) // 2]

            base = per_call(lambda: lib.ddtc_type_packed_size(
                t, 1, ctypes.byref(out)))
            # The GPU's time for the whole message from each place, against
            # a copy engine moving the same bytes from there.
            for place, ptr in places:
                ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
                scratch = cp.empty(size, dtype=cp.uint8)

                def gpu_time(fn, reps=9):
                    fn()
                    ts = []
                    for _ in range(reps):
                        ev0.record(stream)
                        fn()
                        ev1.record(stream)
                        ev1.synchronize()
                        ts.append(cp.cuda.get_elapsed_time(ev0, ev1) * 1e3)
                    ts.sort()
                    return ts[len(ts) // 2]
                t_unpack = gpu_time(lambda: lib.ddtc_unpack(
                    t, origin.data.ptr, 1, 0, size, ptr, stream.ptr, 0))
                t_copy = gpu_time(lambda: cp.cuda.runtime.memcpyAsync(
                    scratch.data.ptr, ptr, size,
                    cp.cuda.runtime.memcpyDeviceToDevice, stream.ptr))
                results.append({"type": name, "packed": place,
                                "op": "whole unpack", "bytes": size,
                                "unpack_us": t_unpack, "copy_us": t_copy})
                print("%-12s whole unpack of %d B from %-12s %7.1f us "
                      "(%5.0f GB/s); a copy of them %7.1f us (%5.0f GB/s)" % (
                          name, size, place, t_unpack, size / t_unpack / 1e3,
                          t_copy, size / t_copy / 1e3), flush=True)
                del scratch
            for place, ptr in places:
                for op in ("pack", "unpack"):
                    f = getattr(lib, "ddtc_" + op)
                    status = []

                    def call():
                        status.append(f(t, origin.data.ptr, 1, 0, a.bytes, ptr,
                                        stream.ptr, 0))
                    us = per_call(call)
                    bad = sum(1 for s in status if s)
                    r = {"type": name, "packed": place, "op": op,
                         "us_per_call": us, "ctypes_us": base,
                         "failed_calls": bad}
                    results.append(r)
                    print("%-12s %-6s packed in %-12s %6.2f us per call "
                          "(ctypes alone %.2f)%s" % (
                              name, op, place, us, base,
                              " %d FAILED" % bad if bad else ""), flush=True)
        cp.cuda.runtime.ipcCloseMemHandle(ipc_ptr)
    child.stdin.write("\n")
    child.stdin.flush()
    child.wait()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"devices": [fd, nd], "bytes": a.bytes,
                       "env": {k: v for k, v in os.environ.items()
                               if k.startswith("DDTC_")},
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
