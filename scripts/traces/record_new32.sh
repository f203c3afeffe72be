#!/usr/bin/env bash
# The thirty-second recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch32.py
# and batch32_b.py),
# longest first: $OUT/new32.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (nmt_lensort_serve uploads every batch's source ids on a side stream; the others are
# single-stream). Several are small: code_beam_complete, convlstm_video_predict (fp32) and lightgcn_subgraph_train
# (fp32) peak under 1 GB in the meta run.
# The helper that wrote them checked each one named below whole, at its real sizes, on the meta device (its meta
# runner: every "cuda" device mapped to "meta", op outputs counted, peak live bytes tracked) and ran the CPU smoke
# run (RECORD_SMOKE=1) on all eight. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new32.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16 and takes SDPA's math
# path, so the GPU's peak requested is lower; events from op outputs; none of them measured on a GPU):
# nmt_lensort_serve 0.09 GB, 326k (~0.59M events) (402k with 8 windows, 6 now; its first version, 12 windows of
# 48-200 sentences up to 150 tokens, stopped unfinished after 6 minutes, far over range); cyclegan_varres 3.64 GB
# (fp32), 323k (~0.58M events) (400k with 130 steps, 105 now); convlstm_video_predict 0.97 GB (fp32), 321k (~0.58M
# events) (236k and 1.59 GB with 100 steps of 8-24 sequences, 135 steps of 8-14 now); nowcast_unet_train 1.92 GB,
# 315k (~0.57M events) (about 490 a step measured over a partial run; 420 steps then, 640 now); code_beam_complete
# 0.94 GB, 312k (~0.56M events) (458k with 26 batches, 18 now); lightgcn_subgraph_train 0.45 GB (fp32), 309k (~0.56M
# events) (about 91 op outputs a step measured over a partial run; 3400 steps); arcface_ohem_train 4.61 GB, 301k
# (~0.54M events) (about 510 a step measured over a partial run; 600 steps); rm_pairwise_train 2.63 GB, 293k (~0.53M
# events) (244k with 150 steps, 180 now).
# All eight printed META OK at these sizes.
exec bash "$(dirname "$0")/record_batch.sh" new32 nmt_lensort_serve cyclegan_varres convlstm_video_predict \
  nowcast_unet_train code_beam_complete lightgcn_subgraph_train \
  arcface_ohem_train rm_pairwise_train
