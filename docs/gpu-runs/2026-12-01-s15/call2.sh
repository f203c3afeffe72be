#!/usr/bin/env bash
# Session 15, call 2: the eighteenth blind batch (scripts/traces/record_new18.sh), four at a time, replayed
# through PyTorch's three allocators and in expanse's three modes on --backend cuda; then, while the call has
# time, the registered candidate (small_from_large:True) on --backend cuda over the same traces.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
START=$(date +%s)
EXPANSE_BIN=.device-bin/expanse MODES_DEADLINE=400 REC_JOBS=4 REC_LIMIT=230 REC_STEP=260 REPLAY_STEP=110 \
  bash scripts/traces/record_new18.sh > /dev/null 2>&1
grep -v '^{' $OUT/new18.log | grep -E "events|Error|MISSING|replayed|recorded|packed" | cut -c1-250
grep '^{' $OUT/new18.log | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d['trace'], d['mode'], d['peak_reserved_bytes'], 'retries', d['num_alloc_retries'])"
echo "== [$(($(date +%s) - START)) s] recorded"
# The candidate on CUDA: the corpus was packed, so unpack the traces again into a scratch folder.
W=$(mktemp -d)
cat $OUT/new18.tar.gz.part* | tar -C $W -xzf - 2>/dev/null
for t in $W/corpus/*.trace.csv.gz; do
  [ $(($(date +%s) - START)) -lt 540 ] || break
  timeout 40 .device-bin/expanse replay "$t" --backend cuda --conf small_from_large:True --json
done > $OUT/new18-candidate.jsonl 2>&1
python3 -c "
import sys, json
for l in open('$OUT/new18-candidate.jsonl'):
    if l.startswith('{'):
        d = json.loads(l); print('candidate', d['trace'], d['peak_reserved_bytes'])"
echo "== [$(($(date +%s) - START)) s] done"
ls -la $OUT
