"""Record rank 0's device-allocation trace of a two-GPU training run.

Runs on a machine with two GPUs, under torchrun:

    torchrun --nproc_per_node 2 record_dist.py WORKLOAD OUTDIR
    python3 record_dist.py --list

WORKLOAD is `fsdp2_gpt2` (FSDP2 `fully_shard` of a GPT-2 medium, its
all-gathers and reduce-scatters on their own streams) or `ddp_llama` (DDP
of a Llama-style 0.2B with gradient buckets). Models are built from configs
with random weights: nothing is downloaded. Rank 0 writes
OUTDIR/WORKLOAD.trace.csv.gz and OUTDIR/WORKLOAD.live.json in the same
format as `record.py` (whose reduction it uses); every other rank only
trains.
"""

import os
import random
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import _train_lm, llama_config, write_trace  # noqa: E402

WORKLOADS = {
    "fsdp2_gpt2": "FSDP2 training, rank 0 of 2: GPT-2 medium, fully_shard per block, AdamW, bf16 autocast, batch 2-8 x seq 128-1024",
    "ddp_llama": "DDP training, rank 0 of 2: Llama-style 0.2B, AdamW, bf16 autocast, batch 2-12 x seq 128-1536",
}


def _steps(model, vocab, rng, steps, batch, seq):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    _train_lm(model, vocab, rng, steps, batch, seq, opt)


def fsdp2_gpt2(rng):
    from torch.distributed.fsdp import fully_shard
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=24, n_embd=1024, n_head=16, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda()
    for block in model.transformer.h:
        fully_shard(block)
    fully_shard(model)
    _steps(model, cfg.vocab_size, rng, 40, (2, 8), (128, 1024))


def ddp_llama(rng):
    from torch.nn.parallel import DistributedDataParallel
    from transformers import LlamaForCausalLM

    cfg = llama_config(12, 4, 2048)
    model = DistributedDataParallel(LlamaForCausalLM(cfg).cuda(), device_ids=[torch.cuda.current_device()])
    _steps(model, cfg.vocab_size, rng, 40, (2, 12), (128, 1536))


def main():
    if sys.argv[1:] == ["--list"]:
        for name, family in WORKLOADS.items():
            print(f"{name}\t{family}")
        return
    name, outdir = sys.argv[1], sys.argv[2]
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    # Every rank draws the same shapes: collectives must match.
    rng = random.Random(f"expanse-{name}")
    torch.manual_seed(rank)
    if rank == 0:
        torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=50_000_000)
    t0 = time.time()
    globals()[name](rng)
    torch.cuda.synchronize()
    seconds = time.time() - t0
    if rank == 0:
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        title = f"{name}: {WORKLOADS[name]}"
        write_trace(name, title, WORKLOADS[name], "scripts/traces/record_dist.py", snap, seconds, outdir)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
