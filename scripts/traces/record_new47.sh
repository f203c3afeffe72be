#!/usr/bin/env bash
# The forty-seventh recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch47.py
# and batch47_b.py: classical machine learning and data processing on the GPU, written in torch alone),
# longest first: $OUT/new47.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (kmeans_ksweep_fit's mini-batch phase uploads fp16 feature batches from reused
# pinned host buffers on a side stream, one batch ahead, waited on by event and record_stream'ed; rsvd_pca_stream
# pages every layer's activation rows in as chunks the same way, one chunk ahead, pass after pass; the others are
# single-stream). Several are small: rsvd_pca_stream peaks near 0.34 GB, gbdt_hist_train and tsne_exact_embed near
# 1 GB and als_implicit_cg and linear_cv_grid under 2 GB in the meta run.
# The helper that wrote them checked each one on the meta device (its meta runner, kept at /tmp/b47/meta_run.py, a
# copy of batch 46's /work/notes/meta_run.py: every "cuda" device mapped to "meta", op outputs that alias no input
# counted, peak live bytes tracked as the sum of live meta storages freed by weakref finalizers, autocast a no-op
# so fp32 sizes are counted, SDPA on a math path; all eight printed META OK, all eight whole at their final sizes)
# and ran the CPU smoke run (RECORD_SMOKE=1) on all eight at their final sizes. Events are about 1.8x the op
# outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new47.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# gbdt_hist_train 0.95 GB, 318,448 (~0.57M events);
# rsvd_pca_stream 0.34 GB, 319,885 (~0.58M events);
# tsne_exact_embed 1.02 GB, 331,849 (~0.60M events);
# als_implicit_cg 1.43 GB, 308,163 (~0.55M events);
# kmeans_ksweep_fit 3.22 GB, 339,122 (~0.61M events);
# featpipe_deepfm_daily 5.61 GB (fp32), 317,717 (~0.57M events);
# linear_cv_grid 1.77 GB, 302,378 (~0.54M events);
# gmm_fullcov_em 3.39 GB, 291,846 (~0.53M events).
# All eight were run whole at their final sizes, most after a first whole run that led to a resize:
# gbdt_hist_train (424,559 with 300/300/120 boosting rounds; 225/225/90 now), tsne_exact_embed (365,811 with
# 600-1000 iterations; 520-870 now), kmeans_ksweep_fit (178,562 with 12-40 Lloyd iterations and 1,400 mini-batches;
# 24-64 and 2,400 now), gmm_fullcov_em (261,589 with 25-60 EM iterations; 30-74 now), rsvd_pca_stream (23,959 as
# first written over 3 stores; then every layer of a 24- and a 32-layer model, cut off past 507k; 393,995 at every
# other layer with 120k-500k rows; 100k-400k rows now), featpipe_deepfm_daily (243,525 with 500-800 steps a day;
# 750-1050 now), linear_cv_grid (39,106 as first written with 3 datasets and single 5-fold CV; then 4 datasets,
# 3 repeats, larger grids: 302,414 but peaking at 8.43 GB from fp64 copies of the data made twice; each made once,
# 5.24 GB; then each dataset capped at 128M values, which bounds the Newton path's Gram-matrix FLOPs (a
# 391k x 1024 binary table drawn would have cost about 1.9 PFLOP of fp32 matmuls): the same 302,378, 1.77 GB),
# als_implicit_cg (28,154 with 1M-2M interaction chunks, 4 configurations, 8-15 iterations;
# 128k-512k, 6 and 12-20 now). The machine's two cores were shared (up to three meta runs at once, besides other
# work); the final runs took 1-4 minutes each.
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of Adam ops is lower (featpipe_deepfm_daily and linear_cv_grid use Adam; the others have no
# optimizer).
exec bash "$(dirname "$0")/record_batch.sh" new47 gbdt_hist_train rsvd_pca_stream tsne_exact_embed \
  als_implicit_cg kmeans_ksweep_fit \
  featpipe_deepfm_daily linear_cv_grid gmm_fullcov_em
