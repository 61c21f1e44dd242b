#!/usr/bin/env python3
"""Times NVRTC on the kernels of every bench layout, compiled the two ways:
one program holding the pack and the unpack kernel, and the runtime's way,
two programs at once, each leaving the other kernel out
(DDTC_SKIP_PACK_KERNEL / DDTC_SKIP_UNPACK_KERNEL). Checks that each
kernel's machine code (its .text section in the cubin) is the same both
ways. Needs no GPU. The driver's compute cache is turned off, so every
compile is cold.

Both ways use the runtime's options, --minimal included where NVRTC is
12.4 or later (--plain leaves it out). With --with OPTIONS, the runtime's
way is also timed with those NVRTC options added, and each kernel's machine
code is compared with the runtime's: an option that changes it is not free
(--plain --with=--minimal measures --minimal itself).

    bench/compile-apart.py BUILD [--reps N] [--arch 90] [--json OUT]
                           [--layouts NAME,NAME...] [--plain] [--with OPTIONS]
"""

import argparse
import ctypes
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EMPTY_KERNEL = 'extern "C" __global__ void k(int *p) { p[threadIdx.x] = 1; }\n'


def load_nvrtc():
    names = []
    if os.environ.get("DDTC_NVRTC_PATH"):
        p = os.environ["DDTC_NVRTC_PATH"]
        names.append(os.path.join(p, "libnvrtc.so") if os.path.isdir(p) else p)
    names += ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"]
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home:
            names.append(os.path.join(home, "lib64", "libnvrtc.so"))
    for n in names:
        try:
            return ctypes.CDLL(n)
        except OSError:
            pass
    sys.exit("compile-apart: cannot load NVRTC (tried %s)" % ", ".join(names))


class Compiler:
    def __init__(self, arch, plain=False):
        self.lib = load_nvrtc()
        self.base = ["--gpu-architecture=sm_%s" % arch, "--std=c++17"]
        # As the runtime compiles (NVRTCCompiler.cpp): NVRTC 12.4 and later
        # leave the CUDA runtime's device API out.
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        if not plain and (major.value, minor.value) >= (12, 4):
            self.base.append("--minimal")

    def cubin(self, source, extra):
        """(milliseconds, cubin bytes) of one compile."""
        lib = self.lib
        prog = ctypes.c_void_p()
        if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"k.cu",
                                  0, None, None) != 0:
            sys.exit("compile-apart: nvrtcCreateProgram failed")
        opts = [o.encode() for o in self.base + extra]
        arr = (ctypes.c_char_p * len(opts))(*opts)
        t0 = time.perf_counter()
        rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
        ms = (time.perf_counter() - t0) * 1e3
        if rc != 0:
            n = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
            log = ctypes.create_string_buffer(n.value)
            lib.nvrtcGetProgramLog(prog, log)
            sys.exit("compile-apart: NVRTC failed (%s):\n%s" %
                     (" ".join(extra), log.value.decode(errors="replace")))
        n = ctypes.c_size_t()
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
        out = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetCUBIN(prog, out)
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return ms, out.raw


def kernel_texts(cubin):
    """{kernel name: machine code} from a 64-bit ELF cubin."""
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    size, count, names = struct.unpack_from("<HHH", cubin, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * size)
             for i in range(count)]
    strtab = heads[names][4]
    out = {}
    for h in heads:
        end = cubin.index(b"\0", strtab + h[0])
        name = cubin[strtab + h[0]:end].decode()
        if name.startswith(".text."):
            out[name[len(".text."):]] = cubin[h[4]:h[4] + h[5]]
    return out


def apart(compiler, source, extra=()):
    """Wall milliseconds of the two compiles at once, and their cubins."""
    got = {}

    def one(key, macro):
        got[key] = compiler.cubin(source, ["-D" + macro] + list(extra))

    t0 = time.perf_counter()
    other = threading.Thread(target=one,
                             args=("unpack", "DDTC_SKIP_PACK_KERNEL"))
    other.start()
    one("pack", "DDTC_SKIP_UNPACK_KERNEL")
    other.join()
    return (time.perf_counter() - t0) * 1e3, got["pack"][1], got["unpack"][1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", help="the build folder (its bin/ddtc emits)")
    ap.add_argument("--reps", type=int, default=2,
                    help="compiles of each way per layout; the fastest counts")
    ap.add_argument("--arch", default="90", help="sm_XX of the cubins")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--layouts",
                    help="only these layouts of bench/layouts.py (names "
                    "separated by commas)")
    ap.add_argument("--plain", action="store_true",
                    help="leave out --minimal, which the runtime adds for "
                    "NVRTC 12.4 and later")
    ap.add_argument("--with", dest="with_options", default="",
                    help="NVRTC options (separated by spaces) to time the "
                    "runtime's way with as well, checking the machine code")
    args = ap.parse_args()
    extra = args.with_options.split()
    os.environ["CUDA_CACHE_DISABLE"] = "1"
    ddtc = os.path.join(args.build, "bin", "ddtc")
    if not os.access(ddtc, os.X_OK):
        sys.exit("compile-apart: %s is not an executable" % ddtc)
    tsv = subprocess.run([sys.executable, os.path.join(HERE, "layouts.py"),
                          "--tsv"], check=True, capture_output=True,
                         text=True).stdout
    lines = tsv.splitlines()
    if args.layouts:
        wanted = args.layouts.split(",")
        known = [line.split("\t")[0] for line in lines]
        unknown = [n for n in wanted if n not in known]
        if unknown:
            sys.exit("compile-apart: no layout named %s in bench/layouts.py" %
                     ", ".join(unknown))
        lines = [line for line in lines if line.split("\t")[0] in wanted]
    compiler = Compiler(args.arch, args.plain)
    seen, rows, failures = set(), [], 0
    print("%-26s %-40s %9s %9s %6s %s" %
          ("layout", "shape", "one ms", "apart ms", "ratio", "machine code") +
          ("   with ms  ratio  code with %s" % " ".join(extra) if extra else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for line in lines:
            name, spec = line.split("\t")[0], line.split("\t")[-1]
            path = os.path.join(tmp, name + ".ddt")
            with open(path, "w") as f:
                f.write(spec.replace("\\n", "\n"))
            explain = subprocess.run([ddtc, "--emit=explain", path],
                                     check=True, capture_output=True,
                                     text=True).stdout
            shape = explain.split("shape: ")[1].split()[0]
            if shape in seen or shape.startswith("units."):
                continue  # one per shape; units kernels are built in
            seen.add(shape)
            source = subprocess.run([ddtc, "--emit=cuda", path], check=True,
                                    capture_output=True, text=True).stdout
            one_ms, apart_ms, with_ms = [], [], []
            for _ in range(args.reps):
                ms, both = compiler.cubin(source, [])
                one_ms.append(ms)
                ms, pack, unpack = apart(compiler, source)
                apart_ms.append(ms)
                if extra:
                    ms, wpack, wunpack = apart(compiler, source, extra)
                    with_ms.append(ms)
            whole = kernel_texts(both)
            alone = {**kernel_texts(unpack), **kernel_texts(pack)}
            same = (len(whole) == 2 and whole == alone and
                    len(kernel_texts(pack)) == 1 and
                    len(kernel_texts(unpack)) == 1)
            failures += not same
            row = {"layout": name, "shape": shape, "one_ms": min(one_ms),
                   "apart_ms": min(apart_ms), "same_machine_code": same}
            tail = ""
            if extra:
                same_with = ({**kernel_texts(wunpack), **kernel_texts(wpack)}
                             == alone)
                failures += not same_with
                row.update(with_ms=min(with_ms), same_code_with=same_with)
                tail = " %9.1f %6.2f  %s" % (
                    row["with_ms"], row["with_ms"] / row["apart_ms"],
                    "same" if same_with else "DIFFERENT")
            rows.append(row)
            print("%-26s %-40s %9.1f %9.1f %6.2f %s" %
                  (name, shape[:40], row["one_ms"], row["apart_ms"],
                   row["apart_ms"] / row["one_ms"],
                   "same" if same else "DIFFERENT") + tail, flush=True)
    one = statistics.median(r["one_ms"] for r in rows)
    two = statistics.median(r["apart_ms"] for r in rows)
    print("%d shapes: median %.1f ms in one program, %.1f ms apart (%.2f); "
          "%d with different machine code" %
          (len(rows), one, two, two / one, failures))
    if extra:
        three = statistics.median(r["with_ms"] for r in rows)
        print("with %s: median %.1f ms apart (%.2f of without)" %
              (" ".join(extra), three, three / two))
    # What NVRTC costs whatever the kernel: a kernel of one store.
    empty = min(compiler.cubin(EMPTY_KERNEL, [])[0]
                for _ in range(max(args.reps, 3)))
    print("an empty kernel: %.1f ms (NVRTC's fixed cost)" % empty)
    summary = {"cpus": os.cpu_count(), "arch": args.arch,
               "options": compiler.base, "empty_kernel_ms": empty,
               "shapes": rows}
    if extra:
        empty_with = min(compiler.cubin(EMPTY_KERNEL, extra)[0]
                         for _ in range(max(args.reps, 3)))
        print("an empty kernel with %s: %.1f ms" % (" ".join(extra),
                                                    empty_with))
        summary.update(with_options=extra, empty_kernel_with_ms=empty_with)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
