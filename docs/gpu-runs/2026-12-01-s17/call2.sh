#!/usr/bin/env bash
# Session 17, call 2: the GPU tests on this session's binaries (grow_fewest added, off by default); the candidate
# grow_fewest:True on --backend cuda against its sim figures (the twentieth batch and the multi-stream traces it
# changes most), three of the batch live on it through the C ABI; then the fast-path comparison (issue 12).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
ROOT=$PWD
mkdir -p $OUT
START=$(date +%s)
EXPANSE_CUDA_TESTS=1 timeout 150 .device-bin/gpu-tests --include-ignored --test-threads 1 > $OUT/gpu-tests.txt 2>&1
echo "gpu tests rc $?"; grep -E "test result|FAILED|panicked" $OUT/gpu-tests.txt
echo "== [$(($(date +%s) - START)) s] tests"
ls traces/*.trace.csv.gz | xargs -P 4 -I{} sh -c \
  'timeout 120 .device-bin/expanse replay {} --backend cuda --conf grow_fewest:True --json' > $OUT/fewest-cuda.jsonl 2> $OUT/fewest-cuda.err
wc -l < $OUT/fewest-cuda.jsonl; tail -3 $OUT/fewest-cuda.err
echo "== [$(($(date +%s) - START)) s] cuda replays"
python3 -c 'import sys; sys.path.insert(0, "python"); import expanse_torch; expanse_torch.install(); import torch; torch.zeros(1, device="cuda"); print("extension ready")' 2>&1 | tail -1
printf '%s\n' maml_fewshot pgd_adv_train ffjord_cnf fedavg_sim |
  timeout 120 xargs -P 4 -I{} sh -c 'timeout 110 python3 scripts/gpu/run_workload.py {} --mode expanse --conf grow_fewest:True 2>/dev/null | tail -1' > $OUT/fewest-live.jsonl
cat $OUT/fewest-live.jsonl
echo "== [$(($(date +%s) - START)) s] live"
cd $OUT && timeout 200 python3 $ROOT/scripts/gpu/bench_alloc.py --quick --rounds 3 > bench.txt 2> bench.err; echo "bench rc $?"
grep -v -i warn bench.txt | tail -30
echo "== [$(($(date +%s) - START)) s] done"
