"""Prints pack and unpack fractions of memcpy of ddtc-bench JSON files side by
side: python3 compare.py A.json B.json ... (the layouts of the first file).
The last column is the kernel origin in the last file (2 built in, 3 compiled
earlier in the process, 5 compiled by NVRTC for the call)."""
import json,sys
def load(f):
    d=json.load(open(f))['layouts']
    if isinstance(d,dict): return d
    return {r['name']:r for r in d}
keys=sys.argv[1:]
R={k:load(k) for k in keys}
names=list(R[keys[0]].keys())
print("%-26s pack %s | unpack"%("layout",' '.join(keys)))
for n in names:
    p=[R[k][n]['pack_vs_memcpy'] for k in keys]; u=[R[k][n]['unpack_vs_memcpy'] for k in keys]
    print("%-26s %s | %s | %s"%(n,' '.join('%.3f'%x for x in p),' '.join('%.3f'%x for x in u), R[keys[-1]][n].get('kernel_origin')))
