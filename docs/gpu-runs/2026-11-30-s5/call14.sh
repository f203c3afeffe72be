#!/usr/bin/env bash
# Session 5, last call: record the sixth batch (eight held-out workloads) with PyTorch's
# figures; replay them on CUDA in expanse's PyTorch modes; GPU tests; the fast path
# (lazy merge) against ed74abe, 3 alternating rounds.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p $OUT; ROOT=$PWD
bash scripts/traces/record_new6.sh > /dev/null 2>&1; echo "record rc $?"; tail -30 $OUT/new6.log
mkdir -p /tmp/n6 && tar -C /tmp/n6 -xzf $OUT/new6.tar.gz
for t in /tmp/n6/corpus/*.trace.csv.gz; do
  for conf in expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True; do
    timeout 60 .device-bin/expanse replay "$t" --backend cuda --conf "$conf" --json
  done
done > $OUT/modes6.jsonl 2>&1; echo "replays: $(wc -l < $OUT/modes6.jsonl) lines"
EXPANSE_CUDA_TESTS=1 timeout 100 .device-bin/gpu-tests --include-ignored --test-threads=1 > $OUT/tests.txt 2>&1; echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" $OUT/tests.txt
cd $OUT && timeout 280 python3 $ROOT/scripts/gpu/bench_alloc.py --rounds 3 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.err | tail -16; grep -v -i warn bench.txt | head -30
