#!/usr/bin/env bash
# Session 15, call 6: with 0-byte allocations returning null at the C ABI (as PyTorch's own allocator does),
# the two workloads whose live runs differed from their replays under the new default (calls 3-5), and one
# more, run live on the default.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
python3 -c 'import sys; sys.path.insert(0, "python"); import expanse_torch; expanse_torch.install(); import torch; torch.zeros(1, device="cuda"); print("extension ready")' 2>&1 | tail -1
run() { timeout 200 python3 scripts/gpu/run_workload.py "$@" 2>/dev/null | tail -1 >> $OUT/live.jsonl; }
run asha_sweep_cifar --mode expanse & run pointpillars_train --mode expanse & run gsplat_train --mode expanse &
run afno_weather --mode expanse &
wait
cat $OUT/live.jsonl
