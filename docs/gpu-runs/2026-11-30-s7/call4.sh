#!/usr/bin/env bash
# Session 7, call 4: torch.cuda.memory's history API and the out-of-memory observer through PyTorch
# on the three allocators (the compat table's rows), and the host-backend history checks against this torch.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
timeout 60 python3 python/test_torch_history.py .device-bin/libexpanse.so > $OUT/torch-history.txt 2>&1; echo "history checks rc $?"; tail -12 $OUT/torch-history.txt
timeout 400 python3 scripts/gpu/compat_table.py --only "_snapshot,out-of-memory observer,MemPool,memory_stats" --allocators native,expandable,expanse > $OUT/compat.txt 2>&1; echo "compat rc $?"
tail -20 $OUT/compat.txt
ls -la $OUT
