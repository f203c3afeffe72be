#!/usr/bin/env bash
# Session 11, call 3: the fourteenth batch's four-stream server (multistream_server) run live,
# one process at a time, on expanse's default, expanse without lending, and PyTorch's three
# allocators: wall time and peak reserved. Lending serves a stream another stream's free block
# after an event wait (286k waits in the replay of its trace): does that cost the server time?
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
run() { timeout 170 python3 scripts/gpu/run_workload.py "$@" 2> $OUT/err-$RANDOM.txt | tail -1 | tee -a $OUT/live.jsonl; }
run multistream_server --mode expanse
run multistream_server --mode native
run multistream_server --mode expanse --conf expandable_segments:True,lend_across_streams:False
run multistream_server --mode async
run multistream_server --mode expandable
ls $OUT; tail -3 $OUT/err-*.txt | grep -v '^$' | tail -20
