#!/usr/bin/env bash
# Session 14, call 3: the seventeenth blind batch (scripts/traces/record_new17.sh), four at a time,
# replayed through PyTorch's three allocators and in expanse's three modes on --backend cuda (the live
# runs of batch 16 and the speed comparison first planned here were dropped for the session's time).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
START=$(date +%s)
EXPANSE_BIN=.device-bin/expanse MODES_DEADLINE=360 REC_JOBS=4 REC_LIMIT=230 REC_STEP=260 REPLAY_STEP=110 \
  bash scripts/traces/record_new17.sh > /dev/null 2>&1
grep -v '^{' $OUT/new17.log | grep -E "events|Error|MISSING|replayed|recorded|packed" | cut -c1-250
grep '^{' $OUT/new17.log | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d['trace'], d['mode'], d['peak_reserved_bytes'], 'retries', d['num_alloc_retries'])"
echo "== [$(($(date +%s) - START)) s] done"
ls -la $OUT
