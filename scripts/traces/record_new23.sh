#!/usr/bin/env bash
# The twenty-third recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch23.py
# and batch23_b.py),
# longest first: $OUT/new23.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.6-0.65M events (all single-stream):
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new23.sh
# Estimates (peak requested from sizes; events from CPU smoke counts scaled to the real step, request, chunk and
# layer counts, scripts/traces/smoke_cpu.py; seconds alone on an H200, guessed from FLOPs, kernel launches and
# Python-side work; none of them measured on a GPU):
# diarize_serve 1 GB, 0.65M, 20 s (320 eigvalsh/eigh of up to 1919 x 1919, their cuSOLVER time the least sure);
# chunked_ce_sft 5.5 GB, 0.63M, 20 s (the tied head's gradient accumulated in fp32); revvit_train 3 GB, 0.61M,
# 15 s; llada_sample 5 GB (a float64 softmax over 1536 x 126464), 0.63M, 15 s; adam8bit_mlm 7.5 GB (the MLM
# logits and their fp32 log-softmax), 0.62M, 15 s; splade_train 7 GB, 0.62M, 10 s; glow_train 4 GB, 0.62M, 10 s;
# progan_train 1 GB, 0.6M, 10 s.
exec bash "$(dirname "$0")/record_batch.sh" new23 diarize_serve chunked_ce_sft revvit_train llada_sample adam8bit_mlm splade_train glow_train progan_train
