#!/usr/bin/env bash
# The twenty-eighth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch28.py
# and batch28_b.py),
# longest first: $OUT/new28.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (decision_transformer_prefetch uploads on a side stream; the others are
# single-stream). Three are small: kws_dscnn_train and decision_transformer_prefetch peak under 1 GB in the meta
# run (fp32), reinforce_gru_nav at about 1 GB (it runs in fp32 on the GPU too).
# The helper that wrote them checked each one named below whole, at its real sizes, on the meta device (its meta
# runner: every "cuda" device mapped to "meta", op outputs counted, peak live bytes tracked) and ran the CPU smoke
# run (RECORD_SMOKE=1) on all eight. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new28.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16 and takes SDPA's math
# path, so the GPU's peak requested is lower; events from op outputs; none of them measured on a GPU):
# kws_dscnn_train 0.91 GB meta, 365k op outputs (~0.66M events); rmt_memory_lm 7.0 GB meta, 356k (~0.64M; 433k
# counted with 120 steps, 98 now); decision_transformer_prefetch 0.78 GB, 350k (~0.63M; 575k and 1.35 GB counted
# with 1100 steps of up to 256 x 50 timesteps, 580 steps of up to 192 x 40 now); whisper_varlen_train 5.9 GB, 306k
# (~0.55M); rgcn_kg_complete 4.2 GB (fp32), 303k (~0.54M; 191k and 7.3 GB counted with 1200 steps and a 270k-triple
# evaluation graph, 1900 steps and 150k now); videomae_varframes 5.2 GB, 302k (~0.54M); reinforce_gru_nav 1.0 GB
# (fp32), 281k (~0.51M; 257k and 1.8 GB with 16 updates of up to 2048 envs, 18 of up to 1024 now); random_ltd_bert
# 9.1 GB meta (fp32, the math path's 12 x 512 x 512 attention matrices of 16-row batches), 277k (~0.50M). All eight
# printed META OK at these sizes.
exec bash "$(dirname "$0")/record_batch.sh" new28 kws_dscnn_train rmt_memory_lm decision_transformer_prefetch \
  whisper_varlen_train rgcn_kg_complete videomae_varframes reinforce_gru_nav random_ltd_bert
