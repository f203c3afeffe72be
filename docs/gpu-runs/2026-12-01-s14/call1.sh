#!/usr/bin/env bash
# Session 14, call 1: the sixteenth blind batch (scripts/traces/record_new16.sh), four at a time,
# replayed through PyTorch's three allocators, then in expanse's three modes on --backend cuda
# (record_batch.sh's step 4, EXPANSE_BIN).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p $OUT
EXPANSE_BIN=.device-bin/expanse MODES_DEADLINE=420 REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 \
  bash scripts/traces/record_new16.sh > /dev/null 2>&1
grep -v '^{' $OUT/new16.log | grep -E "events|Error|MISSING|replayed|recorded|packed" | cut -c1-250
grep '^{' $OUT/new16.log | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d['trace'], d['mode'], d['peak_reserved_bytes'], 'retries', d['num_alloc_retries'])"
ls -la $OUT
