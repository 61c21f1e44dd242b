import ctypes, glob, time, sys
N=ctypes.CDLL(sorted(glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"))[0])
J=ctypes.CDLL(sorted(glob.glob("/usr/local/cuda/lib64/libnvJitLink.so*"))[0])
def nvrtc(src, arch):
    p=ctypes.c_void_p(); N.nvrtcCreateProgram(ctypes.byref(p), src, b"k.cu", 0, None, None)
    o=[b"--gpu-architecture="+arch, b"--std=c++17"]; arr=(ctypes.c_char_p*2)(*o)
    t0=time.perf_counter(); r=N.nvrtcCompileProgram(p, 2, arr); t=(time.perf_counter()-t0)*1e3
    n=ctypes.c_size_t(); N.nvrtcGetPTXSize(p, ctypes.byref(n)); b=ctypes.create_string_buffer(n.value); N.nvrtcGetPTX(p,b)
    N.nvrtcDestroyProgram(ctypes.byref(p)); return t, b.raw
def link(ptx, extra=[]):
    h=ctypes.c_void_p(); o=[b"-arch=sm_90"]+extra; arr=(ctypes.c_char_p*len(o))(*o)
    t0=time.perf_counter()
    r1=J.nvJitLinkCreate(ctypes.byref(h), len(o), arr)
    r2=J.nvJitLinkAddData(h, 2, ptx, len(ptx), b"k.ptx")  # 2 = NVJITLINK_INPUT_PTX
    r3=J.nvJitLinkComplete(h)
    n=ctypes.c_size_t(); J.nvJitLinkGetLinkedCubinSize(h, ctypes.byref(n))
    t=(time.perf_counter()-t0)*1e3
    J.nvJitLinkDestroy(ctypes.byref(h)); return (r1,r2,r3), round(t,1), n.value
for f in sys.argv[1:]:
    src=open(f,"rb").read()
    for k in range(2):
        s=src.replace(b"ddtc_", b"v%d_" % k)
        tc,_=nvrtc(s, b"sm_90")
        tp,ptx=nvrtc(s.replace(b"v%d_"%k, b"w%d_"%k), b"compute_90")
        print(f.split("/")[-1], "nvrtc cubin", round(tc,1), "| nvrtc ptx", round(tp,1), "+ nvJitLink", link(ptx), "split", link(ptx,[b"-split-compile=0"]), flush=True)
