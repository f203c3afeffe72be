#!/usr/bin/env bash
# Session 6, speed: lazy free of whole blocks against 9bb785b (3 alternating rounds),
# the GPU tests, the map-offset probe, GPT-2 training and the five-stream replay through it.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT; ROOT=$PWD
nvcc -O2 -o /tmp/probe scripts/gpu/map_offset_probe.cu -lcuda > /dev/null 2>&1 && /tmp/probe > $OUT/probe.txt 2>&1; echo "probe rc $?"; cat $OUT/probe.txt
EXPANSE_CUDA_TESTS=1 timeout 100 .device-bin/gpu-tests --include-ignored --test-threads=1 > $OUT/tests.txt 2>&1; echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" $OUT/tests.txt
timeout 60 .device-bin/expanse replay traces/five_streams.trace.csv --backend cuda --json > $OUT/five.json 2>&1; echo "five rc $?"; cut -c1-300 $OUT/five.json
timeout 120 python3 scripts/gpu/train_gpt2.py --mode expanse --steps 30 --out $OUT/gpt2.json > $OUT/gpt2.txt 2>&1; echo "gpt2 rc $?"; tail -4 $OUT/gpt2.txt
cd $OUT && timeout 300 python3 $ROOT/scripts/gpu/bench_alloc.py --rounds 3 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.err | tail -16; grep -v -i warn bench.txt | head -40
