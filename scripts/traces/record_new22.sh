#!/usr/bin/env bash
# The twenty-second recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch22.py
# and batch22_b.py),
# longest first: $OUT/new22.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.6-0.7M events (demucs_separate has a track-upload stream; the others are single-stream):
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new22.sh
# Estimates (peak requested from sizes; events from CPU smoke counts scaled to the real step, request, segment and
# layer counts, scripts/traces/smoke_cpu.py; seconds alone on an H200, guessed from FLOPs, syncs and Python-side
# work; none of them measured on a GPU):
# deformable_detr_train 6 GB, 0.65M, 25 s (host-side Hungarian matching every decoder layer);
# qlora_train 5 GB, 0.69M, 25 s (the 0.8B model built on the host first); demucs_separate 1.5 GB (2 streams),
# 0.67M, 20 s; knn_lm_datastore 7 GB (the datastore's last doubling to 2M keys), 0.63M, 15 s;
# mmdit_rectflow_sample 2.5 GB, 0.66M, 15 s; medusa_decode 1 GB, 0.64M, 10 s; tome_vit_serve 3 GB, 0.61M, 10 s;
# ipa_structure_train 3 GB, 0.66M, 10 s.
exec bash "$(dirname "$0")/record_batch.sh" new22 deformable_detr_train qlora_train demucs_separate knn_lm_datastore mmdit_rectflow_sample medusa_decode tome_vit_serve ipa_structure_train
