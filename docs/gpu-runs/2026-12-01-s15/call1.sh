#!/usr/bin/env bash
# Session 15, call 1: eight single-stream held-out workloads of the sixteenth and seventeenth blind
# batches run live on expanse's default through the C ABI (scripts/gpu/run_workload.py, no recording),
# three at a time (at most ~50 GB reserved together, so the device's free memory stays above 40 GiB
# and the page bound, free / 1024, stays at the 40 MiB largest page as in the replays). Each workload
# runs with the random draws it was recorded with, so its live peak reserved should equal the replay
# of its trace under the default (`expanse replay T --json`, computed on the development machine).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
START=$(date +%s)
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
# the C++ extension is built once here, not by three processes at once
python3 -c 'import sys; sys.path.insert(0, "python"); import expanse_torch; expanse_torch.install(); import torch; torch.zeros(1, device="cuda"); print("extension ready")' 2>&1 | tail -2
echo "== [$(($(date +%s) - START)) s] extension"
# longest first (seconds from the recordings, four at a time then)
printf '%s\n' ft_transformer_tab chronos_forecast gsplat_train gradcache_embed mod_train afno_weather pinn_train rwkv_serve |
  timeout 540 xargs -P 3 -I{} sh -c 'timeout 200 python3 scripts/gpu/run_workload.py {} --mode expanse 2> $OUT/{}.err | tail -1 >> $OUT/live.jsonl'
cat $OUT/live.jsonl
for f in $OUT/*.err; do echo "== $f"; grep -v "^\s*$" "$f" | tail -3; done
echo "== [$(($(date +%s) - START)) s] done"
