#!/usr/bin/env bash
# Session 10, call 2: the two workloads of the twelfth batch that ran out of memory next to t5_span
# (83 GB) in call 1, two at a time; then t5_span's three PyTorch replays alone (in call 1 its native
# replay ran beside others and retried twice, so its peak was not PyTorch's own); then the two new
# traces in expanse's three modes on --backend cuda.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
T0=$(date +%s)
mkdir -p $OUT
REC_JOBS=2 REC_LIMIT=250 REC_STEP=270 REPLAY_STEP=150 bash scripts/traces/record_batch.sh new12b marian_beam yolo_mosaic > /dev/null 2>&1
grep -v '^{' $OUT/new12b.log | tail -30 | cut -c1-250
echo "[$(( $(date +%s) - T0 )) s] t5_span alone"
OUT=/tmp/t5 bash scripts/traces/record_corpus.sh replay .device-bin/t5_span.trace.csv.gz > $OUT/t5_span_torch.jsonl 2>&1
cat $OUT/t5_span_torch.jsonl | cut -c1-400
mkdir -p /tmp/n12b && cat $OUT/new12b.tar.gz.part* | tar -C /tmp/n12b -xzf -
for t in /tmp/n12b/corpus/*.trace.csv.gz; do
  for conf in expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True; do
    [ $(( $(date +%s) - T0 )) -lt 560 ] && timeout 40 .device-bin/expanse replay $t --backend cuda --conf "$conf" --json
  done
done > $OUT/modes12b.jsonl 2>&1; echo "cuda replays: $(wc -l < $OUT/modes12b.jsonl) lines at $(( $(date +%s) - T0 )) s"
ls -la $OUT
