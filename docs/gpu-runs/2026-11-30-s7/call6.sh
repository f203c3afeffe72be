#!/usr/bin/env bash
# Session 7, call 6: the final library through PyTorch where the pool path now takes the DeviceGuard:
# GPU tests, CUDA graph capture and torch.compile(reduce-overhead) rows, the OOM/history rows, 30 GPT-2 steps.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
EXPANSE_CUDA_TESTS=1 timeout 100 .device-bin/gpu-tests --include-ignored --test-threads=1 > $OUT/tests-final.txt 2>&1; echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" $OUT/tests-final.txt
timeout 200 python3 scripts/gpu/compat_table.py --only "graph,compile,_snapshot,out-of-memory,record_stream" --allocators expanse > $OUT/compat-final.txt 2>&1; echo "compat rc $?"; tail -8 $OUT/compat-final.txt | cut -c1-250
timeout 120 python3 scripts/gpu/train_gpt2.py --mode expanse --steps 30 --out $OUT/gpt2-final.json > $OUT/gpt2-final.txt 2>&1; echo "gpt2 rc $?"; tail -1 $OUT/gpt2-final.txt | cut -c1-300
