#!/usr/bin/env bash
# The twenty-sixth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch26.py
# and batch26_b.py),
# longest first: $OUT/new26.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.55M events (deepvo_train uploads on a side stream; the other five are single-stream). Six,
# not eight: two more (a scheduled-sampling NMT and a motion-diffusion sampler) were left out, not checked at
# their real sizes in time.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new26.sh
# Estimates (peak requested from sizes and from a whole run at the real sizes on the meta device, which counts fp32
# where the GPU run autocasts to bf16 and takes SDPA's math path; events from op outputs counted in that meta run,
# "cuda" mapped to "meta", scaled where a step or request count was changed after it; seconds alone on an H200,
# guessed from FLOPs, kernel launches and Python-side work; none of them measured on a GPU):
# text2sql_constrained 1 GB (0.3 GB of bf16 weights, beam caches of 32 rows), 0.51M, 30 s (launch-bound: about
# 1550 decode steps of 8 layers with 16 cache reorders each); pets_mbrl 0.1 GB, 0.52M, 25 s (launch-bound: 110
# environment steps of 5 CEM iterations over a 15-step horizon); cav_mae_pretrain 5 GB (bf16 autocast), 0.54M,
# 20 s; mtl_dense_gradnorm 5 GB (fp32, double backward), 0.55M, 20 s; deepvo_train 3.5 GB, 0.54M, 20 s;
# pcn_completion 3 GB (fp32), 0.52M, 20 s.
exec bash "$(dirname "$0")/record_batch.sh" new26 text2sql_constrained pets_mbrl cav_mae_pretrain mtl_dense_gradnorm deepvo_train pcn_completion
