#!/usr/bin/env bash
# Session 28, call 2: the per-user free stamps build (HEAD 1fe34cd, stamps since 1bb5d4a) on the GPU for the
# first time: rsvd_pca_stream live five times, alone, traced (scripts/gpu/live_order.sh), then the allocation
# fast path (bench_alloc.py --quick).
set -uo pipefail
export OUT PATH=/usr/local/cuda/bin:$PATH
S=$(date +%s)
RUN_LIMIT=80 bash scripts/gpu/live_order.sh rsvd_pca_stream stamps1=expanse stamps2=expanse stamps3=expanse stamps4=expanse stamps5=expanse
echo "== [$(($(date +%s)-S)) s] rsvd"
cat "$OUT"/rsvd_pca_stream-stamps*.json > "$OUT"/rsvd-stamps.jsonl
rm -f "$OUT"/rsvd_pca_stream-stamps[2345].trace.csv.gz "$OUT"/rsvd_pca_stream-stamps*.json "$OUT"/rsvd_pca_stream-stamps*.log
timeout 200 python3 scripts/gpu/bench_alloc.py --quick 2>&1 | tail -24 | grep -v '^{'
echo "== [$(($(date +%s)-S)) s] all"
