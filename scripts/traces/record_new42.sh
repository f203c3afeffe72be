#!/usr/bin/env bash
# The forty-second recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch42.py
# and batch42_b.py),
# longest first: $OUT/new42.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (model_swap_serve uploads its models' weights from pinned host memory on a side
# stream, the next request's model prefetched; the others are single-stream). model_swap_serve is small: it peaks
# under 2 GB in the meta run.
# The helper that wrote them checked each one named below whole, at its real sizes, on the meta device (its meta
# runner: every "cuda" device mapped to "meta", op outputs counted, peak live bytes tracked) and ran the CPU smoke
# run (RECORD_SMOKE=1) on all eight. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new42.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16 or fp16, so the GPU's
# peak requested is lower; events from op outputs; none of them measured on a GPU): pipe_1f1b_train 6.20 GB, 347k
# (~0.63M events) (358k and 14.27 GB with 46 steps of micro-batches capped at 4096 tokens of up to 1024; 43 steps,
# 2048 tokens of up to 768 now); ckpt_budget_fp16 4.95 GB, 342k (~0.62M events) (251k and 13.42 GB with 110 steps
# capped at 16384 tokens and a 2 GB budget; 150 steps, 4096 tokens, 1 GB now); pbt_vit_population 4.55 GB (fp32),
# 331k (~0.60M events); stack_grow_bert 4.70 GB, 322k (~0.58M events) (181k and 12.29 GB with 90/90/100 steps
# capped at 12288 tokens; 150/150/190 steps capped at 4096 now); lamb_mixer_bsramp 6.50 GB, 319k (~0.57M events)
# (267k and 12.79 GB with micro-batches of 32-256 and a ramp to 4096; 16-128 and a ramp to 2560 now);
# adafactor_lm_eval 4.84 GB, 316k (~0.57M events) (423k and 19.37 GB with 160 steps capped at 12288 tokens; 120
# steps capped at 3072 now); slim_prune_vgg 3.18 GB, 309k (~0.56M events) (96k with 6 rounds of 70 steps; 230 steps
# a round now); model_swap_serve 1.69 GB, 282k (~0.51M events) (150k with 1400 requests; 2800 now).
# All eight printed META OK at these sizes.
exec bash "$(dirname "$0")/record_batch.sh" new42 pipe_1f1b_train ckpt_budget_fp16 pbt_vit_population \
  stack_grow_bert lamb_mixer_bsramp adafactor_lm_eval \
  slim_prune_vgg model_swap_serve
