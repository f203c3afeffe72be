#!/usr/bin/env bash
# Session 9, call 2: combining and one event wait per free of the other stream (branch combine) against main
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
ROOT=$PWD
mkdir -p $OUT
nproc; lscpu | grep -E "Model name|Thread|Core|Socket" | head -5
cd $OUT && timeout 400 python3 $ROOT/scripts/gpu/bench_alloc.py --rounds 2 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.err | tail -30; grep -v -i warn bench.txt | head -60
