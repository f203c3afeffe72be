#!/usr/bin/env bash
# The thirty-ninth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch39.py
# and batch39_b.py),
# longest first: $OUT/new39.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (anynet_stereo_serve uploads every request's stereo pairs, fairmot_track_serve
# every frame batch and rangenet_lidar_serve every request's scans on a side stream, one ahead; the others are
# single-stream). Several are small: anynet_stereo_serve, fairmot_track_serve and rangenet_lidar_serve peak under
# 1.2 GB in the meta run.
# The helper that wrote them checked each one named below whole, at its real sizes, on the meta device (its meta
# runner: every "cuda" device mapped to "meta", op outputs counted, peak live bytes tracked) and ran the CPU smoke
# run (RECORD_SMOKE=1) on all eight. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new39.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# dcp_registration_train 6.14 GB (fp32), 324k (~0.58M events) (161k and 20.66 GB with 80 steps of clouds up to
# 2048 points capped at 16k points a step; 160 steps of 512-1536 points capped at 5120 now); e2vid_event_train
# 4.71 GB, 320k (~0.58M events) (157k with 24 sequences, 48 now); rangenet_lidar_serve 1.13 GB, 317k (~0.57M
# events) (123k with 700 requests, 1800 now); bottomup_pose_train 4.15 GB, 315k (~0.57M events) (53k with 120
# steps, 720 now); anynet_stereo_serve 0.58 GB, 312k (~0.56M events) (46k with 150 requests, 1000 now);
# deepsdf_autodecoder 2.44 GB (fp32), 311k (~0.56M events) (97k with 330 steps, 1100 now);
# fairmot_track_serve 0.43 GB, 310k (~0.56M events) (368k with 7 sessions of 40-160 frames, 6 of 40-130 now);
# nlspn_depth_train 4.29 GB, 306k (~0.55M events) (103k with 100 steps, 300 now).
# All eight printed META OK at these sizes.
exec bash "$(dirname "$0")/record_batch.sh" new39 dcp_registration_train e2vid_event_train rangenet_lidar_serve \
  bottomup_pose_train anynet_stereo_serve deepsdf_autodecoder \
  fairmot_track_serve nlspn_depth_train
