#!/usr/bin/env bash
# The seventeenth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch17.py,
# registered into record.py's list), longest first: $OUT/new17.tar.gz.part00, part01, ...
# Every workload was sized for at most about 25 GB reserved, so that four share one H200:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new17.sh
# Estimates (peak reserved from sizes; events from CPU smoke counts at the real layer counts, scaled to the real
# step counts, scripts/traces/smoke_cpu.py; seconds alone on an H200, guessed from FLOPs and Python-side work):
# donut_parse 4 GB, 1.3M, 40 s; chronos_forecast 3 GB, 1.3M, 35 s; llama_topp_sample 12 GB, 1.0M, 30 s;
# afno_weather 14 GB, 1.45M, 30 s; ft_transformer_tab 2 GB, 1.4M, 30 s; audio_mae 8 GB, 1.35M (2 streams), 25 s;
# pose_multi 8 GB, 1.0M (2 streams), 25 s; pinn_train 6 GB, 1.6M, 20 s.
exec bash "$(dirname "$0")/record_batch.sh" new17 donut_parse chronos_forecast llama_topp_sample afno_weather ft_transformer_tab audio_mae pose_multi pinn_train
