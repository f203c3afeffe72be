#!/usr/bin/env bash
# Session 15, call 8: do empty CUDA tensors still reach expanse as allocations after the 0-byte fix?
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
python3 - <<'PY' 2>&1 | tail -8
import ctypes, sys
sys.path.insert(0, "python")
import torch, expanse_torch
expanse_torch.install()
l = ctypes.CDLL("./.device-bin/libexpanse.so")
l.expanse_alloc.restype = ctypes.c_void_p
l.expanse_alloc.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
print("expanse_alloc(0) ->", l.expanse_alloc(0, 0, None))
torch.zeros(1, device="cuda")
s0 = torch.cuda.memory_stats()
keep = [torch.empty(0, device="cuda") for _ in range(100)]
keep += [torch.zeros(8, device="cuda")[8:].clone() for _ in range(100)]
s1 = torch.cuda.memory_stats()
for k in ("allocation.all.current", "allocated_bytes.all.current"):
    print(k, s0[k], "->", s1[k])
PY
