#!/usr/bin/env bash
# GPU verification, run on the device machine from the repository root with
# the binaries built here in .device-bin/ (see docs/gpu-results.md):
#   scripts/gpu/verify.sh single   # items 1-3 on one GPU
#   scripts/gpu/verify.sh peer     # item 4 on two GPUs
# Results go to $OUT (or ./gpu-out).
set -uo pipefail
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"

single() {
  echo "== 1. conformance suite and allocator tests on CUDA"
  # The GPU tests are #[ignore]d (they show as ignored without a GPU):
  # --include-ignored runs them. Look for "test result: ok. 5 passed" and "five-stream replay ...: ok".
  EXPANSE_CUDA_TESTS=1 .device-bin/gpu-tests --include-ignored --test-threads=1 --nocapture 2>&1 | tee "$OUT/1-tests.txt"
  echo "== 2. replay on the CUDA backend"
  for t in gpt2_train resnet_train; do
    for conf in expandable_segments:False expandable_segments:True,pytorch_compat:True expandable_segments:True; do
      .device-bin/expanse replay "traces/$t.trace.csv.gz" --backend cuda --conf "$conf" --json | tee -a "$OUT/2-replay.jsonl"
    done
  done
  echo "== 2a. a five-stream trace on four created streams plus the default one"
  .device-bin/expanse replay traces/five_streams.trace.csv --backend cuda --json | tee "$OUT/2a-five-streams.json"
  echo "== 2b. cross-stream lending through PyTorch"
  PYTHONUNBUFFERED=1 python3 scripts/gpu/cross_stream.py 2>&1 | tee "$OUT/2b-cross-stream.txt"
  echo "== 3. GPT-2 small training on three allocators"
  for m in expanse native expandable; do
    PYTHONUNBUFFERED=1 python3 scripts/gpu/train_gpt2.py --mode $m --steps "${STEPS:-200}" --out "$OUT/3-train-$m.json" 2>&1 | grep -v Warning | tail -3
  done
}

peer() {
  echo "== 4a. peer access on two GPUs"
  nvcc -O2 -arch=sm_90 -Icrates/expanse-capi/include scripts/gpu/peer_access.cu -o /tmp/peer_access -L.device-bin -lexpanse -Xlinker -rpath -Xlinker "$PWD/.device-bin" \
    && EXPANSE_BACKEND=cuda /tmp/peer_access 2>&1 | tee "$OUT/4-peer.txt"
  echo "== 4b. two-process NCCL all-reduce on expanse buffers"
  PYTHONUNBUFFERED=1 python3 scripts/gpu/nccl_allreduce.py 2>&1 | grep -v Warning | tee "$OUT/4-nccl.txt"
}

"${1:-single}"
