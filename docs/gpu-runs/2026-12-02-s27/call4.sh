#!/usr/bin/env bash
# Session 27, call 4: the marks build with demand (a stream marks its frees only while another stream reused
# its memory lately; .device-bin/libexpanse.so and gpu-tests), against .device-bin/base/libexpanse.so (3123796).
# 1. GPU tests; 2. rsvd_pca_stream live twice, alone, traced; 3. the allocation fast path, against base.
set -uo pipefail
export OUT PATH=/usr/local/cuda/bin:$PATH
S=$(date +%s)
EXPANSE_CUDA_TESTS=1 timeout 150 .device-bin/gpu-tests --include-ignored --test-threads=1 > /tmp/tests.txt 2>&1; echo "gpu tests rc $?"
grep -E "^test |test result|FAILED|panicked" /tmp/tests.txt | head -12
echo "== [$(($(date +%s)-S)) s] gpu tests"
RUN_LIMIT=120 bash scripts/gpu/live_order.sh rsvd_pca_stream demand1=expanse demand2=expanse
echo "== [$(($(date +%s)-S)) s] rsvd"
timeout 200 python3 scripts/gpu/bench_alloc.py --quick --baseline-lib .device-bin/base/libexpanse.so 2>&1 | tail -24 | grep -v '^{'
echo "== [$(($(date +%s)-S)) s] all"
