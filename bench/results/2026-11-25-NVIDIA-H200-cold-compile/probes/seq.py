import ctypes, sys, time, os
L = ctypes.CDLL(os.environ.get("LIB","build/lib/libddtc.so"))
class Info(ctypes.Structure):
    _fields_=[("origin",ctypes.c_int),("units",ctypes.c_int),("width",ctypes.c_int),("gen",ctypes.c_int),("arch",ctypes.c_int),("compile_ms",ctypes.c_double),("disk_ms",ctypes.c_double),("shape",ctypes.c_char*64)]
assert L.ddtc_init()==0
rows=[l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
names=sys.argv[2].split(",")
for n in names:
    r=[x for x in rows if x[0]==n][0]
    t=ctypes.c_void_p()
    s=L.ddtc_type_from_spec(r[6].replace("\\n","\n").encode(),b"t",ctypes.byref(t)); assert s==0,(n,s)
    t0=time.time(); L.ddtc_type_commit(t); t1=time.time(); L.ddtc_type_wait(t); t2=time.time()
    i=Info(); L.ddtc_type_kernel_info(t,ctypes.byref(i))
    print(f"{n:20s} commit {1e3*(t1-t0):8.2f} wait {1e3*(t2-t1):8.2f} nvrtc {i.compile_ms:8.1f} origin {i.origin} {i.shape.decode()}", flush=True)
    hs=[]
    for k in range(21):
        a=ctypes.c_void_p(); L.ddtc_type_from_spec(r[6].replace("\\n","\n").encode(),b"t",ctypes.byref(a))
        h0=time.perf_counter(); L.ddtc_type_commit(a); hs.append((time.perf_counter()-h0)*1e6); L.ddtc_type_free(ctypes.byref(a))
    hs.sort(); print("   hit us median", round(hs[10],2), "first", round(hs[0],2))
