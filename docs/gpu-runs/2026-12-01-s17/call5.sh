#!/usr/bin/env bash
# Session 17, call 5: qlora_train of the twenty-second batch alone, after its quantization fix (it failed in call 4
# before any figure of it existed).
MODES_DEADLINE=230 CALL_BUDGET=250 REC_JOBS=1 REC_LIMIT=140 REC_STEP=160 REPLAY_STEP=60 \
  bash scripts/gpu/batch_call.sh new22b qlora_train
