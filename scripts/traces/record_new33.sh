#!/usr/bin/env bash
# The thirty-third recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch33.py
# and batch33_b.py),
# longest first: $OUT/new33.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (impala_vtrace uploads every learner batch and deepar_sample_serve every request
# batch's histories on a side stream; the others are single-stream). Several are small: mappo_smac_train (fp32),
# nhits_horizon_sweep (fp32) and deepar_sample_serve peak under 1 GB in the meta run.
# The helper that wrote them checked each one named below whole, at its real sizes, on the meta device (its meta
# runner: every "cuda" device mapped to "meta", op outputs counted, peak live bytes tracked) and ran the CPU smoke
# run (RECORD_SMOKE=1) on all eight. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new33.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16 and takes SDPA's math
# path, so the GPU's peak requested is lower; events from op outputs; none of them measured on a GPU):
# impala_vtrace 2.03 GB (fp32), 328k (~0.59M events) (about 390 a step measured over a 10-step run; 800 steps);
# deepar_sample_serve 0.18 GB, 323k (~0.58M events) (272k with 26 batches, 31 now); nhits_horizon_sweep 0.30 GB
# (fp32), 323k (~0.58M events) (about 150 a step measured over a 20-step run; 8 runs of 280 steps);
# gru4rec_session_train 1.03 GB (fp32), 318k (~0.57M events) (389k with 10 epochs, 8 now); tabpfn_icl_serve
# 1.28 GB, 318k (~0.57M events) (about 435 a request measured over 20 requests; 1300 requests then, 740 now);
# mappo_smac_train 0.64 GB (fp32), 315k (~0.57M events) (277k with 14 iterations, 16 now); xlnet_perm_train
# 5.37 GB, 312k (~0.56M events) (about 1590 a step measured over a 10-step run; 300 steps then, 200 now);
# ecapa_spkver_train 2.78 GB, 310k (~0.56M events) (about 1130 a step measured over a 10-step run; 520 steps then,
# 280 now).
# All eight printed META OK at these sizes.
exec bash "$(dirname "$0")/record_batch.sh" new33 impala_vtrace deepar_sample_serve nhits_horizon_sweep \
  gru4rec_session_train tabpfn_icl_serve mappo_smac_train \
  xlnet_perm_train ecapa_spkver_train
