"""CPU smoke test of workloads in record.py (no GPU needed).

    RECORD_SMOKE=1 python3 scripts/traces/smoke_cpu.py NAME...

Maps every "cuda" device the workloads name (factory functions' device=,
.cuda(), .to("cuda"), torch.autocast("cuda"), pinned memory, streams and
events) to the CPU, runs each workload once and prints how many tensors its
ops created (a TorchDispatchMode count of op outputs that alias no input,
backward included): each is one allocation and one free on the GPU, so
twice the count is about the trace's events at the smoke run's sizes.
RECORD_SMOKE=1 makes the workloads that read it (record.py's `_smoke`) run a
few steps at small sizes; the GPU recording never sets it.
"""

import os
import sys
import time

os.environ.setdefault("RECORD_SMOKE", "1")

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redirect_cuda  # noqa: E402

redirect_cuda.install("cpu", autocast=True)


class CountAllocs(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if redirect_cuda.is_new_buffer(func):
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(t, torch.Tensor):
                    self.count += 1
        return out


def main():
    import random

    import record

    for name in sys.argv[1:]:
        _, fn = record.WORKLOADS[name]
        torch.manual_seed(0)
        rng = random.Random(f"expanse-{name}")
        t0 = time.time()
        mode = CountAllocs()
        with mode:
            fn(rng)
        print(f"SMOKE OK {name}: {mode.count} op outputs, {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
