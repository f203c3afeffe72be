#!/usr/bin/env bash
# Session 11, call 1: the eighth pass (speed6, merged as 704f90f) on the H200: GPU tests, then
# the in-process comparison through the C ABI against 24219cc (the tree before it), best of six
# quick rounds, then the threaded pattern (8 threads) as it stands before any state split.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
ROOT=$PWD
mkdir -p $OUT
nproc; uptime
EXPANSE_CUDA_TESTS=1 timeout 200 .device-bin/gpu-tests --include-ignored --test-threads 1 > $OUT/gpu-tests.txt 2>&1; echo "gpu tests rc $?"; grep -E "test result" $OUT/gpu-tests.txt
(cd $OUT && timeout 300 python3 $ROOT/scripts/gpu/bench_alloc.py --quick --rounds 6 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; tail -40 bench.txt)
for i in 1 2; do
  timeout 60 .device-bin/expanse bench --backend cuda --only threads --threads 8 --json > $OUT/threads$i.json 2> $OUT/threads$i.err
done
python3 -c "
import json
for i in (1,2):
    t=json.load(open('$OUT/threads%d.json'%i))['threads']
    print({n:(round(v['own_streams_ops_per_s']/1e3), round(v['own_streams_speedup'],2), round(v['own_allocators_ops_per_s']/1e3)) for n,v in t.items()})"
