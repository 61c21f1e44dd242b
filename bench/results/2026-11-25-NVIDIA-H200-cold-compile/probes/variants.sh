#!/usr/bin/env bash
# Is there a cache behind NVRTC? Compile variants of one source, watch files.
O=${1:?results folder}; mkdir -p $O; exec > $O/probe.txt 2>&1; set -x
uptime; env | grep -i -E "cuda|nv|cache" ; mount | grep -E " / | /usr| /tmp| /root" ; df -h / /usr/local/cuda/ /tmp; ls -la ~ ~/.nv ~/.cache 2>&1 | head -30
readlink -f /usr/local/cuda; ls /usr/local/cuda*/lib64/libnvrtc* 
touch /tmp/marker; sleep 1
S=PROBES/aos-3of5-float.cu
cat > /tmp/v.py <<'P'
import ctypes, glob, time, sys
N=ctypes.CDLL(sorted(glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*"))[0])
def comp(src, arch):
    p=ctypes.c_void_p(); N.nvrtcCreateProgram(ctypes.byref(p), src, b"k.cu", 0, None, None)
    o=[b"--gpu-architecture="+arch, b"--std=c++17"]; arr=(ctypes.c_char_p*2)(*o)
    t0=time.perf_counter(); c0=time.process_time(); r=N.nvrtcCompileProgram(p, 2, arr)
    w=(time.perf_counter()-t0)*1e3; c=(time.process_time()-c0)*1e3
    N.nvrtcDestroyProgram(ctypes.byref(p)); return r, round(w,1), round(c,1)
src=open(sys.argv[1],"rb").read()
print("same text      ", comp(src, b"sm_90"), comp(src, b"sm_90"))
print("comment added  ", comp(src+b"\n// x1\n", b"sm_90"), comp(src+b"\n// x1\n", b"sm_90"))
print("name changed   ", comp(src.replace(b"ddtc_", b"qq_"), b"sm_90"))
print("constant chngd ", comp(src.replace(b"20", b"21"), b"sm_90"))
print("sm_80          ", comp(src, b"sm_80"), comp(src, b"sm_80"))
print("sm_100         ", comp(src, b"sm_100"))
P
python3 /tmp/v.py $S
python3 /tmp/v.py PROBES/particles.cu 2>&1 | head -3
find / -xdev -newer /tmp/marker -type f 2>/dev/null | grep -v -E "^/proc|^/sys|^/tmp/marker" | head -30
find /tmp /root /var/tmp -newer /tmp/marker 2>/dev/null | head
command -v strace && strace -f -c -o $O/strace.txt python3 /tmp/v.py PROBES/rows-of-records.cu
command -v perf && echo perf
