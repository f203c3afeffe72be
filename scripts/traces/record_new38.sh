#!/usr/bin/env bash
# The thirty-eighth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch38.py
# and batch38_b.py),
# longest first: $OUT/new38.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (moco_queue_train uploads every uint8 batch one step ahead and dagmm_anomaly_serve
# every request's rows on a side stream; the others are single-stream). Several are small: dagmm_anomaly_serve
# (fp32), dnc_copy_curriculum (fp32) and cgcnn_crystal_train (fp32) peak under 1 GB in the meta run.
# The helper that wrote them checked each one named below whole, at its real sizes, on the meta device (its meta
# runner: every "cuda" device mapped to "meta", op outputs counted, peak live bytes tracked) and ran the CPU smoke
# run (RECORD_SMOKE=1) on all eight. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new38.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16 and takes SDPA's math
# path, so the GPU's peak requested is lower; events from op outputs; none of them measured on a GPU):
# dagmm_anomaly_serve 0.09 GB (fp32), 324k (~0.58M events) (486k with 600 training steps a dataset and 1100
# requests, 400 and 720 now); snn_dvs_train 3.87 GB (fp32), 318k (~0.57M events) (398k and 20.3 GB with 140 steps of
# 8-24 clips of 8-24 time steps at 64-96 px; 165 steps of 8-16 clips of 6-16 time steps at 48-64 px now);
# moco_queue_train 4.60 GB, 313k (~0.56M events) (162k and 23.6 GB with 300 steps of 96-256 images and a stride-1
# stem; 580 steps of 96-192 images, a stride-2 stem now); cgcnn_crystal_train 0.87 GB (fp32), 312k (~0.56M events)
# (139k with 750 steps, 1700 now); sgns_word2vec_train 4.51 GB (fp32), 306k (~0.55M events) (102k with 3000 steps,
# 9000 now); transinr_hypernet_serve 2.07 GB, 305k (~0.55M events) (38k with 300 requests, 2450 now);
# dnc_copy_curriculum 0.39 GB (fp32), 301k (~0.54M events) (856k with 70 steps and lengths up to 40, 44 steps up to
# 20 now); fixmatch_ema_train 5.69 GB, 293k (~0.53M events) (124k and 11.0 GB with 260 steps of a WRN-28-4; 620
# steps of a WRN-28-2 now).
# All eight printed META OK at these sizes.
exec bash "$(dirname "$0")/record_batch.sh" new38 dagmm_anomaly_serve snn_dvs_train moco_queue_train \
  cgcnn_crystal_train sgns_word2vec_train transinr_hypernet_serve \
  dnc_copy_curriculum fixmatch_ema_train
