#!/usr/bin/env bash
# Session 5, lazy merging through PyTorch: the compatibility rows on one GPU (expanse only,
# DDP/FSDP left out), GPT-2 small for 30 steps, cross-stream lending, the five-stream replay.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT; ROOT=$PWD
timeout 60 .device-bin/expanse replay traces/five_streams.trace.csv --backend cuda --json > $OUT/five.json 2>&1; echo "five rc $?"; cut -c1-300 $OUT/five.json
timeout 90 python3 scripts/gpu/cross_stream.py > $OUT/cross.txt 2>&1; echo "cross rc $?"; tail -5 $OUT/cross.txt
timeout 120 python3 scripts/gpu/train_gpt2.py --mode expanse --steps 30 --out $OUT/gpt2.json > $OUT/gpt2.txt 2>&1; echo "gpt2 rc $?"; tail -4 $OUT/gpt2.txt
OUT=/tmp/compat timeout 300 python3 scripts/gpu/compat_table.py --timeout 120 --allocators expanse --skip "DDP,FSDP2" > $OUT/compat.txt 2>&1; echo "compat rc $?"; tail -25 $OUT/compat.txt; cp /tmp/compat/compat.md $OUT/ 2>/dev/null
