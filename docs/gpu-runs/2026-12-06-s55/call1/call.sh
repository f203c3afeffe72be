#!/usr/bin/env bash
# Session 55's one call: finish batches 112 and 113 (the 9 PyTorch replays, the 26 expanse modes on cuda
# that the 54th session's short call did not reach, and the live runs on expanse, then native second runs).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
S=$(date +%s); el() { echo "[$(($(date +%s) - S)) s] $*"; }
C=docs/gpu-runs/2026-12-06-s54/call1/corpus
N="waste_sort_fusion_seg_train texture_stylegan_train bin_fill_scenario_sample ewaste_board_vit_finetune esports_winprob_transformer_train dungeon_maskgit_sample arcade_frame_ppo_train lobby_cheat_gnn_finetune replay_highlight_serve bin_fill_lstm_train hsi_ejector_sort_serve collection_route_pointer_train hopper_lidar_load_serve toxic_chat_bytecnn_serve player_mmr_gru_train landfill_gas_pinn_train"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
EXPANSE_CUDA_TESTS=1 timeout 60 .device-bin/gpu-tests --include-ignored --test-threads=1 2>&1 | grep "test result"
el "gpu tests"
mkdir -p $OUT/rep
# 1. the nine missing PyTorch replays, one process each, all at once
for tm in landfill_gas_pinn_train:native landfill_gas_pinn_train:expandable landfill_gas_pinn_train:async \
  hopper_lidar_load_serve:expandable hopper_lidar_load_serve:async player_mmr_gru_train:expandable \
  player_mmr_gru_train:async toxic_chat_bytecnn_serve:expandable toxic_chat_bytecnn_serve:async; do
  t=${tm%%:*}; m=${tm##*:}
  timeout 300 python3 scripts/traces/torch_replay.py $C/$t.trace.csv.gz $m > $OUT/rep/$t.$m.jsonl 2> $OUT/rep/$t.$m.err &
done
# 2. expanse's modes on cuda not reached (same four configurations, same order)
( B="expandable_segments:True expandable_segments:True,move_budget:0"
  for c in $B; do timeout 60 .device-bin/expanse replay $C/bin_fill_lstm_train.trace.csv.gz --backend cuda --conf $c --json; done
  for t in hsi_ejector_sort_serve collection_route_pointer_train hopper_lidar_load_serve toxic_chat_bytecnn_serve player_mmr_gru_train landfill_gas_pinn_train; do
    for c in expandable_segments:False expandable_segments:True,pytorch_compat:True $B; do
      timeout 60 .device-bin/expanse replay $C/$t.trace.csv.gz --backend cuda --conf $c --json; done; done
) > $OUT/modes2.jsonl 2>&1 &
# 3. live runs on expanse (default configuration), 6 at a time
printf '%s\n' $N | timeout 330 xargs -P 6 -I{} bash -c 'timeout 300 python3 scripts/gpu/run_workload.py "$0" --mode expanse 2>/dev/null | tail -1' {} > $OUT/live-expanse.jsonl
el "live expanse: $(wc -l < $OUT/live-expanse.jsonl) lines"
wait
el "replays and modes: $(cat $OUT/rep/*.jsonl | wc -l) replay lines, $(wc -l < $OUT/modes2.jsonl) modes lines"
cat $OUT/rep/*.jsonl > $OUT/torch-missing.jsonl
tail -n 3 $OUT/rep/*.err | cut -c1-200 > $OUT/replay-missing.err; rm -rf $OUT/rep
# 4. native second runs while time is left
left=$((560 - ($(date +%s) - S)))
if [ $left -gt 60 ]; then
  printf '%s\n' $N | timeout $left xargs -P 8 -I{} bash -c 'timeout '$((left-5))' python3 scripts/gpu/run_workload.py "$0" --mode native 2>/dev/null | tail -1' {} > $OUT/live-native.jsonl
fi
el "native: $(wc -l < $OUT/live-native.jsonl 2>/dev/null) lines"
ls -la $OUT
