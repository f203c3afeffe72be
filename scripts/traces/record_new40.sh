#!/usr/bin/env bash
# The fortieth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch40.py
# and batch40_b.py),
# longest first: $OUT/new40.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (disagg_pd_serve prefills on a side stream and hands each request's KV buffer to
# the compute stream by event and record_stream, ringattn_longctx_train uploads the next step's tokens on a side
# stream, one ahead; the others are single-stream). Several are small: mla_latent_serve, paged_cow_bestofn,
# disagg_pd_serve and streaming_sink_serve peak under 1.5 GB in the meta run.
# The helper that wrote them checked each one named below whole on the meta device (its meta runner: every
# "cuda" device mapped to "meta", op outputs counted, peak live bytes tracked) and ran the CPU smoke run
# (RECORD_SMOKE=1) on all eight. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new40.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# mtp_packed_pretrain 6.62 GB, ~329k (~0.59M events) (730k with 100 steps, 45 now); ringattn_longctx_train
# 7.05 GB, 299k (~0.54M events); expert_choice_moe_train 6.16 GB (fp32), ~329k (~0.59M events) (418k with 330
# steps, 260 now); gqa_uptrain_sweep 5.70 GB (fp32), ~286k (~0.51M events) (262k with 44 steps a phase, 48 now);
# disagg_pd_serve 1.39 GB, ~339k (~0.61M events) (366k with 950 steps, 880 now); mla_latent_serve 0.34 GB, ~331k
# (~0.60M events) (478k with 1300 steps, 900 now); paged_cow_bestofn 1.10 GB, ~306k (~0.55M events) (459k with
# 12 waves, 8 now); streaming_sink_serve 0.13 GB, ~300k (~0.54M events) (241k with 4 batches, 5 now, not rerun).
# Where a count was scaled after its meta run (the figure in brackets), the estimate is that run's count scaled
# by the steps kept (gqa_uptrain_sweep and streaming_sink_serve scaled up, the others down); a shorter run is a
# prefix of the checked one (same draws), so its peak is at most the checked one's.
exec bash "$(dirname "$0")/record_batch.sh" new40 mtp_packed_pretrain ringattn_longctx_train expert_choice_moe_train \
  gqa_uptrain_sweep disagg_pd_serve mla_latent_serve \
  paged_cow_bestofn streaming_sink_serve
