#!/usr/bin/env bash
# Session 11, call 5: ocr_train (fifteenth batch) is the first trace whose PyTorch-native replay
# expanse's classic mode misses (48 MiB more, on host, sim and CUDA alike): PyTorch's reserved
# bytes after every event, to find the first event where the two replays part.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PYTHONUNBUFFERED=1
mkdir -p $OUT
timeout 100 python3 scripts/gpu/reserved_timeline.py traces/ocr_train.trace.csv.gz native > $OUT/ocr_native_timeline.txt; echo "rc $?"; wc -l $OUT/ocr_native_timeline.txt; tail -2 $OUT/ocr_native_timeline.txt
