#!/usr/bin/env bash
# Session 15, call 3: the new default (small_from_large on) on the H200.
#   1. the GPU tests (their random-operations test runs the default);
#   2. workloads of the eighteenth blind batch (and two of the sixteenth and seventeenth) run live on
#      expanse's default through the C ABI, three at a time, as in call 1: their peaks reserved against
#      the replays of their traces.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
START=$(date +%s)
EXPANSE_CUDA_TESTS=1 timeout 200 .device-bin/gpu-tests --include-ignored --test-threads 1 > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" "$OUT/gpu-tests.txt"
echo "== [$(($(date +%s) - START)) s] tests"
python3 -c 'import sys; sys.path.insert(0, "python"); import expanse_torch; expanse_torch.install(); import torch; torch.zeros(1, device="cuda"); print("extension ready")' 2>&1 | tail -1
printf '%s\n' prefix_cache_chat colbert_rerank pointpillars_train alphazero_selfplay layer_offload_gen painn_md basicvsr_train asha_sweep_cifar pinn_train rwkv_serve |
  timeout 420 xargs -P 3 -I{} sh -c 'timeout 200 python3 scripts/gpu/run_workload.py {} --mode expanse 2> $OUT/{}.err | tail -1 >> $OUT/live.jsonl'
cat $OUT/live.jsonl
for f in $OUT/*.err; do grep -q . "$f" && { echo "== $f"; grep -v "^\s*$" "$f" | tail -3; }; done
echo "== [$(($(date +%s) - START)) s] done"
