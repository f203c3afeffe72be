#!/usr/bin/env bash
# Session 7: batch 8 on CUDA (expanse's PyTorch modes and default), and the
# two batch-8 workloads the last call cut (effnet_varres, mt_transformer),
# recorded with the default limits, replayed through PyTorch, then on CUDA.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p $OUT; ROOT=$PWD
modes() {
  for t in "$@"; do
    for conf in expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True; do
      timeout 90 .device-bin/expanse replay $t --backend cuda --conf "$conf" --json
    done
  done
}
( modes traces/two_tower.trace.csv.gz traces/esrgan_sr.trace.csv.gz traces/video_diffusion.trace.csv.gz traces/vision_serving.trace.csv.gz traces/dcgan_train.trace.csv.gz > $OUT/modes8.jsonl 2>&1; echo "batch-8 replays: $(wc -l < $OUT/modes8.jsonl) lines" ) &
REC_LIMIT=300 REC_STEP=315 REPLAY_STEP=120 bash scripts/traces/record_batch.sh new8b mt_transformer effnet_varres > /dev/null 2>&1
wait
tail -30 $OUT/new8b.log | cut -c1-300
mkdir -p /tmp/n8b && tar -C /tmp/n8b -xzf $OUT/new8b.tar.gz
modes /tmp/n8b/corpus/*.trace.csv.gz > $OUT/modes8b.jsonl 2>&1; echo "new replays: $(wc -l < $OUT/modes8b.jsonl) lines"
cut -c1-200 $OUT/modes8.jsonl $OUT/modes8b.jsonl
ls -la $OUT
