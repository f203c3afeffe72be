#!/usr/bin/env bash
# Session 9, call 1: combining (a thread that finds the device locked posts its request; the lock
# holder runs it) against main's build, in one process on the H200 (C ABI, CUDA backend).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
ROOT=$PWD
mkdir -p $OUT
nproc; lscpu | grep -E "Model name|Thread|Core|Socket" | head -5
cd $OUT && timeout 400 python3 $ROOT/scripts/gpu/bench_alloc.py --rounds 3 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.err | tail -30; grep -v -i warn bench.txt | head -60
