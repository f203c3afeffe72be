#!/usr/bin/env bash
# Session 6: batch 7 on CUDA (expanse's PyTorch modes and default), the GPU tests, and the
# stream-adoption table against the build before it (10 quick alternating rounds).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p $OUT; ROOT=$PWD
for t in mamba_lm packed_llama spec_decode hifigan_gan pointnet2_seg dino_multicrop swin_varres sd_vae_decode; do
  for conf in expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True; do
    timeout 60 .device-bin/expanse replay traces/$t.trace.csv.gz --backend cuda --conf "$conf" --json
  done
done > $OUT/modes7.jsonl 2>&1; echo "replays: $(wc -l < $OUT/modes7.jsonl) lines"
EXPANSE_CUDA_TESTS=1 timeout 100 .device-bin/gpu-tests --include-ignored --test-threads=1 > $OUT/tests.txt 2>&1; echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" $OUT/tests.txt
cd $OUT && timeout 200 python3 $ROOT/scripts/gpu/bench_alloc.py --quick --rounds 10 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.txt | head -9
