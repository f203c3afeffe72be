#!/usr/bin/env bash
# Issue 8: record a batch of held-out workloads (models built from configs,
# nothing downloaded) on the one-H200 machine from the repository root,
# within about 9 minutes for eight of them:
#
#     bash scripts/traces/record_batch.sh TAG NAME...
#
# (record_new5.sh to record_new10.sh name the batches of 2026-11-30).
# 1. records them three at a time (REC_JOBS), 300 s each at most (REC_LIMIT), the whole
#    step cut at 330 s (REC_STEP) (scripts/traces/record_corpus.sh record) into $OUT/corpus;
#    a workload still running at its limit or at the step's cut is stopped by a SIGTERM and its
#    trace so far written, marked as stopped (record.py, stop_early.py); the step waits up to
#    90 s more for those writes;
# 2. replays each trace that came out through PyTorch's three allocators
#    (record_corpus.sh replay, one fresh process per trace and mode),
#    REPLAY_JOBS traces at a time (default 3), each into a folder of its
#    own so that no two processes append to one file; their lines are then joined, in the
#    order of NAMES, into $OUT/corpus/torch.jsonl; the step is cut at 150 s
#    (REPLAY_STEP);
# 3. lists $OUT/corpus, shows the tail of every log, and packs $OUT/corpus
#    into $OUT/TAG.tar.gz.part00, part01, ... of 15 MiB at most (the loose
#    files removed: the device tool brings back 8 files of 16 MiB at most;
#    `cat TAG.tar.gz.part* | tar -xzf -` unpacks them), after step 4
#    below. $OUT/TAG.log is this script's output.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/corpus"
TAG=${1:?usage: record_batch.sh TAG NAME...}
shift
exec > >(tee "$OUT/$TAG.log") 2>&1
# A typo in a count would surface only after the recording, with the call's device time spent: check them
# first, into the log, where batch_call.sh shows lines naming an Error.
for v in REC_JOBS REC_LIMIT REC_STEP REPLAY_STEP REPLAY_JOBS MODES_DEADLINE; do
  [[ "${!v:-1}" =~ ^[0-9]*[1-9][0-9]*$ ]] ||
    { echo "Error: record_batch.sh: $v must be a positive whole number, got '${!v}'"; exit 64; }
done
START=$(date +%s)
elapsed() { echo "[$(($(date +%s) - START)) s] $*"; }

# As given: longest first, so that the three slots finish close together.
NAMES=("$@")

elapsed "recording ${NAMES[*]}"
# timeout signals its own process group: record_corpus.sh and xargs go, the recorders do not (below).
JOBS=${REC_JOBS:-3} LIMIT=${REC_LIMIT:-300} timeout "${REC_STEP:-330}" bash scripts/traces/record_corpus.sh record "${NAMES[@]}"
# The step's cut does not reach the recorders (each runs under a timeout of its own, in a process group
# of its own): stop those still running now, let them write their traces so far (record.py renames a trace
# into place only once it is whole), and kill what is left after 90 s. The pattern names the recorders'
# own command line (python3 first): a bare "traces/record.py" also matched the shell that ran this script
# whenever its command line named that file (a device call that edited record.py first was killed here,
# docs/gpu-results.md 31).
rec='^python3 .*traces/record\.py '
pkill -TERM -f "$rec"
for _ in $(seq 90); do pgrep -f "$rec" > /dev/null || break; sleep 1; done
pkill -KILL -f "$rec"
elapsed "recorded"

W=$(mktemp -d "/tmp/$TAG.XXXX")
traces=()
for n in "${NAMES[@]}"; do
  t=$OUT/corpus/$n.trace.csv.gz
  if [ -f "$t" ]; then traces+=("$t"); else echo "MISSING: $n (see $n.log)"; fi
done
elapsed "replaying ${#traces[@]} traces"
# shellcheck disable=SC2016
printf '%s\n' "${traces[@]}" | timeout "${REPLAY_STEP:-150}" xargs -P "${REPLAY_JOBS:-3}" -I{} sh -c \
  'n=$(basename "$1" .trace.csv.gz); OUT="$2/$n" bash scripts/traces/record_corpus.sh replay "$1" > /dev/null' \
  _ {} "$W"
for n in "${NAMES[@]}"; do
  cat "$W/$n/corpus/torch.jsonl" 2>/dev/null >> "$OUT/corpus/torch.jsonl"
  cat "$W/$n/corpus/replay.err" 2>/dev/null >> "$OUT/corpus/replay.err"
done
rm -rf "$W"
elapsed "replayed"

echo "== torch.jsonl"
cat "$OUT/corpus/torch.jsonl" 2>/dev/null
echo "== replay.err (tail)"
tail -20 "$OUT/corpus/replay.err" 2>/dev/null
echo "== ls -la $OUT/corpus"
ls -la "$OUT/corpus"
for n in "${NAMES[@]}"; do
  echo "== $n.log (tail)"
  tail -5 "$OUT/corpus/$n.log" 2>/dev/null
  [ -f "$OUT/corpus/$n.live.json" ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
print(d['workload'], d['events'], 'events', d['seconds'], 's, peak reserved', d['memory_stats'].get('reserved_bytes.all.peak'))" \
    "$OUT/corpus/$n.live.json"
done

# 4. with EXPANSE_BIN set (a built `expanse`, e.g. .device-bin/expanse),
#    each trace replayed on --backend cuda in expanse's PyTorch-native and
#    PyTorch-expandable modes and its default, one JSON line each, into
#    $OUT/TAG-modes.jsonl, until MODES_DEADLINE seconds after the start
#    (default 540): both PyTorch modes must give the replays' peaks above.
#    MODES_EXTRA_CONF (e.g. a registered candidate's keys) adds a fourth
#    configuration, expandable_segments:True with those keys.
if [ -n "${EXPANSE_BIN:-}" ]; then
  confs=(expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True)
  [ -n "${MODES_EXTRA_CONF:-}" ] && confs+=("expandable_segments:True,$MODES_EXTRA_CONF")
  for t in "${traces[@]}"; do
    for conf in "${confs[@]}"; do
      [ $(($(date +%s) - START)) -lt "${MODES_DEADLINE:-540}" ] || break 2
      timeout 40 "$EXPANSE_BIN" replay "$t" --backend cuda --conf "$conf" --json
    done
  done > "$OUT/$TAG-modes.jsonl" 2>&1
  elapsed "replayed on cuda: $(wc -l < "$OUT/$TAG-modes.jsonl") lines"
fi

tar -C "$OUT" -czf - corpus | split -b 15m -d - "$OUT/$TAG.tar.gz.part" && rm -rf "${OUT:?}/corpus"
elapsed "packed"
ls -la "$OUT"
