"""Train GPT-2 small (built from a config, random data) on one allocator.

    python3 train_gpt2.py --mode expanse|native|expandable --steps 200 --out result.json

Batch size and sequence length vary every step (drawn from a seeded RNG),
so the allocator sees ever-changing sizes. The same seed gives the same
weights and data in every mode, so losses must agree across allocators.
"""

import argparse
import json
import os
import sys
import threading
import time

p = argparse.ArgumentParser()
p.add_argument("--mode", required=True, choices=["expanse", "native", "expandable"])
p.add_argument("--steps", type=int, default=200)
p.add_argument("--out", required=True)
args = p.parse_args()

if args.mode == "expandable":
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
else:
    os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import torch  # noqa: E402

if args.mode == "expanse":
    import expanse_torch

    expanse_torch.install()

from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda:0")
model = GPT2LMHeadModel(GPT2Config(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, n_positions=1024)).to(dev)
model.config.attn_implementation = "eager"
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
rng = torch.Generator().manual_seed(1234)

# nvidia-smi's view of used memory, sampled while training.
used_peak = [0]
stop = threading.Event()


def sample():
    import pynvml

    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    while not stop.is_set():
        used_peak[0] = max(used_peak[0], pynvml.nvmlDeviceGetMemoryInfo(h).used)
        time.sleep(0.05)


sampler = threading.Thread(target=sample, daemon=True)
sampler.start()

losses, times = [], []
for step in range(args.steps):
    b = int(torch.randint(1, 17, (1,), generator=rng))
    s = int(torch.randint(64, 1025, (1,), generator=rng))
    x = torch.randint(0, 50257, (b, s), generator=rng).to(dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(input_ids=x, labels=x).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    times.append(time.perf_counter() - t0)
    losses.append(float(loss))

stop.set()
sampler.join()
if args.mode == "expanse":
    st = expanse_torch.memory_stats(0)
    peak_reserved = st["reserved_bytes.all.peak"]
    peak_allocated = st["allocated_bytes.all.peak"]
else:
    peak_reserved = torch.cuda.max_memory_reserved(0)
    peak_allocated = torch.cuda.max_memory_allocated(0)
res = {
    "mode": args.mode,
    "steps": args.steps,
    "losses": losses,
    "peak_reserved_bytes": peak_reserved,
    "peak_allocated_bytes": peak_allocated,
    "nvidia_smi_used_peak_bytes": used_peak[0],
    "median_step_s": sorted(times)[len(times) // 2],
    "mean_step_s_after_10": sum(times[10:]) / max(1, len(times) - 10),
}
json.dump(res, open(args.out, "w"))
print(json.dumps({k: v for k, v in res.items() if k != "losses"}))
