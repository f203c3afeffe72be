"""GPT-2 small under torch.compile(mode="reduce-overhead") (CUDA graphs):
expanse against PyTorch native, same seed, same data (issue 11).

    python3 scripts/gpu/compile_gpt2.py --mode native  --steps 30 --out $OUT/compile-native.json
    python3 scripts/gpu/compile_gpt2.py --mode expanse --steps 30 --out $OUT/compile-expanse.json
    python3 scripts/gpu/compile_gpt2.py --compare $OUT/compile-native.json $OUT/compile-expanse.json

Fixed batch and sequence (CUDA graphs need static shapes). The compare
step prints the largest relative loss difference; done when <= 1e-3.
"""

import argparse
import faulthandler
import json
import os
import sys
import time

faulthandler.enable()

ap = argparse.ArgumentParser()
ap.add_argument("--mode", choices=["native", "expanse"])
ap.add_argument("--steps", type=int, default=30)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--seq", type=int, default=512)
ap.add_argument("--out")
ap.add_argument("--compare", nargs=2)
args = ap.parse_args()

if args.compare:
    try:
        a, b = (json.load(open(p)) for p in args.compare)
    except (OSError, ValueError) as e:
        print(f"no comparison: {e}")
        sys.exit(1)
    la, lb = a["losses"], b["losses"]
    n = min(len(la), len(lb))
    rel = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(la[:n], lb[:n]))
    print(f"{n} steps; max relative loss difference {rel:.3e} ({'OK' if rel <= 1e-3 and n == len(la) == len(lb) else 'FAIL'})")
    for k in ["peak_reserved", "peak_allocated", "seconds"]:
        print(f"  {k}: {a.get(k)} vs {b.get(k)}")
    sys.exit(0 if rel <= 1e-3 and n == len(la) == len(lb) else 1)

os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(root, "python"))
for p in [os.path.join(root, ".device-bin", "libexpanse.so"), os.path.join(root, "target", "release", "libexpanse.so")]:
    if os.path.exists(p):
        os.environ.setdefault("EXPANSE_LIB", p)
        break
import torch  # noqa: E402

notes = []
if args.mode == "expanse":
    import expanse_compat
    import expanse_torch

    print("expanse mode:", expanse_torch.install(), flush=True)
    notes = expanse_compat.notes()
    print("expanse notes:", notes, flush=True)

from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda:0")
cfg = GPT2Config(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, n_positions=1024)
cfg.resid_pdrop = cfg.embd_pdrop = cfg.attn_pdrop = 0.0  # deterministic across allocators
model = GPT2LMHeadModel(cfg).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
g = torch.Generator().manual_seed(1234)
data = [torch.randint(0, cfg.vocab_size, (args.batch, args.seq), generator=g) for _ in range(args.steps)]


def loss_fn(ids):
    return model(input_ids=ids, labels=ids).loss


step = torch.compile(loss_fn, mode="reduce-overhead")
losses = []
t0 = time.time()
for i, ids in enumerate(data):
    ids = ids.to(dev)
    loss = step(ids)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    losses.append(float(loss.detach()))
    if i % 10 == 0:
        print(f"step {i}: loss {losses[-1]:.6f}", flush=True)
torch.cuda.synchronize()
res = {
    "mode": args.mode,
    "losses": losses,
    "seconds": round(time.time() - t0, 2),
    "peak_reserved": torch.cuda.max_memory_reserved(),
    "peak_allocated": torch.cuda.max_memory_allocated(),
    "notes": notes,
}
json.dump(res, open(args.out, "w"))
print(json.dumps({k: v for k, v in res.items() if k != "losses"}))
