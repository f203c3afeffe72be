#!/usr/bin/env bash
# Session 15, call 5: asha_sweep_cifar and pointpillars_train live on the default with the allocation stream
# recorded (live_trace.py), to find where it parts from the trace recorded under PyTorch's allocator.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
python3 -c 'import sys; sys.path.insert(0, "python"); import expanse_torch; expanse_torch.install(); import torch; torch.zeros(1, device="cuda"); print("extension ready")' 2>&1 | tail -1
for n in asha_sweep_cifar pointpillars_train; do
  timeout 250 python3 docs/gpu-runs/2026-12-01-s15/live_trace.py $n $OUT/$n.live.trace.csv.gz > $OUT/$n.out 2> $OUT/$n.err &
done
wait
cat $OUT/*.out; tail -3 $OUT/*.err; ls -la $OUT
