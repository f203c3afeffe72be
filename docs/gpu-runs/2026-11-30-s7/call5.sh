#!/usr/bin/env bash
# Session 7, call 5: the ninth blind batch (scripts/traces/record_new9.sh), recorded and replayed
# through PyTorch's three allocators, then expanse's two PyTorch modes and default on --backend cuda.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p $OUT
REC_LIMIT=240 REC_STEP=255 REPLAY_STEP=120 bash scripts/traces/record_new9.sh > /dev/null 2>&1
grep -v '^{' $OUT/new9.log | tail -40 | cut -c1-250
mkdir -p /tmp/n9 && tar -C /tmp/n9 -xzf $OUT/new9.tar.gz
START=$(date +%s)
for t in /tmp/n9/corpus/*.trace.csv.gz; do
  for conf in expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True; do
    [ $(( $(date +%s) - START )) -lt 100 ] && timeout 40 .device-bin/expanse replay $t --backend cuda --conf "$conf" --json
  done
done > $OUT/modes9.jsonl 2>&1; echo "cuda replays: $(wc -l < $OUT/modes9.jsonl) lines"
ls -la $OUT
