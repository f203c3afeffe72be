#!/usr/bin/env bash
# The thirtieth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch30.py
# and batch30_b.py),
# longest first: $OUT/new30.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (vt_retrieval_gallery uploads every shard's frames on a side stream; the others are
# single-stream). Several are small: er_continual_replay (fp32), valle_tts_generate, t2i_cfg_serve,
# vt_retrieval_gallery and hashgrid_ngp_train (fp32) peak under 1 GB in the meta run.
# The helper that wrote them checked each one named below whole, at its real sizes, on the meta device (its meta
# runner: every "cuda" device mapped to "meta", op outputs counted, peak live bytes tracked) and ran the CPU smoke
# run (RECORD_SMOKE=1) on all eight. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new30.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16 and takes SDPA's math
# path, so the GPU's peak requested is lower; events from op outputs; none of them measured on a GPU):
# fid_reader_serve 3.3 GB meta, 334k op outputs (~0.60M events; 415k counted with 64 request groups, 50 now);
# valle_tts_generate 0.44 GB, 326k (~0.59M; 654k and 0.68 GB with 6 batches of 1-6 s utterances, 5 of 1-3.5 s now);
# vt_retrieval_gallery 0.54 GB, 324k (~0.58M; 608k with 620 shards, 330 now); t2i_cfg_serve 0.47 GB, 324k (~0.58M;
# 549k with 36 requests, 21 now); er_continual_replay 0.37 GB (fp32), 323k (~0.58M; 465k with 42-52 steps a task,
# 28-36 now); hvae_ladder_train 1.25 GB, 318k (~0.57M; 476k with 210 steps, 140 now); keypoint_topdown_train
# 3.4 GB, 308k (~0.55M; 137k with 260 steps, 600 now); hashgrid_ngp_train 0.38 GB (fp32), 299k (~0.54M; 1.40 GB
# when its evaluation view was rendered in chunks of 2048 rays, 512 now). All eight printed META OK at these sizes.
exec bash "$(dirname "$0")/record_batch.sh" new30 fid_reader_serve valle_tts_generate vt_retrieval_gallery \
  t2i_cfg_serve er_continual_replay hvae_ladder_train keypoint_topdown_train hashgrid_ngp_train
