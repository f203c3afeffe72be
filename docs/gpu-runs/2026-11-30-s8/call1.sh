#!/usr/bin/env bash
# Session 8, call 1: GPU tests, the compat rows through PyTorch (MemPool / use_mem_pool new; graph pools,
# compile, history, observer, record_stream as regressions), and the C-ABI benchmark in one process.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
ROOT=$PWD
mkdir -p $OUT
EXPANSE_CUDA_TESTS=1 timeout 100 .device-bin/gpu-tests --include-ignored --test-threads=1 > $OUT/tests.txt 2>&1; echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" $OUT/tests.txt
timeout 100 python3 python/test_mempool.py .device-bin/libexpanse.so > $OUT/mempool-host.txt 2>&1; echo "mempool host checks rc $?"; tail -3 $OUT/mempool-host.txt
timeout 230 python3 scripts/gpu/compat_table.py --only "MemPool,graph,compile,_snapshot,out-of-memory,record_stream" --allocators native,expandable,expanse > $OUT/compat.txt 2>&1; echo "compat rc $?"; grep -v "^ *$" $OUT/compat.txt | tail -12 | cut -c1-400
cd $OUT && timeout 230 python3 $ROOT/scripts/gpu/bench_alloc.py --rounds 2 > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.err | tail -16; grep -v -i warn bench.txt | head -40
