#!/usr/bin/env bash
# Session 7, call 3: where effnet_varres spends its time on the GPU (Python stacks every 30 s, GPU use every 20 s).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PYTHONUNBUFFERED=1
mkdir -p $OUT /tmp/o
( for i in 1 2 3 4 5; do sleep 20; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader; done ) &
timeout 110 python3 -c "
import faulthandler, sys, runpy, time
faulthandler.dump_traceback_later(30, repeat=True)
sys.argv = ['record.py', 'effnet_varres', '/tmp/o']
runpy.run_path('scripts/traces/record.py', run_name='__main__')
" > $OUT/effnet-diag.txt 2>&1; echo "rc $?"
wait
grep -v "^  File \"/opt" $OUT/effnet-diag.txt | head -80
