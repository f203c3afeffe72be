#!/usr/bin/env bash
# Session 27, call 3: the marks build (.device-bin: libexpanse.so, expanse and gpu-tests from the commit
# that adds allocator/marks.rs; .device-bin/base/libexpanse.so from 3123796, before it).
# 1. GPU tests; 2. rsvd_pca_stream live twice more on marks and once on the base build, alone, traced;
# 3. the two two-stream workloads of batch 48 live on marks (their live default runs are in call 1);
# 4. the allocation fast path, marks against base, in one process.
set -uo pipefail
export OUT PATH=/usr/local/cuda/bin:$PATH
S=$(date +%s)
.device-bin/gpu-tests --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" | head -5
echo "== [$(($(date +%s)-S)) s] gpu tests"
RUN_LIMIT=120 bash scripts/gpu/live_order.sh rsvd_pca_stream marks2=expanse marks3=expanse base2=expanse@.device-bin/base/libexpanse.so
echo "== [$(($(date +%s)-S)) s] rsvd"
for w in sinkhorn_pc_autoencode am_cvrp_beam_serve; do
  OUT=/tmp/lo RUN_LIMIT=120 bash scripts/gpu/live_order.sh $w marks=expanse
done
echo "== [$(($(date +%s)-S)) s] two-stream workloads"
timeout 200 python3 scripts/gpu/bench_alloc.py --quick --baseline-lib .device-bin/base/libexpanse.so 2>&1 | tail -30
echo "== [$(($(date +%s)-S)) s] all"
