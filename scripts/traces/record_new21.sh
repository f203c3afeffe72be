#!/usr/bin/env bash
# The twenty-first recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch21.py
# and batch21_b.py),
# longest first: $OUT/new21.tar.gz.part00, part01, ...
# Every workload was sized for at most about 5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.6-0.8M events (sam2_video_track has a frame-prefetch stream; the others are single-stream):
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new21.sh
# Estimates (peak requested from sizes; events from CPU smoke counts scaled to the real step, frame and iteration
# counts, scripts/traces/smoke_cpu.py; seconds alone on an H200, guessed from FLOPs, syncs and Python-side work;
# none of them measured on a GPU):
# sam2_video_track 1.5 GB (2 streams), 0.67M, 25 s; sparse_conv_seg 5 GB, 0.67M, 20 s;
# shampoo_train 5 GB, 0.62M (up to 0.86M if the Newton iterations run to their cap of 40), 15 s;
# gp_bayesopt 0.1 GB, 0.65M, 15 s (fp64, many small kernels); style_transfer_lbfgs 3 GB, 0.64M (the line search's
# evaluations vary), 15 s; h2o_kv_evict 2 GB, 0.66M, 12 s; tgn_temporal 0.5 GB, 0.77M, 10 s; nca_grow 1 GB, 0.63M,
# 10 s.
exec bash "$(dirname "$0")/record_batch.sh" new21 sam2_video_track sparse_conv_seg shampoo_train gp_bayesopt style_transfer_lbfgs h2o_kv_evict tgn_temporal nca_grow
