#!/usr/bin/env bash
# Session 16, call 1: does a 0-byte request still reach expanse through PyTorch's pluggable allocator on the GPU
# (session 15's fix returns null at the C ABI)? Empty CUDA tensors, then the two workloads whose live runs
# differed from their replays, live on the default with the allocation stream recorded (live_trace.py).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p $OUT
bash docs/gpu-runs/2026-12-01-s15/call8.sh
for n in asha_sweep_cifar pointpillars_train; do
  timeout 250 python3 docs/gpu-runs/2026-12-01-s15/live_trace.py $n $OUT/$n.live.trace.csv.gz > $OUT/$n.out 2> $OUT/$n.err &
done
wait
cat $OUT/*.out; tail -3 $OUT/*.err
for n in asha_sweep_cifar pointpillars_train; do
  echo "$n zero-byte requests in the live stream: $(zcat $OUT/$n.live.trace.csv.gz | grep -c '^a,[0-9]*,0,')"
  .device-bin/expanse replay $OUT/$n.live.trace.csv.gz --json | cut -c1-300
done
ls -la $OUT
