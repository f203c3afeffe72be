#!/usr/bin/env bash
# Session 16, call 3: the nineteenth blind batch's five workloads that call 2 could not record in its 260 s
# (recording four at a time took 106-168 s each, not the 15-40 s estimated), five at a time with more time;
# meanwhile rvq_codec_train's trace from call 2 (carried in .device-bin) replayed through PyTorch's three
# allocators and in expanse's three modes on --backend cuda, as record_batch.sh does.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
START=$(date +%s)
(
  R=$(mktemp -d)
  OUT=$R bash scripts/traces/record_corpus.sh replay .device-bin/rvq_codec_train.trace.csv.gz > /dev/null 2>&1
  cp $R/corpus/torch.jsonl $OUT/rvq-torch.jsonl
  for conf in expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True; do
    timeout 60 .device-bin/expanse replay .device-bin/rvq_codec_train.trace.csv.gz --backend cuda --conf "$conf" --json
  done > $OUT/rvq-modes.jsonl 2>&1
) &
EXPANSE_BIN=.device-bin/expanse MODES_DEADLINE=540 REC_JOBS=5 REC_LIMIT=340 REC_STEP=350 REPLAY_STEP=120 \
  bash scripts/traces/record_batch.sh new19b emb_offload_rec zoo_eval_sweep ctc_asr_serve longdoc_chunked_prefill maskrcnn_serve > /dev/null 2>&1
wait
grep -v '^{' $OUT/new19b.log | grep -E "events|Error|MISSING|replayed|recorded|packed" | cut -c1-250
cat $OUT/new19b.log $OUT/rvq-torch.jsonl | grep '^{' | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d['trace'], d['mode'], d['peak_reserved_bytes'], 'retries', d['num_alloc_retries'])"
cat $OUT/new19b-modes.jsonl $OUT/rvq-modes.jsonl | cut -c1-220
echo "== [$(($(date +%s) - START)) s] done"
ls -la $OUT
