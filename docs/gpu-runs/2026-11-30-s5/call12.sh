#!/usr/bin/env bash
# Session 5 final tree on one H200: GPU tests; the eight newest traces in all three modes on CUDA
# (PyTorch modes against PyTorch's figures, the default against the host); gen_llama and
# embed_serving default (the second bound); the one-process fast-path benchmark against 533b8a5.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH EXPANSE_LIB=$PWD/.device-bin/libexpanse.so PYTHONUNBUFFERED=1
mkdir -p $OUT; ROOT=$PWD
EXPANSE_CUDA_TESTS=1 timeout 150 .device-bin/gpu-tests --include-ignored --test-threads=1 > $OUT/1-tests.txt 2>&1; echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" $OUT/1-tests.txt
for t in detect_frcnn segment_deeplab lstm_lm t5_generate video_r3d distill_vit embed_serving gen_mistral; do
  for conf in expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True; do
    timeout 60 .device-bin/expanse replay "traces/$t.trace.csv.gz" --backend cuda --conf "$conf" --json
  done
done > $OUT/2-modes.jsonl 2>&1
for t in gen_llama gpt2_train resnet_train; do timeout 60 .device-bin/expanse replay "traces/$t.trace.csv.gz" --backend cuda --json; done > $OUT/3-default.jsonl 2>&1
python3 -c "
import json
for f in ['$OUT/2-modes.jsonl','$OUT/3-default.jsonl']:
  for l in open(f):
    try: r=json.loads(l); print(r['trace'].split('/')[-1], r['conf'], r['peak_reserved_bytes'], r['driver_us_estimate'])
    except Exception: print(l.strip()[:200])
"
cd $OUT && timeout 300 python3 $ROOT/scripts/gpu/bench_alloc.py --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2>&1; echo "bench rc $?"; grep -v -i warn bench.txt | tail -45
