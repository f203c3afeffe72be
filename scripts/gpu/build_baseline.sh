#!/usr/bin/env bash
# Build libexpanse.so as of COMMIT into OUT, for
# `python3 scripts/gpu/bench_alloc.py --baseline-lib OUT` (a before/after
# of a speed change in one process on the GPU). Runs on the build machine,
# from the repository root; the tree itself is left as it is.
#
#   scripts/gpu/build_baseline.sh 2473fd7 .device-bin/libexpanse-base.so
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 COMMIT OUT.so" >&2; exit 2; }
commit=$1
out=$2
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp" >/dev/null 2>&1 || rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp" "$commit" >/dev/null
(cd "$tmp" && cargo build --release -p expanse-capi --quiet)
mkdir -p "$(dirname "$out")"
cp "$tmp/target/release/libexpanse.so" "$out"
echo "$out: libexpanse.so as of $(git rev-parse --short "$commit")"
