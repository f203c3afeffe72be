"""Session 15, call 5: a workload run live on expanse's default through the C ABI, with expanse_trace.record
around it, so that the allocation stream expanse saw can be compared event by event with the trace recorded
under PyTorch's allocator. python3 live_trace.py NAME OUT.trace.csv.gz"""
import json
import os
import random
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..", "..")
sys.path.insert(0, os.path.join(root, "python"))
sys.path.insert(0, os.path.join(root, "scripts", "traces"))
import torch  # noqa: E402
import expanse_torch  # noqa: E402

expanse_torch.install()
import expanse_trace  # noqa: E402
import record  # noqa: E402

name, out = sys.argv[1], sys.argv[2]
family, fn = record.WORKLOADS[name]
rng = random.Random(f"expanse-{name}")
torch.manual_seed(0)
torch.cuda.init()
t0 = time.time()
with expanse_trace.record(out, title=f"{name} live on expanse"):
    fn(rng)
    torch.cuda.synchronize()
stats = torch.cuda.memory_stats()
print(json.dumps({"workload": name, "seconds": round(time.time() - t0, 2), "reserved_bytes.all.peak": stats.get("reserved_bytes.all.peak")}))
