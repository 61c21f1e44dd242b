#!/usr/bin/env bash
O=${1:?results folder}; mkdir -p $O; exec > $O/probe2.txt 2>&1
cat > /tmp/w.py <<'P'
import ctypes, glob, time, sys, os
N=ctypes.CDLL(sorted(glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"))[0])
def comp(src, opts):
    p=ctypes.c_void_p(); N.nvrtcCreateProgram(ctypes.byref(p), src, b"k.cu", 0, None, None)
    arr=(ctypes.c_char_p*len(opts))(*opts)
    t0=time.perf_counter(); c0=time.process_time(); r=N.nvrtcCompileProgram(p, len(opts), arr)
    w=(time.perf_counter()-t0)*1e3; c=(time.process_time()-c0)*1e3
    n=ctypes.c_size_t(); N.nvrtcGetProgramLogSize(p, ctypes.byref(n)); b=ctypes.create_string_buffer(n.value); N.nvrtcGetProgramLog(p,b)
    N.nvrtcDestroyProgram(ctypes.byref(p)); return r, round(w,1), round(c,1), b.value[:300]
src=open(sys.argv[1],"rb").read()
k=int(sys.argv[2])
base=[b"--gpu-architecture=sm_90", b"--std=c++17"]
for extra in ([], [b"--ptxas-options=-O1"], [b"--ptxas-options=-O0"], [b"--ptxas-options=-v"]):
    k+=1
    print(extra, comp(src.replace(b"20", b"%d" % (100+k)), base+extra), flush=True)
maps=open("/proc/self/maps").read()
print("libcuda loaded:", "libcuda" in maps, "| nvptx:", [l.split()[-1] for l in maps.splitlines() if "ptx" in l.lower() or "jit" in l.lower()][:5])
P
set -x
python3 /tmp/w.py PROBES/aos-3of5-float.cu 0
CUDA_CACHE_DISABLE=1 python3 /tmp/w.py PROBES/aos-3of5-float.cu 0
CUDA_CACHE_DISABLE=1 python3 /tmp/w.py PROBES/aos-3of5-float.cu 0
time ptxas -arch=sm_90 PROBES/aos-3of5-float.ptx -o /tmp/a.cubin
time ptxas -arch=sm_90 PROBES/aos-3of5-float.ptx -o /tmp/a.cubin
sed -i 's/ddtc_/zz_/g' PROBES/aos-3of5-float.ptx; time ptxas -arch=sm_90 PROBES/aos-3of5-float.ptx -o /tmp/a.cubin
time nvcc -arch=sm_90 -cubin PROBES/particles.cu -o /tmp/p.cubin
du -sh ~/.nv/ComputeCache; ls ~/.nv/ComputeCache | head
command -v perf gdb py-spy
