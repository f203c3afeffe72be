"""Tensor.record_stream on expanse, through PyTorch's C++ hook (issue 11).

    python3 scripts/gpu/record_stream_test.py --hook on    # expect: PASS
    python3 scripts/gpu/record_stream_test.py --hook off   # expect: FAIL (the control)

A tensor is read on a side stream after a long sleep, freed with
record_stream before the read runs, and a new tensor of the same size is
filled on the main stream. With the hook (expanse_torch.install(), the C++
extension), expanse holds the block until the side stream's work is done
and the read sees the original values. With the hook off (the plain
CUDAPluggableAllocator, alloc and free only, as before issue 11) the block
is reused at once and the read sees the new values. Exit status 0 on PASS.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

ap = argparse.ArgumentParser()
ap.add_argument("--hook", choices=["on", "off"], required=True)
args = ap.parse_args()
for p in [os.path.join(ROOT, ".device-bin", "libexpanse.so"), os.path.join(ROOT, "target", "release", "libexpanse.so")]:
    if os.path.exists(p):
        os.environ.setdefault("EXPANSE_LIB", p)
        break

import torch  # noqa: E402

import expanse_torch  # noqa: E402
from compat_table import record_stream_check  # noqa: E402

if args.hook == "on":
    mode = expanse_torch.install()
    print(f"expanse installed, mode {mode}")
    if mode != "extension":
        import expanse_compat

        print(f"C++ extension unavailable ({expanse_compat.extension_error()}): Python's record_stream routing only")
else:
    expanse_torch.lib()
    alloc = torch.cuda.memory.CUDAPluggableAllocator(expanse_torch._path, "expanse_alloc", "expanse_free")
    torch.cuda.memory.change_current_allocator(alloc)
    print("expanse installed with alloc/free only (no record_stream hook)")

reused, bad = record_stream_check(torch)
print(f"new tensor got the freed block: {reused}; side-stream values overwritten: {bad}")
print("PASS" if bad == 0 and not reused else "FAIL")
sys.exit(0 if bad == 0 and not reused else 1)
