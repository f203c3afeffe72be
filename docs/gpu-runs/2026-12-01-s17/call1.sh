#!/usr/bin/env bash
# Session 17, call 1: the twentieth blind batch (scripts/traces/record_new20.sh), four at a time, replayed
# through PyTorch's three allocators and in expanse's three modes on --backend cuda; then, while the call has
# time, the workloads live on expanse's default (the registration has no candidate: the default judges).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
START=$(date +%s)
EXPANSE_BIN=.device-bin/expanse MODES_DEADLINE=420 REC_JOBS=4 REC_LIMIT=220 REC_STEP=250 REPLAY_STEP=110 \
  bash scripts/traces/record_new20.sh > /dev/null 2>&1
grep -v '^{' $OUT/new20.log | grep -E "events|Error|MISSING|replayed|recorded|packed" | cut -c1-250
grep '^{' $OUT/new20.log | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d['trace'], d['mode'], d['peak_reserved_bytes'], 'retries', d['num_alloc_retries'])"
echo "== [$(($(date +%s) - START)) s] recorded"
# Then, while the call has time, each workload live on expanse's default through the C ABI, four at a time,
# against its trace's replay (the default's --backend cuda line in new20-modes.jsonl).
python3 -c 'import sys; sys.path.insert(0, "python"); import expanse_torch; expanse_torch.install(); import torch; torch.zeros(1, device="cuda"); print("extension ready")' 2>&1 | tail -1
left=$((570 - ($(date +%s) - START)))
[ $left -gt 30 ] || left=1
printf '%s\n' awq_quantize ig_explain hyena_lm maml_fewshot gdas_search pgd_adv_train fedavg_sim ffjord_cnf |
  timeout $left xargs -P 4 -I{} sh -c 'timeout '$left' python3 scripts/gpu/run_workload.py {} --mode expanse 2>/dev/null | tail -1' > $OUT/new20-live.jsonl
cat $OUT/new20-live.jsonl
echo "== [$(($(date +%s) - START)) s] done"
ls -la $OUT
