#!/usr/bin/env bash
# Session 10, call 3: the threaded pattern on the H200 (CUDA backend) with one allocator for all
# threads (own streams, one stream) and with an allocator each (nothing shared: the bound a
# per-stream split of the state could reach), three runs.
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out}
mkdir -p $OUT
nproc
for i in 1 2 3; do
  .device-bin/expanse bench --backend cuda --only threads --threads 8 --json > $OUT/threads$i.json 2> $OUT/threads$i.err
  .device-bin/expanse bench --backend cuda --only threads --threads 8 | tail -8
done
