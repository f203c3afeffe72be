#!/usr/bin/env bash
# The fifteenth recording of issue 8 (held out, written blind), longest first: $OUT/new15.tar.gz.part00, part01, ...
# Every workload was sized for at most about 30 GB reserved, so that four share one H200:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new15.sh
# Estimates (peak reserved from sizes; events from CPU smoke counts at the real layer counts, scripts/traces/smoke_cpu.py;
# seconds alone on an H200, guessed):
# pegasus_summarize 16 GB, 1.5M, 80 s; dreamer_train 3 GB, 1.4M, 70 s; controlnet_train 6 GB, 1.15M, 60 s;
# clap_contrastive 12 GB, 1.1M (2 streams), 60 s; kge_rotate 13 GB, 1.15M, 40 s; ocr_train 7 GB, 1.1M (2 streams), 50 s;
# tts_serve 4 GB, 0.7M (3 streams), 40 s; video_action_serve 6 GB, 0.6M (2 streams), 40 s.
exec bash "$(dirname "$0")/record_batch.sh" new15 pegasus_summarize dreamer_train controlnet_train clap_contrastive kge_rotate ocr_train tts_serve video_action_serve
