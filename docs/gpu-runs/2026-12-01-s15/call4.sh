#!/usr/bin/env bash
# Session 15, call 4: are call 3's two single-stream differences (asha_sweep_cifar +2 MiB, pointpillars_train
# +52 MiB against their replays) the workloads' own run-to-run variation or the new rule through the C ABI?
# asha_sweep_cifar twice on the default and once with small_from_large:False, pointpillars_train once more on
# the default and once with small_from_large:False, all at once.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
python3 -c 'import sys; sys.path.insert(0, "python"); import expanse_torch; expanse_torch.install(); import torch; torch.zeros(1, device="cuda"); print("extension ready")' 2>&1 | tail -1
run() { timeout 200 python3 scripts/gpu/run_workload.py "$@" 2>/dev/null | tail -1 >> $OUT/live.jsonl; }
run asha_sweep_cifar --mode expanse & run asha_sweep_cifar --mode expanse &
run asha_sweep_cifar --mode expanse --conf expandable_segments:True,small_from_large:False &
run pointpillars_train --mode expanse &
run pointpillars_train --mode expanse --conf expandable_segments:True,small_from_large:False &
wait
cat $OUT/live.jsonl
