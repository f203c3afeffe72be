#!/usr/bin/env bash
# Session 15, call 7: what is allocated before a workload starts (before a recording's history is enabled),
# under expanse and under PyTorch's allocator, in run_workload.py's order (install, seed, cuda.init), and
# what the first steps of pointpillars_train's code allocate outside its trace.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
for mode in expanse native; do
python3 - $mode <<'PY' 2>&1 | tail -3
import sys
sys.path.insert(0, "python")
import torch
if sys.argv[1] == "expanse":
    import expanse_torch
    expanse_torch.install()
torch.manual_seed(0)
torch.cuda.init()
s = torch.cuda.memory_stats()
print(sys.argv[1], "after init:", {k: s.get(k) for k in ("allocated_bytes.all.current", "allocation.all.current", "reserved_bytes.all.current")})
x = torch.randn(4, 4, device="cuda") @ torch.randn(4, 4, device="cuda")
torch.cuda.synchronize()
del x
s = torch.cuda.memory_stats()
print(sys.argv[1], "after a matmul:", {k: s.get(k) for k in ("allocated_bytes.all.current", "allocation.all.current")})
PY
done
