#!/usr/bin/env bash
# The twenty-ninth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch29.py
# and batch29_b.py),
# longest first: $OUT/new29.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (ts_anomaly_serve uploads every tick's windows on a side stream; the others are
# single-stream). cl4srec_train, ts_anomaly_serve and layoutlm_funsd run under bf16 autocast, kivi_kvquant_gen holds
# its weights in bf16; tabnet_train, bilstm_crf_ner, l2o_lstm_meta and graph_wavenet_traffic run in fp32. Three are
# small: bilstm_crf_ner and tabnet_train peak under 1 GB in the meta run, l2o_lstm_meta at about 1.3 GB.
# The helper that wrote them checked each one named below whole, at its real sizes, on the meta device (its meta
# runner: every "cuda" device mapped to "meta", op outputs counted, peak live bytes tracked) and ran the CPU smoke
# run (RECORD_SMOKE=1) on all eight. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new29.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16 and takes SDPA's math
# path, so the GPU's peak requested is lower; events from op outputs; none of them measured on a GPU):
# ts_anomaly_serve 5.2 GB meta (the math path's 4 x 256 x 256 attention matrices of 512-window ticks), 366k op
# outputs (~0.66M events); cl4srec_train 7.0 GB, 337k (~0.61M); l2o_lstm_meta 1.25 GB (fp32), 330k (~0.59M; 380k
# counted with 16 tasks, 14 now); graph_wavenet_traffic 2.0 GB (fp32), 329k (~0.59M; 268k counted with 260 steps,
# 320 now); bilstm_crf_ner 0.18 GB (fp32), 326k (~0.59M; 402k counted with 100 steps, 80 now, and a first count of
# 220 steps of sentences up to 60 words was stopped as far too long); tabnet_train 0.64 GB (fp32), 325k (~0.59M; a
# first count with 260 steps of up to 8192 rows was stopped as far too long, 150 steps of up to 4096 now);
# kivi_kvquant_gen 4.6 GB, 324k (~0.58M; 587k and 8.1 GB counted with 9 rounds of up to 16 x 1800-token prompts and
# 48-128 new tokens, 6 rounds of up to 12 x 1536 and 40-88 now); layoutlm_funsd 4.9 GB, 313k (~0.56M; 235k counted
# with 150 steps, 200 now). All eight printed META OK at these sizes.
exec bash "$(dirname "$0")/record_batch.sh" new29 ts_anomaly_serve cl4srec_train l2o_lstm_meta \
  graph_wavenet_traffic bilstm_crf_ner tabnet_train kivi_kvquant_gen layoutlm_funsd
