#!/usr/bin/env bash
# The fast-path benchmark alone, expanse and the 533b8a5 baseline alternating over 3 rounds.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
mkdir -p $OUT; ROOT=$PWD
cd $OUT && timeout 480 python3 $ROOT/scripts/gpu/bench_alloc.py --rounds 4 --baseline-lib $ROOT/.device-bin/libexpanse-base.so > bench.txt 2> bench.err; echo "bench rc $?"; grep -v -i warn bench.err | tail -30; grep -v -i warn bench.txt | tail -45
