"""Two-process NCCL all-reduce on buffers allocated by expanse."""

import os
import sys

import torch.multiprocessing as mp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def worker(rank, world):
    import torch
    import torch.distributed as dist

    import expanse_torch

    expanse_torch.install()
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29517", rank=rank, world_size=world)
    n = 64 << 20  # 256 MiB of float32
    x = torch.full((n,), float(rank + 1), device=f"cuda:{rank}")
    y = torch.arange(1 << 20, device=f"cuda:{rank}", dtype=torch.float32) * (rank + 1)
    dist.all_reduce(x)
    dist.all_reduce(y)
    torch.cuda.synchronize()
    want = sum(r + 1 for r in range(world))
    ok = bool((x == want).all()) and bool((y == torch.arange(1 << 20, device=y.device, dtype=torch.float32) * want).all())
    stats = expanse_torch.memory_stats(rank)
    print(f"rank {rank}: all_reduce sum {'ok' if ok else 'WRONG'} ({float(x[0])} == {want}); expanse reserved {stats['reserved_bytes.all.current']} bytes", flush=True)
    dist.destroy_process_group()
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2, join=True)
    print("NCCL TEST PASSED")
