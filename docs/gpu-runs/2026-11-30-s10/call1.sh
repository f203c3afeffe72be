#!/usr/bin/env bash
# Session 10, call 1: the twelfth blind batch (scripts/traces/record_new12.sh), four at a time, replayed
# through PyTorch's three allocators; then expanse's two PyTorch modes and default on --backend cuda.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
T0=$(date +%s)
mkdir -p $OUT
REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new12.sh > /dev/null 2>&1
grep -v '^{' $OUT/new12.log | tail -40 | cut -c1-250
mkdir -p /tmp/n12 && cat $OUT/new12.tar.gz.part* | tar -C /tmp/n12 -xzf -
for t in /tmp/n12/corpus/*.trace.csv.gz; do
  for conf in expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True; do
    [ $(( $(date +%s) - T0 )) -lt 540 ] && timeout 30 .device-bin/expanse replay $t --backend cuda --conf "$conf" --json
  done
done > $OUT/modes12.jsonl 2>&1; echo "cuda replays: $(wc -l < $OUT/modes12.jsonl) lines at $(( $(date +%s) - T0 )) s"
ls -la $OUT
