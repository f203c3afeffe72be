#!/usr/bin/env bash
# Session 28, call 4: do per-user free stamps (1bb5d4a) raise rsvd_pca_stream's live peak? Runs alternate between
# the build with marks alone (ce301c1, .device-bin/marks/libexpanse.so) and the stamps build (.device-bin/libexpanse.so),
# alone, one after another, each traced; then PyTorch native twice (one run in session 27 held only 10 uploads).
set -uo pipefail
export OUT PATH=/usr/local/cuda/bin:$PATH
S=$(date +%s)
RUN_LIMIT=70 bash scripts/gpu/live_order.sh rsvd_pca_stream marksA=expanse@.device-bin/marks/libexpanse.so stampsA=expanse \
  marksB=expanse@.device-bin/marks/libexpanse.so stampsB=expanse marksC=expanse@.device-bin/marks/libexpanse.so \
  stampsC=expanse nativeA=native nativeB=native
echo "== [$(($(date +%s)-S)) s] rsvd"
cat "$OUT"/rsvd_pca_stream-*.json > "$OUT"/rsvd-call4.jsonl
rm -f "$OUT"/rsvd_pca_stream-*
ls "$OUT"
