#!/usr/bin/env bash
# The fourteenth recording of issue 8 (held out, written blind), longest first: $OUT/new14.tar.gz.part00, part01, ...
# Every workload was sized for at most about 30 GB reserved, so that four share one H200:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new14.sh
# Estimates (peak reserved from sizes; events from CPU smoke counts at the real layer counts, scripts/traces/smoke_cpu.py):
# segformer_amp 10 GB, 0.85M; conformer_rnnt 15 GB, 1.2M; multistream_server 12 GB, 1.1M (5 streams);
# sliding_window_3d 12 GB, 0.4M (2 streams); rag_generate 8 GB, 1.1M (2 streams); point_mae 8 GB, 1.0M;
# bert4rec_train 6 GB, 0.8M; tft_forecast 2 GB, 1.3M.
exec bash "$(dirname "$0")/record_batch.sh" new14 segformer_amp conformer_rnnt multistream_server sliding_window_3d rag_generate point_mae bert4rec_train tft_forecast
