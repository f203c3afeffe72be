#!/usr/bin/env bash
# Session 7, call 2: effnet_varres at 120 steps (record, PyTorch's replays, expanse's modes on CUDA),
# alongside the GPU tests, the five-stream replay and 30 GPT-2 steps through PyTorch with HEAD's library.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT; ROOT=$PWD
( REC_LIMIT=390 REC_STEP=400 REPLAY_STEP=90 bash scripts/traces/record_new8c.sh > /dev/null 2>&1 ) &
EXPANSE_CUDA_TESTS=1 timeout 100 .device-bin/gpu-tests --include-ignored --test-threads=1 > $OUT/tests.txt 2>&1; echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" $OUT/tests.txt
timeout 60 .device-bin/expanse replay traces/five_streams.trace.csv --backend cuda --json > $OUT/five.json 2>&1; echo "five rc $?"; cut -c1-300 $OUT/five.json
timeout 150 python3 scripts/gpu/train_gpt2.py --mode expanse --steps 30 --out $OUT/gpt2.json > $OUT/gpt2.txt 2>&1; echo "gpt2 rc $?"; tail -3 $OUT/gpt2.txt
wait
tail -12 $OUT/new8c.log | cut -c1-300
mkdir -p /tmp/n8c && tar -C /tmp/n8c -xzf $OUT/new8c.tar.gz
for t in /tmp/n8c/corpus/*.trace.csv.gz; do
  for conf in expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True; do
    timeout 40 .device-bin/expanse replay $t --backend cuda --conf "$conf" --json
  done
done > $OUT/modes8c.jsonl 2>&1; cut -c1-200 $OUT/modes8c.jsonl
ls -la $OUT
