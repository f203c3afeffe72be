#!/usr/bin/env bash
# On the GPU machine, from the repository root: record the corpus workloads
# (three processes at a time on one GPU) into $OUT/corpus, then replay each
# new trace through PyTorch's three allocators (one fresh process per
# trace and mode) into $OUT/corpus/torch.jsonl.
#   scripts/traces/record_corpus.sh record [WORKLOAD...]
#   scripts/traces/record_corpus.sh dist [WORKLOAD...]   (two GPUs: rank 0's trace)
#   scripts/traces/record_corpus.sh replay TRACE...
set -uo pipefail
OUT=${OUT:-gpu-out}
mkdir -p "$OUT/corpus"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
here=$(dirname "$0")
cmd=${1:-record}
shift || true
case "$cmd" in
record)
  names=("$@")
  [ ${#names[@]} -gt 0 ] || mapfile -t names < <(python3 "$here/record.py" --list | cut -f1)
  printf '%s\n' "${names[@]}" | xargs -P "${JOBS:-3}" -I{} sh -c \
    "timeout ${LIMIT:-420} python3 '$here/record.py' {} '$OUT/corpus' > '$OUT/corpus/{}.log' 2>&1; tail -1 '$OUT/corpus/{}.log'"
  ;;
dist)
  names=("$@")
  [ ${#names[@]} -gt 0 ] || mapfile -t names < <(python3 "$here/record_dist.py" --list | cut -f1)
  for n in "${names[@]}"; do
    timeout "${LIMIT:-420}" torchrun --standalone --nproc_per_node 2 "$here/record_dist.py" "$n" "$OUT/corpus" > "$OUT/corpus/$n.log" 2>&1
    tail -1 "$OUT/corpus/$n.log"
  done
  ;;
replay)
  for t in "$@"; do
    for m in native expandable async; do
      python3 "$here/torch_replay.py" "$t" $m 2>>"$OUT/corpus/replay.err" | tee -a "$OUT/corpus/torch.jsonl"
    done
  done
  ;;
esac
