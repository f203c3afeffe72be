#!/usr/bin/env bash
# One device call for a blind batch of issue 8, on the one-H200 machine from the repository root:
#
#     bash scripts/gpu/batch_call.sh TAG NAME...
#
# 1. records the workloads (scripts/traces/record_batch.sh TAG NAME..., REC_JOBS at a time, default 4),
#    replays them through PyTorch's three allocators and in expanse's three modes on --backend cuda
#    (.device-bin/expanse), and prints what came out: the log's summary lines and each replay's peak;
# 2. then, while the call has time (CALL_BUDGET seconds from the start, default 570), runs each workload
#    live on expanse through the C ABI (.device-bin/libexpanse.so; LIVE_CONF: a configuration, the default
#    when unset), LIVE_JOBS at a time (default 4; eight fit one H100 or H200 beside nothing else: the
#    fifty-first session ran sixteen live runs eight at a time in 157 s), one JSON line each into
#    $OUT/TAG-live.jsonl, to set beside its replay.
# Limits (record_batch.sh): REC_LIMIT (220), REC_STEP (250), REPLAY_STEP (110), REPLAY_JOBS (3), MODES_DEADLINE (420);
# MODES_EXTRA_CONF: a fourth configuration replayed on --backend cuda (a registered candidate).
# Back on the development machine: unpack TAG.tar.gz.part*, scripts/traces/add_batch.py, then
# scripts/traces/check_batch.py TAG-modes.jsonl TAG-live.jsonl for the fidelity counts, and
# scripts/traces/score_batches.py [--candidate CONF] NN... for the round's tables, the corpus means and the capacity.
# Before a session's first call, delete the earlier calls' folders under /work/.device that were already unpacked:
# with about 90 MB there, a call's 26 MB of files did not come back; once they were deleted, the same files did
# (docs/gpu-results.md 29).
set -uo pipefail
cd "$(dirname "$0")/../.."
TAG=${1:?usage: batch_call.sh TAG NAME...}
shift
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p "$OUT"
START=$(date +%s)
EXPANSE_BIN=.device-bin/expanse MODES_DEADLINE=${MODES_DEADLINE:-420} REC_JOBS=${REC_JOBS:-4} \
  REC_LIMIT=${REC_LIMIT:-220} REC_STEP=${REC_STEP:-250} REPLAY_STEP=${REPLAY_STEP:-110} \
  bash scripts/traces/record_batch.sh "$TAG" "$@" > /dev/null 2>&1
rc=$?
grep -v '^{' "$OUT/$TAG.log" | grep -E "events|Error|MISSING|replayed|recorded|packed|stopped" | cut -c1-250
# 64: record_batch.sh refused a count before recording anything; the live runs would spend the call for nothing.
[ "$rc" -eq 64 ] && exit 64
grep '^{' "$OUT/$TAG.log" | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d['trace'], d['mode'], d['peak_reserved_bytes'], 'retries', d['num_alloc_retries'])"
echo "== [$(($(date +%s) - START)) s] recorded"
python3 -c 'import sys; sys.path.insert(0, "python"); import expanse_torch; expanse_torch.install()
import torch; torch.zeros(1, device="cuda"); print("extension ready")' 2>&1 | tail -1
left=$((${CALL_BUDGET:-570} - ($(date +%s) - START)))
[ $left -gt 30 ] || left=1
conf=()
[ -n "${LIVE_CONF:-}" ] && conf=(--conf "$LIVE_CONF")
# shellcheck disable=SC2016
printf '%s\n' "$@" | timeout $left xargs -P "${LIVE_JOBS:-4}" -I{} bash -c \
  'timeout "$0" python3 scripts/gpu/run_workload.py "$1" --mode expanse "${@:2}" 2>/dev/null | tail -1' \
  "$left" {} "${conf[@]}" > "$OUT/$TAG-live.jsonl"
cat "$OUT/$TAG-live.jsonl"
echo "== [$(($(date +%s) - START)) s] done"
ls -la "$OUT"
