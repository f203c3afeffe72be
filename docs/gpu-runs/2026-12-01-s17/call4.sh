#!/usr/bin/env bash
# Session 17, call 4: binaries of 9ee1348 (grow_fewest the default). The GPU tests; the new default on --backend cuda
# against its sim figures (the twenty-first batch, the multi-stream traces and the traces carried); four of the
# twenty-first batch live on it through the C ABI; then the twenty-second blind batch (scripts/gpu/batch_call.sh).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
START=$(date +%s)
EXPANSE_CUDA_TESTS=1 timeout 100 .device-bin/gpu-tests --include-ignored --test-threads 1 > $OUT/gpu-tests4.txt 2>&1
echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" $OUT/gpu-tests4.txt
ls traces/*.trace.csv.gz | xargs -P 4 -I{} sh -c 'timeout 120 .device-bin/expanse replay {} --backend cuda --json' \
  > $OUT/default-cuda.jsonl 2> $OUT/default-cuda.err
wc -l < $OUT/default-cuda.jsonl; tail -3 $OUT/default-cuda.err
echo "== [$(($(date +%s) - START)) s] cuda replays"
printf '%s\n' nca_grow gp_bayesopt h2o_kv_evict tgn_temporal |
  timeout 100 xargs -P 4 -I{} sh -c 'timeout 90 python3 scripts/gpu/run_workload.py {} --mode expanse 2>/dev/null | tail -1' \
  > $OUT/default-live.jsonl
cat $OUT/default-live.jsonl
echo "== [$(($(date +%s) - START)) s] live"
MODES_DEADLINE=360 CALL_BUDGET=400 bash scripts/gpu/batch_call.sh new22 \
  $(sed -n 's/.*record_batch.sh" new22 //p' scripts/traces/record_new22.sh)
echo "== [$(($(date +%s) - START)) s] done"
