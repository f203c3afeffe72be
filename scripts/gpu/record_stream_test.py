"""Tensor.record_stream on expanse, through PyTorch's C++ hook (issue 11).

    python3 scripts/gpu/record_stream_test.py --hook on    # expect: PASS
    python3 scripts/gpu/record_stream_test.py --hook off   # expect: FAIL (the control)

The check is compat_table.record_stream_check: a tensor read on a side
stream after a long sleep is freed with record_stream before the read
runs, and a tensor of the same size is filled on the main stream at once.
With the hook (expanse_torch.install(), the C++ extension) the read sees
the original values. The control, --hook off, installs the same extension
with EXPANSE_RECORD_STREAM=0, which leaves only PyTorch's record_stream
hook unset (or, without a compiler, the plain alloc/free pluggable
allocator): the block is reused at once and the read sees the new values.
If the side stream had already finished when the overwrite was queued, the
run proves nothing and says INCONCLUSIVE.

Prints one JSON line; exit status 0 when the result is the expected one
(PASS for on, FAIL for off), 1 when not, 2 when inconclusive.
"""

import argparse
import json
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
if args.hook == "off":
    os.environ["EXPANSE_RECORD_STREAM"] = "0"

import torch  # noqa: E402

import expanse_compat  # noqa: E402
import expanse_torch  # noqa: E402
from compat_table import record_stream_check  # noqa: E402

mode = expanse_torch.install()
how = f"expanse mode {mode}, record_stream hook {'on' if args.hook == 'on' else 'off (EXPANSE_RECORD_STREAM=0)'}"
if mode != "extension":
    how += f"; C++ extension unavailable ({expanse_compat.extension_error()})"
    if args.hook == "off":
        # ctypes mode routes Tensor.record_stream in Python: undo that.
        torch.Tensor.record_stream = lambda self, stream: None
reused, bad, side_busy = record_stream_check(torch)
verdict = "INCONCLUSIVE" if not side_busy else ("PASS" if bad == 0 else "FAIL")
print(json.dumps({"hook": args.hook, "how": how, "reused_block": reused, "overwritten_values": bad,
                  "side_stream_busy": side_busy, "verdict": verdict}))
expected = "PASS" if args.hook == "on" else "FAIL"
sys.exit(2 if verdict == "INCONCLUSIVE" else (0 if verdict == expected else 1))
