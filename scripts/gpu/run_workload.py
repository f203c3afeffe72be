"""Run one workload of scripts/traces/record.py live on one allocator and
report its wall time and memory peaks (no recording).

    python3 scripts/gpu/run_workload.py NAME --mode expanse|native|expandable|async
        [--conf EXPANSE_CONF] [--out result.json] [--trace live.trace.csv.gz]

`expanse` installs libexpanse.so (EXPANSE_LIB, else target/release) through
python/expanse_torch.py with EXPANSE_ALLOC_CONF set to --conf (expanse's
default when absent); the other modes are PyTorch's own allocators
(`expandable_segments:True`, `backend:cudaMallocAsync`). The workload runs
with the same random draws as when it was recorded, so its peaks compare
with the trace's replays in traces/corpus.json. One process per run: the
allocator is chosen before PyTorch touches the device.

`--trace` also records the live run's own allocation trace (through
python/expanse_trace.py, on whichever allocator runs it), so that a live
run whose order of frees differs from the recorded one (a side stream's
timing) can be replayed as it happened.
"""

import argparse
import json
import os
import random
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("name")
p.add_argument("--mode", required=True, choices=["expanse", "native", "expandable", "async"])
p.add_argument("--conf", default=None)
p.add_argument("--out", default=None)
p.add_argument("--trace", default=None, help="also write this run's allocation trace here")
args = p.parse_args()

os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
os.environ.pop("PYTORCH_ALLOC_CONF", None)
if args.mode == "expandable":
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
elif args.mode == "async":
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
elif args.conf is not None:
    os.environ["EXPANSE_ALLOC_CONF"] = args.conf
if args.conf is not None and args.mode != "expanse":
    sys.exit("--conf is expanse's configuration; PyTorch's modes take none here")

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
sys.path.insert(0, os.path.join(here, "..", "traces"))
import torch  # noqa: E402

if args.mode == "expanse":
    import expanse_torch

    expanse_torch.install()

import record  # noqa: E402

if args.name not in record.WORKLOADS:
    sys.exit(f"unknown workload {args.name!r}: see `python3 scripts/traces/record.py --list`")
family, fn = record.WORKLOADS[args.name]
rng = random.Random(f"expanse-{args.name}")
torch.manual_seed(0)
torch.cuda.init()
if args.trace:
    import expanse_trace

    recording = expanse_trace.record(args.trace, title=f"{args.name}, live on {args.mode}")
else:
    import contextlib

    recording = contextlib.nullcontext()
t0 = time.time()
with recording:
    fn(rng)
torch.cuda.synchronize()
seconds = time.time() - t0
stats = torch.cuda.memory_stats()
result = {
    "workload": args.name,
    "mode": args.mode,
    "conf": args.conf,
    "seconds": round(seconds, 2),
    **{k: stats.get(k) for k in ("reserved_bytes.all.peak", "allocated_bytes.all.peak", "requested_bytes.all.peak", "num_alloc_retries", "num_ooms")},
}
line = json.dumps(result)
print(line)
if args.out:
    with open(args.out, "w") as f:
        f.write(line + "\n")
