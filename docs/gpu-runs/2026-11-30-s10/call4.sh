#!/usr/bin/env bash
# Session 10, call 4: the GPU tests (the conformance suite now checks released events), and the
# threaded pattern with released events kept for reuse (call 3 ran the tree before it), then the
# in-process comparison through the C ABI against the session's first library.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
ROOT=$PWD
mkdir -p $OUT
EXPANSE_CUDA_TESTS=1 timeout 200 .device-bin/gpu-tests --include-ignored --test-threads 1 > $OUT/gpu-tests.txt 2>&1; echo "gpu tests rc $?"; grep -E "^test |test result|conformance" $OUT/gpu-tests.txt | tail -20
for i in 1 2 3; do
  .device-bin/expanse bench --backend cuda --only threads --threads 8 --json > $OUT/threads$i.json 2> $OUT/threads$i.err
done
python3 -c "
import json
for i in (1,2,3):
    t=json.load(open('$OUT/threads%d.json'%i))['threads']
    print({n:(round(v['own_streams_ops_per_s']/1e3), round(v['own_streams_speedup'],2), round(v['own_streams_cross_stream_waits_per_malloc'],3), round(v['own_allocators_ops_per_s']/1e3)) for n,v in t.items()})"
cd $OUT && timeout 240 python3 $ROOT/scripts/gpu/bench_alloc.py --quick --rounds 4 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.err | grep -A1 "== expanse"
tail -30 bench.txt
