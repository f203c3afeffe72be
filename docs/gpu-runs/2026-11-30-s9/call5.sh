#!/usr/bin/env bash
# Session 9, call 5: call 4's pairs were slower than the session's first tree (cd20b86) in both rounds
# while the mixed pattern was faster; more rounds, quick mode, each library going first in turn.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
ROOT=$PWD
mkdir -p $OUT
cd $OUT && timeout 300 python3 $ROOT/scripts/gpu/bench_alloc.py --quick --rounds 8 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.err | grep -A1 "== expanse"
