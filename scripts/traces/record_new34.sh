#!/usr/bin/env bash
# The thirty-fourth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch34.py
# and batch34_b.py),
# longest first: $OUT/new34.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (owlvit_opendet_serve uploads every request batch's images and
# deeponet_query_train every next batch's sensors, queries and targets on a side stream; the others are
# single-stream). Several are small: maskgit_t2i_sample and owlvit_opendet_serve peak under 1.2 GB in the meta run.
# The helper that wrote them checked each one named below whole, at its real sizes, on the meta device (its meta
# runner: every "cuda" device mapped to "meta", op outputs counted, peak live bytes tracked) and ran the CPU smoke
# run (RECORD_SMOKE=1) on all eight. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new34.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16 and takes SDPA's math
# path, so the GPU's peak requested is lower; events from op outputs; none of them measured on a GPU):
# owlvit_opendet_serve 1.14 GB, 332k (~0.60M events) (about 525 op outputs a batch over a 70-batch partial run,
# 700 batches then, 630 now); meshgraphnet_cloth_train 2.31 GB (fp32), 330k (~0.59M events) (516k with 320 steps
# and a rollout every 80, 200 steps and a rollout every 50 now); proteinmpnn_train 5.12 GB, 328k (~0.59M events)
# (6.39 GB over a 30-step partial run with a 5000-token budget, 4000 now; 300 steps then, 280 now);
# deeponet_query_train 1.44 GB (fp32), 320k (~0.58M events) (about 139 a step over a partial run; 2800 steps then,
# 2300 now); superglue_match_train 3.25 GB (fp32), 318k (~0.57M events) (about 3780 a step over a partial run; 260
# steps then, 84 now); vis_instseg_train 1.76 GB, 317k (~0.57M events) (about 2380 a step over a partial run; 300
# steps then, 135 now); ct_primaldual_train 1.62 GB (fp32), 316k (~0.57M events) (about 1200 a step over a partial
# run; 380 steps then, 265 now); maskgit_t2i_sample 0.76 GB, 291k (~0.52M events) (about 9850 a batch over a
# 6-batch partial run; 60 batches then, 32 now).
# All eight printed META OK at these sizes.
exec bash "$(dirname "$0")/record_batch.sh" new34 owlvit_opendet_serve meshgraphnet_cloth_train proteinmpnn_train \
  deeponet_query_train superglue_match_train vis_instseg_train \
  ct_primaldual_train maskgit_t2i_sample
