#!/usr/bin/env bash
# Session 14, call 3: the seventeenth blind batch (scripts/traces/record_new17.sh), four at a time,
# replayed through PyTorch's three allocators and in expanse's three modes on --backend cuda; then two
# workloads of the sixteenth batch run live on expanse's default through the C ABI (ivf_index_build,
# two streams, where shared segments changed the replay most; gradcache_embed, the batch's loss), their
# peaks to compare with the replays in traces/corpus.json and docs/bench/peaks.json; then the in-process
# speed comparison of issue 12 (bench_alloc.py --quick).
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
echo "== [$(($(date +%s) - START)) s] live on expanse's default"
for w in ivf_index_build gradcache_embed; do
    timeout 110 python3 scripts/gpu/run_workload.py $w --mode expanse 2> "$OUT/live-$w.err" | tail -1 | tee -a "$OUT/live16.jsonl"
done
echo "== [$(($(date +%s) - START)) s] bench_alloc --quick"
[ $(($(date +%s) - START)) -lt 480 ] && timeout 100 python3 scripts/gpu/bench_alloc.py --quick --rounds 3 2>&1 | tail -25
echo "== [$(($(date +%s) - START)) s] done"
ls -la $OUT
