"""Synthetic traces: kvcache (tensors grown by concatenation), random
(log-normal sizes, random lifetimes), smallmany (many small tensors and
8-48 MiB activations). Deterministic (seeded).

Usage: synth.py kvcache|random|smallmany OUT
"""
import gzip, random, sys
kind, out = sys.argv[1], sys.argv[2]
r = random.Random(7)
ev = []; nid = 0; live = {}
def a(size, stream=0):
    global nid
    nid += 1; ev.append(f"a,{nid},{size},{stream}"); live[nid] = size; return nid
def f(i):
    ev.append(f"f,{i}"); del live[i]
MiB = 1 << 20
if kind == "kvcache":   # tensors that grow by torch.cat: alloc n+1, free n
    weights = [a(r.randint(50, 400) * MiB) for _ in range(20)]
    for req in range(60):
        caches = [a(2 * MiB) for _ in range(24)]
        for step in range(r.randint(20, 120)):
            for j in range(24):
                new = a(live[caches[j]] + 256 * 1024)
                f(caches[j]); caches[j] = new
            tmp = [a(r.randint(1, 40) * MiB) for _ in range(4)]
            for t in tmp: f(t)
        for c in caches: f(c)
elif kind == "random":  # random sizes, random lifetimes
    pool = []
    for i in range(40000):
        if pool and (r.random() < 0.48 or len(pool) > 400):
            f(pool.pop(r.randrange(len(pool))))
        else:
            s = int(r.lognormvariate(13, 3)) % (2 << 30) + 1
            pool.append(a(s))
elif kind == "smallmany":  # many small tensors, a few big activations
    for it in range(200):
        acts = [a(r.choice([8, 16, 24, 48]) * MiB) for _ in range(30)]
        smalls = [a(r.randint(1, 300000)) for _ in range(300)]
        for x in smalls[::2]: f(x)
        for x in reversed(acts): f(x)
        for x in smalls[1::2]: f(x)
with gzip.open(out, "wt") as fh:
    fh.write("\n".join(ev) + "\n")
