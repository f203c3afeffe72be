#!/usr/bin/env bash
# One workload run live, alone, several ways, each recording its own allocation trace, then how many
# freed blocks each stream held waiting for events at once in each (scripts/traces/stream_backlog.py).
# For a live run whose reserved bytes differ from its replay's because the frees came in another order
# (a side stream's timing): which setting changes that order.
#
#     bash scripts/gpu/live_order.sh NAME RUN...
#
# Each RUN is `LABEL=MODE[@LIB][:CONF]`: MODE expanse, native, expandable or async; LIB a libexpanse.so
# (default .device-bin/libexpanse.so); CONF an expanse configuration, e.g.
#     bash scripts/gpu/live_order.sh rsvd_pca_stream default=expanse nolend=expanse:lend_across_streams:False \
#         marks=expanse@.device-bin/marks/libexpanse.so native=native
# Writes $OUT/NAME-LABEL.json (run_workload.py's line) and $OUT/NAME-LABEL.trace.csv.gz; prints both.
# RUN_LIMIT: seconds a run may take (default 150). The runs go one after another: two at once did not
# finish in 420 s (docs/gpu-results.md 32).
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=${1:?usage: live_order.sh NAME LABEL=MODE[@LIB][:CONF]...}
shift
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p "$OUT"
traces=()
for run in "$@"; do
  label=${run%%=*}
  spec=${run#*=}
  mode=${spec%%[@:]*}
  rest=${spec#"$mode"}
  lib=$PWD/.device-bin/libexpanse.so
  conf=()
  if [[ $rest == @* ]]; then
    lib=${rest#@}
    lib=${lib%%:*}
    rest=${rest#@"$lib"}
    [[ $lib == /* ]] || lib=$PWD/$lib
  fi
  [[ $rest == :* ]] && conf=(--conf "${rest#:}")
  trace=$OUT/$NAME-$label.trace.csv.gz
  start=$(date +%s)
  EXPANSE_LIB=$lib timeout "${RUN_LIMIT:-150}" python3 scripts/gpu/run_workload.py "$NAME" --mode "$mode" "${conf[@]}" \
    --trace "$trace" --out "$OUT/$NAME-$label.json" > "$OUT/$NAME-$label.log" 2>&1
  rc=$?
  echo "== $label ($mode${conf[*]:+ ${conf[*]}}, $(basename "$(dirname "$lib")")/$(basename "$lib")): rc $rc, $(($(date +%s) - start)) s"
  tail -1 "$OUT/$NAME-$label.log" | cut -c1-400
  [ -s "$trace" ] && traces+=("$trace")
done
[ ${#traces[@]} -gt 0 ] && python3 scripts/traces/stream_backlog.py "${traces[@]}"
