#!/usr/bin/env bash
# The twenty-fourth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch24.py
# and batch24_b.py),
# longest first: $OUT/new24.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.6-0.65M events (all single-stream):
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new24.sh
# Estimates (peak requested from sizes and from a whole run at the real sizes on the meta device, which counts fp32
# where the GPU run autocasts to bf16; events from op outputs counted in that meta run, scripts/traces/smoke_cpu.py's
# counting with "cuda" mapped to "meta"; seconds alone on an H200, guessed from FLOPs, kernel launches and
# Python-side work; none of them measured on a GPU):
# retro_train 6 GB (4 neighbour tokens a decoder token; 8.5 GB counted in fp32 on the meta device), 0.63M, 20 s; gmp_prune_bert 5 GB (plus a 1 GB transient of the global kthvalue), 0.63M, 20 s; clip4clip_train
# 3 GB, 0.62M, 20 s; convtasnet_sep 5 GB (fp32), 0.65M, 15 s; slot_attention 2 GB, 0.63M, 15 s; rainbow_dqn 2.9 GB (the
# 2.8 GB frame ring), 0.65M, 15 s; latent_ode 0.1 GB, 0.63M, 12 s (launch-bound: thousands of tiny MLP steps a
# step); tabddpm_train 0.2 GB, 0.61M, 10 s.
exec bash "$(dirname "$0")/record_batch.sh" new24 retro_train gmp_prune_bert clip4clip_train convtasnet_sep slot_attention rainbow_dqn latent_ode tabddpm_train
