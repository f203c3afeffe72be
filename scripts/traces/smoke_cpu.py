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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redirect_cuda  # noqa: E402

redirect_cuda.install("cpu", autocast=True)


def main():
    for name in sys.argv[1:]:
        fn, rng = redirect_cuda.workload(name)
        t0 = time.time()
        mode = redirect_cuda.CountOutputs()
        with mode:
            fn(rng)
        print(f"SMOKE OK {name}: {mode.count} op outputs, {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
