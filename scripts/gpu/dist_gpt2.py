"""DDP and FSDP2 of GPT-2 small on two GPUs, on one allocator (issue 11).

    torchrun --nproc_per_node 2 scripts/gpu/dist_gpt2.py --alloc expanse --out $OUT/dist-expanse.json
    python3 scripts/gpu/dist_gpt2.py --compare $OUT/dist-native.json $OUT/dist-expanse.json

Each rank: torch.cuda.set_device(rank), then (expanse) install() and, as
the first call into expanse, expanse_torch.reset_peak_stats(rank) - the
order that once made NCCL see both ranks on one GPU ("Duplicate GPU
detected"). The script checks that the current device is still the rank's
after it, then trains GPT-2 small (dropout off, TF32 off, fixed data per
rank) for a few steps with DDP, then again from the same seed with FSDP2
(fully_shard per block and at the root). Each kind runs in its own try, so
one failure hides nothing. Rank 0 writes the losses (mean over ranks), the
peak memory and any error to --out. --compare prints the largest relative
loss difference of each kind (done when <= 1e-3) and exits 1 if over.
"""

import argparse
import datetime
import faulthandler
import json
import os
import sys
import time
import traceback

faulthandler.enable()
ap = argparse.ArgumentParser()
ap.add_argument("--alloc", choices=["native", "expandable", "expanse"])
ap.add_argument("--steps", type=int, default=6)
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--seq", type=int, default=256)
ap.add_argument("--out")
ap.add_argument("--compare", nargs=2)
args = ap.parse_args()


def compare(a_path, b_path):
    try:
        a, b = (json.load(open(p)) for p in (a_path, b_path))
    except (OSError, ValueError) as e:
        print(f"no comparison: {e}")
        return False
    ok = True
    for kind in ("ddp", "fsdp2"):
        ra, rb = a.get(kind, {}), b.get(kind, {})
        la, lb = ra.get("losses", []), rb.get("losses", [])
        if not la or not lb or len(la) != len(lb):
            print(f"{kind}: no comparison ({a['alloc']}: {ra.get('error') or len(la)}; {b['alloc']}: {rb.get('error') or len(lb)})")
            ok = False
            continue
        rel = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(la, lb))
        good = rel <= 1e-3
        ok &= good
        print(f"{kind}: {len(la)} steps, max relative loss difference {rel:.3e} ({'OK' if good else 'FAIL'}); "
              f"peak reserved rank 0 {ra.get('peak_reserved')} vs {rb.get('peak_reserved')}")
    return ok


if args.compare:
    sys.exit(0 if compare(*args.compare) else 1)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
if args.alloc == "expandable":
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
else:
    os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
for p in [os.path.join(ROOT, ".device-bin", "libexpanse.so"), os.path.join(ROOT, "target", "release", "libexpanse.so")]:
    if os.path.exists(p):
        os.environ.setdefault("EXPANSE_LIB", p)
        break
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
result = {"alloc": args.alloc, "world": world}
if args.alloc == "expanse":
    import expanse_compat
    import expanse_torch

    # Before CUDA starts (set_device starts it): PyTorch swaps its
    # allocator only then.
    result["mode"] = expanse_torch.install()
    result["notes"] = expanse_compat.notes()
torch.cuda.set_device(rank)
if args.alloc == "expanse":
    expanse_torch.reset_peak_stats(rank)  # the first call into expanse's library
result["device_after_start"] = torch.cuda.current_device()
if result["device_after_start"] != rank:
    print(f"rank {rank}: current device {result['device_after_start']} after expanse's start-up", flush=True)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=90), device_id=torch.device("cuda", rank))

from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
cfg = GPT2Config(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, n_positions=1024)
cfg.resid_pdrop = cfg.embd_pdrop = cfg.attn_pdrop = 0.0
g = torch.Generator().manual_seed(1000 + rank)
data = [torch.randint(0, cfg.vocab_size, (args.batch, args.seq), generator=g) for _ in range(args.steps)]


def train(kind):
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).cuda()
    if kind == "ddp":
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    else:
        from torch.distributed.fsdp import fully_shard

        for block in model.transformer.h:
            fully_shard(block)
        fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    losses = []
    for ids in data:
        ids = ids.cuda()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        t = loss.detach().clone()
        dist.all_reduce(t)
        losses.append(float(t) / world)
    torch.cuda.synchronize()
    del model, opt
    return losses


for kind in ("ddp", "fsdp2"):
    t0 = time.time()
    r = {}
    try:
        torch.cuda.reset_peak_memory_stats()
        r["losses"] = train(kind)
        r["peak_reserved"] = torch.cuda.max_memory_reserved()
        r["peak_allocated"] = torch.cuda.max_memory_allocated()
    except Exception as e:
        r["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"
        traceback.print_exc()
    r["seconds"] = round(time.time() - t0, 1)
    result[kind] = r
    print(f"rank {rank} {kind}: {json.dumps(r)}", flush=True)
    try:
        dist.barrier()
    except Exception as e:  # a broken group: the next kind fails too, and says so
        print(f"rank {rank}: barrier after {kind}: {e}", flush=True)

if rank == 0 and args.out:
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
dist.destroy_process_group()
