#!/usr/bin/env bash
# Where does cuMemAlloc put classic segments? CUDA classic replays with the
# segment events' addresses, and a direct probe.
set -u
B=${EXPANSE_BIN:-.device-bin}
mkdir -p $OUT/addr
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
for t in serving gen_llama t5_seq2seq gen_gpt2 moe_train; do
  timeout 120 $B/expanse replay traces/$t.trace.csv.gz --backend cuda --conf expandable_segments:False --snapshot /tmp/$t.pickle --json > $OUT/addr/$t.json
  python3 - "$t" <<'PY'
import pickle, sys, json, os
t = sys.argv[1]
s = pickle.load(open(f"/tmp/{t}.pickle", "rb"))
ev = [(i, e["action"], e["addr"], e["size"], e["stream"]) for i, e in enumerate(s["device_traces"][0]) if e["action"] in ("segment_alloc", "segment_free")]
json.dump({"n_entries": len(s["device_traces"][0]), "segments": ev}, open(os.environ["OUT"] + f"/addr/{t}.seg.json", "w"))
print(t, len(ev), "segment events")
PY
  rm -f /tmp/$t.pickle
done
python3 - <<'PY'
import ctypes, json, os
cu = ctypes.CDLL("libcuda.so.1")
cu.cuInit(0)
dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); cu.cuCtxSetCurrent(ctx)
M = 1 << 20
def alloc(n):
    p = ctypes.c_uint64(); r = cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)); assert r == 0, r; return p.value
out = []
live = {}
seq = [("a", 2), ("a", 2), ("a", 20), ("a", 2), ("a", 40), ("a", 12), ("a", 2), ("a", 300), ("a", 2), ("a", 20),
       ("f", 2), ("a", 2), ("f", 3), ("a", 20), ("a", 20), ("f", 5), ("a", 4), ("a", 8), ("f", 8), ("a", 100), ("a", 300),
       ("a", 1024), ("a", 2), ("a", 64), ("a", 6), ("a", 10), ("a", 2), ("a", 2), ("a", 2), ("a", 2)]
for i, (op, v) in enumerate(seq):
    if op == "a":
        p = alloc(v * M); live[i] = (p, v); out.append(("a", i, v, p))
    else:
        k = sorted(live)[v]; p, sz = live.pop(k); cu.cuMemFree_v2(ctypes.c_uint64(p)); out.append(("f", k, sz, p))
for o in out: print(o[0], o[1], o[2], hex(o[3]))
json.dump(out, open(os.environ["OUT"] + "/addr/probe.json", "w"))
PY
cd $OUT && tar czf addr.tar.gz addr && rm -rf addr && ls -la
