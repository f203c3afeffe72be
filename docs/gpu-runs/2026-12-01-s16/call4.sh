#!/usr/bin/env bash
# Session 16, call 4: the nineteenth blind batch's last two workloads, alone, after cutting their length
# (zoo_eval_sweep 80 -> 24 requests a model, emb_offload_rec 2500 -> 800 steps; neither had finished under the
# recorder in 340 s, and none of their allocation figures existed when they were cut).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
START=$(date +%s)
EXPANSE_BIN=.device-bin/expanse MODES_DEADLINE=545 REC_JOBS=2 REC_LIMIT=420 REC_STEP=430 REPLAY_STEP=90 \
  bash scripts/traces/record_batch.sh new19c emb_offload_rec zoo_eval_sweep > /dev/null 2>&1
grep -v '^{' $OUT/new19c.log | grep -E "events|Error|MISSING|replayed|recorded|packed" | cut -c1-250
grep '^{' $OUT/new19c.log | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d['trace'], d['mode'], d['peak_reserved_bytes'], 'retries', d['num_alloc_retries'])"
cut -c1-220 $OUT/new19c-modes.jsonl
echo "== [$(($(date +%s) - START)) s] done"
ls -la $OUT
