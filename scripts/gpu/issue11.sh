#!/usr/bin/env bash
# Issue 11 on the two-H200 machine, in one command from the repository root
# (prebuilt .device-bin/libexpanse.so; PyTorch, nvcc, transformers present;
# no network), within about 8 minutes:
#
#     bash scripts/gpu/issue11.sh
#
# 1. builds python/expanse_ext.cpp once (torch.utils.cpp_extension);
# 2. the compatibility table (scripts/gpu/compat_table.py): PyTorch native
#    and PyTorch expandable, then expanse (its defaults) and every
#    row in a process of its own, crashes rerun under gdb for native
#    stacks; plus expanse's default (graph capture refused) for the graph row;
# 3. GPT-2 small under torch.compile(mode="reduce-overhead"), native
#    against expanse, losses within 1e-3 (scripts/gpu/compile_gpt2.py);
# 4. the record_stream test with the hook on and off (the control);
# 5. DDP and FSDP2 of GPT-2 small on both GPUs for all three allocators
#    (scripts/gpu/dist_gpt2.py under torchrun), losses against native; and
#    python/test_ext_host.py against this machine's PyTorch;
# 6. $OUT/issue11.md, the summary with the README's table; $OUT/issue11.log,
#    this script's log; $OUT/issue11-all.tar.gz, every log and JSON.
#
# Jobs on GPU 0 and GPU 1 run side by side (CUDA_VISIBLE_DEVICES); each
# has a time limit, and the whole stops at DEADLINE seconds (default 450).
# The compat rows on GPU 0 share it between two processes at a time; the
# one row that reads the device's free memory (empty_cache) tries three
# times before it calls a shortfall.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-out}
DEADLINE=${DEADLINE:-450}
W=$(mktemp -d /tmp/issue11.XXXX)
mkdir -p "$OUT"
START=$(date +%s)
LOG=$OUT/issue11.log
exec > >(tee "$LOG") 2>&1

export EXPANSE_LIB=$ROOT/.device-bin/libexpanse.so
[ -f "$EXPANSE_LIB" ] || export EXPANSE_LIB=$ROOT/target/release/libexpanse.so
export EXPANSE_EXT_DIR=$W/ext
export PYTHONFAULTHANDLER=1
export TORCH_SHOW_CPP_STACKTRACES=1
export TOKENIZERS_PARALLELISM=false
PY=python3
elapsed() { echo $(( $(date +%s) - START )); }
left() { local l=$(( DEADLINE - $(elapsed) )); [ $l -gt 5 ] && echo $l || echo 5; }
say() { echo "[$(elapsed) s] $*"; }

say "machine: $(nvidia-smi --query-gpu=name --format=csv,noheader | paste -sd, -)"
say "torch: $($PY -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.device_count(), "GPUs")' 2>&1 | tail -1)"
say "gdb: $(command -v gdb || echo none); libexpanse: $EXPANSE_LIB"

# 1. The extension (other jobs that do not need it start at once).
( $PY -c "import sys; sys.path.insert(0, 'python'); import expanse_compat; print(expanse_compat.build_extension())" \
    > "$W/ext-build.log" 2>&1; echo "rc $?" >> "$W/ext-build.log" ) &
EXT=$!

COMPAT=(scripts/gpu/compat_table.py --timeout 120 --skip "DDP,FSDP2" --backtraces)
# GPU 0: PyTorch's own allocators.
( export CUDA_VISIBLE_DEVICES=0 OUT=$W/compat-pt
  timeout 240 $PY "${COMPAT[@]}" --allocators native,expandable > "$W/compat-pt.txt" 2>&1 ) &
PT=$!
# GPU 1: GPT-2 under reduce-overhead on PyTorch native, then (once the
# extension is built) on expanse.
( export CUDA_VISIBLE_DEVICES=1
  timeout 200 $PY scripts/gpu/compile_gpt2.py --mode native --steps 12 --batch 4 --seq 256 \
      --out "$W/compile-native.json" > "$W/compile-native.txt" 2>&1
  echo "rc $?" >> "$W/compile-native.txt"
  until grep -q "^rc " "$W/ext-build.log" 2>/dev/null; do sleep 1; done
  timeout "$(left)" $PY scripts/gpu/compile_gpt2.py --mode expanse --steps 12 --batch 4 --seq 256 \
      --out "$W/compile-expanse.json" > "$W/compile-expanse.txt" 2>&1
  echo "rc $?" >> "$W/compile-expanse.txt" ) &
CE=$!

wait $EXT
say "extension: $(tail -2 "$W/ext-build.log" | paste -sd' ' -)"

# GPU 0, beside PyTorch's columns: expanse, one row per process.
( export CUDA_VISIBLE_DEVICES=0 OUT=$W/compat-expanse
  timeout "$(left)" $PY "${COMPAT[@]}" --allocators expanse --single expanse \
      > "$W/compat-expanse.txt" 2>&1
  # EXPANSE_GRAPHS=0: graph capture refused with a message.
  export OUT=$W/compat-guard EXPANSE_GRAPHS=0
  timeout 60 $PY scripts/gpu/compat_table.py --timeout 50 --only "torch.cuda.graph" --allocators expanse \
      > "$W/compat-guard.txt" 2>&1
  # record_stream, hook on and off.
  for h in on off; do
      timeout 60 $PY scripts/gpu/record_stream_test.py --hook $h > "$W/rs-$h.txt" 2>&1
      echo "rc $?" >> "$W/rs-$h.txt"
  done ) &
EX=$!
wait $CE
say "GPT-2 reduce-overhead done"
$PY scripts/gpu/compile_gpt2.py --compare "$W/compile-native.json" "$W/compile-expanse.json" > "$W/compile-compare.txt" 2>&1
cat "$W/compile-compare.txt"

# 5. Both GPUs (GPU 1 is free now; GPU 0 may still run compat rows, which
#    only costs time): DDP and FSDP2, the three allocators side by side.
port=29510
DIST=()
for a in native expandable expanse; do
    ( timeout "$(left)" $PY -m torch.distributed.run --nproc_per_node 2 --master_port $port \
          scripts/gpu/dist_gpt2.py --alloc $a --out "$W/dist-$a.json" > "$W/dist-$a.txt" 2>&1
      echo "rc $?" >> "$W/dist-$a.txt" ) &
    DIST+=($!)
    port=$((port + 1))
done
wait $PT
say "PyTorch columns done"
wait $EX
say "expanse column and record_stream done"
wait "${DIST[@]}"
say "DDP / FSDP2 done"
for a in expandable expanse; do
    $PY scripts/gpu/dist_gpt2.py --compare "$W/dist-native.json" "$W/dist-$a.json" > "$W/dist-compare-$a.txt" 2>&1
    echo "native vs $a:"; cat "$W/dist-compare-$a.txt"
done
# The extension's host test against this machine's PyTorch (no GPU used).
timeout 60 $PY python/test_ext_host.py "$EXPANSE_LIB" > "$W/ext-host-test.txt" 2>&1
say "extension host test: $(tail -1 "$W/ext-host-test.txt")"

# 6. Summary and archive.
$PY scripts/gpu/issue11_summary.py "$W" > "$OUT/issue11.md" 2>&1
cat "$OUT/issue11.md"
tar -C "$W" --exclude ext -czf "$OUT/issue11-all.tar.gz" .
say "done: $OUT/issue11.md, $OUT/issue11-all.tar.gz, $OUT/issue11.log"
