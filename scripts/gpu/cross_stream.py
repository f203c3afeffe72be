"""Cross-stream lending on a real GPU, through PyTorch.

A tensor allocated on a side stream is freed while kernels that read it are
still queued there; the default stream then allocates the same size. expanse
lends the freed block (same address) and makes the default stream wait for
the side stream: the side stream's result must be exact. Without the wait,
the default stream's fill would overwrite the tensor while it is read.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import torch  # noqa: E402

import expanse_torch  # noqa: E402

expanse_torch.install()
N = 64 << 20  # 256 MiB of float32 ones: every partial sum is exact
REPS = 200
side = torch.cuda.Stream()
torch.cuda.synchronize()
with torch.cuda.stream(side):
    x = torch.ones(N, device="cuda")
    x_ptr = x.data_ptr()
    acc = torch.zeros((), device="cuda")
    for _ in range(REPS):
        acc += x.sum()
    del x  # freed on the host while the sums are still queued on `side`
y = torch.empty(N, device="cuda")  # default stream
lent = y.data_ptr() == x_ptr
y.fill_(2.0)
torch.cuda.synchronize()
want = float(REPS * N)
got = float(acc)
stats = expanse_torch.memory_stats(0)
print(f"lent the side stream's block to the default stream: {lent}")
print(f"cross-stream waits: {stats['num_cross_stream_waits']}")
print(f"side-stream result {got:.0f}, expected {want:.0f}: {'ok' if got == want else 'CORRUPTED'}")
ok = lent and got == want and stats["num_cross_stream_waits"] >= 1
print("CROSS-STREAM TEST PASSED" if ok else "CROSS-STREAM TEST FAILED")
sys.exit(0 if ok else 1)
