#!/usr/bin/env bash
O=${1:?results folder}; mkdir -p $O; exec > $O/probe3.txt 2>&1
cat > /tmp/c.py <<'P'
import ctypes, glob, time, sys, os
N=ctypes.CDLL(sorted(glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"))[0])
src=open(sys.argv[1],"rb").read()
p=ctypes.c_void_p(); N.nvrtcCreateProgram(ctypes.byref(p), src, b"k.cu", 0, None, None)
o=[b"--gpu-architecture=sm_90", b"--std=c++17"]; arr=(ctypes.c_char_p*2)(*o)
t0=time.perf_counter(); r=N.nvrtcCompileProgram(p, 2, arr)
print(sys.argv[2], r, round((time.perf_counter()-t0)*1e3,1), "ms", flush=True)
P
S=PROBES/aos-xyz-float.cu
python3 /tmp/c.py $S "first, cache on      "
python3 /tmp/c.py $S "again, cache on      "
CUDA_CACHE_DISABLE=1 python3 /tmp/c.py $S "again, DISABLE=1     "
CUDA_CACHE_PATH=/tmp/fresh1 python3 /tmp/c.py $S "again, PATH=fresh    "
ls /tmp/fresh1 2>&1 | head -3
CUDA_CACHE_PATH=/tmp/fresh1 python3 /tmp/c.py $S "again, PATH=fresh (2)"
mv ~/.nv ~/.nv-moved; python3 /tmp/c.py $S "again, ~/.nv removed "
ls -la ~/.nv ~/.cache 2>&1 | head; find / -xdev -newer /tmp/c.py -type f 2>/dev/null | grep -v -E "^/proc|^/sys" | head
sed 's/16/17/g' $S > /tmp/x.cu; CUDA_CACHE_DISABLE=1 python3 /tmp/c.py /tmp/x.cu "new PTX, DISABLE=1   "; CUDA_CACHE_DISABLE=1 python3 /tmp/c.py /tmp/x.cu "same, DISABLE=1      "
