#!/usr/bin/env bash
# Session 9, call 4: the final tree (combining, one event wait per free, the seventh pass's mixed step)
# on the H200: GPU tests, then the C-ABI benchmark against the session's first tree (cd20b86) in one
# process, and expanse's threaded pattern with its cross-stream waits a malloc on the CUDA backend.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
ROOT=$PWD
mkdir -p $OUT
EXPANSE_CUDA_TESTS=1 timeout 100 .device-bin/gpu-tests --include-ignored --test-threads=1 > $OUT/tests.txt 2>&1; echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" $OUT/tests.txt
timeout 60 .device-bin/expanse bench --backend cuda --only threads > $OUT/threads-cuda.txt 2>&1; echo "bench threads rc $?"; cat $OUT/threads-cuda.txt
cd $OUT && timeout 330 python3 $ROOT/scripts/gpu/bench_alloc.py --rounds 2 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.err | tail -12; grep -v -i warn bench.txt | head -40
