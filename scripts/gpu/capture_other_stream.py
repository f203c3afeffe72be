"""A stream outside a CUDA graph capture allocates while it is under way,
through PyTorch on expanse (default config: shared segments, lending).

Before the capture the capture stream uses and frees 256 MiB, which stays
cached in the shared segment, last used on that stream. During the capture
(`capture_error_mode="relaxed"`, so that another stream may work), a
third stream, not captured, allocates 256 MiB and fills it.
Reusing the cached block would need an event recorded on the capturing
stream (a graph node that never runs) for the default stream to wait on,
which would drag it into the capture. expanse must hand it other memory:
the capture ends cleanly, the graph replays, and the third stream's
tensor holds what it was filled with. Prints one line per check and
CAPTURE TEST PASSED or FAILED.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import torch  # noqa: E402

import expanse_torch  # noqa: E402

expanse_torch.install()
N = 64 << 20  # 256 MiB of float32
capture_stream = torch.cuda.Stream()
other = torch.cuda.Stream()
torch.cuda.synchronize()
with torch.cuda.stream(capture_stream):
    warm = torch.ones(N, device="cuda")
    warm_ptr = warm.data_ptr()
    warm.mul_(2)
    del warm
capture_stream.synchronize()
static_in = torch.ones(1 << 20, device="cuda")
g = torch.cuda.CUDAGraph()
errors = []
outside_ptr = None
try:
    with torch.cuda.graph(g, stream=capture_stream, capture_error_mode="relaxed"):
        static_out = static_in * 3
        # On another stream, outside the capture (this thread's current
        # stream is the capture stream inside the block).
        with torch.cuda.stream(other):
            outside = torch.empty(N, device="cuda")
            outside_ptr = outside.data_ptr()
            outside.fill_(5.0)
except Exception as e:  # noqa: BLE001 - any failure is the finding
    errors.append(f"capture failed: {e}")
torch.cuda.synchronize()
ok = not errors
if ok:
    g.replay()
    torch.cuda.synchronize()
    graph_ok = bool((static_out == 3).all())
    outside_ok = bool((outside == 5).all())
    print(f"graph replay result: {'ok' if graph_ok else 'WRONG'}")
    print(f"other stream's tensor filled during the capture: {'ok' if outside_ok else 'WRONG'}")
    print(f"handed the capture stream's cached block: {outside_ptr == warm_ptr}")
    ok = graph_ok and outside_ok and outside_ptr != warm_ptr
for e in errors:
    print(e)
print("CAPTURE TEST PASSED" if ok else "CAPTURE TEST FAILED")
sys.exit(0 if ok else 1)
