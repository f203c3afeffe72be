#!/usr/bin/env bash
# The device tool copies the working tree (64 MiB at most), and traces/ alone
# is larger. Before a device call, move the largest traces out of the tree
# until what git tracks is under 60 MiB; after it, put them back:
#     bash scripts/gpu/carry_traces.sh aside
#     bash scripts/gpu/carry_traces.sh back
# (a device call that needs a trace names it in `carry` or records it anew).
set -euo pipefail
cd "$(dirname "$0")/../.."
HOLD=${EXPANSE_CARRY_HOLD:-/tmp/expanse-carry-hold}
LIMIT=$((60 * 1024 * 1024))
case "${1:-}" in
aside)
  mkdir -p "$HOLD"
  total=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
  for t in $(ls -S traces/*.trace.csv.gz); do
    [ "$total" -lt "$LIMIT" ] && break
    size=$(stat -c %s "$t")
    mv "$t" "$HOLD/"
    total=$((total - size))
    echo "aside: $t ($size bytes)"
  done
  echo "tracked tree now $total bytes (limit $LIMIT)"
  ;;
back)
  shopt -s nullglob
  for t in "$HOLD"/*.trace.csv.gz; do mv "$t" traces/; echo "back: traces/$(basename "$t")"; done
  git status --short traces | grep -q '^ D' && { echo "still missing:"; git status --short traces; exit 1; }
  echo "all traces back"
  ;;
*)
  echo "usage: $0 aside|back" >&2
  exit 2
  ;;
esac
