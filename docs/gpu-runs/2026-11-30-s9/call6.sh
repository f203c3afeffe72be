#!/usr/bin/env bash
# Session 9, call 6: cross-stream waits queued after the device lock is released (call6/deferwaits.patch,
# not merged)
# against the tree before it (call 4's library) in one process; expanse's threaded pattern on CUDA.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
ROOT=$PWD
mkdir -p $OUT
timeout 60 .device-bin/expanse bench --backend cuda --only threads > $OUT/threads-cuda.txt 2>&1; echo "bench threads rc $?"; cat $OUT/threads-cuda.txt
cd $OUT && timeout 200 python3 $ROOT/scripts/gpu/bench_alloc.py --quick --rounds 4 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.err | grep -A1 "== expanse"
