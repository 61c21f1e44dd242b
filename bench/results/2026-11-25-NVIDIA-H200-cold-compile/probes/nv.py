import ctypes, sys, time, resource
import glob
N=ctypes.CDLL(sorted(glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*"))[0])
def comp(src, opts, out="cubin"):
    p=ctypes.c_void_p()
    assert N.nvrtcCreateProgram(ctypes.byref(p), src, b"k.cu", 0, None, None)==0
    arr=(ctypes.c_char_p*len(opts))(*opts)
    t0=time.perf_counter(); c0=time.thread_time()
    r=N.nvrtcCompileProgram(p, len(opts), arr)
    t=time.perf_counter()-t0; c=time.thread_time()-c0
    N.nvrtcDestroyProgram(ctypes.byref(p))
    return r,t*1e3,c*1e3
for f in sys.argv[1:]:
    src=open(f,"rb").read()
    for i in range(3):
        print(f, comp(src,[b"--gpu-architecture=sm_90",b"--std=c++17"]), comp(src,[b"--gpu-architecture=compute_90",b"--std=c++17"]))
