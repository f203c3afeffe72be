#!/usr/bin/env bash
# The forty-sixth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch46.py
# and batch46_b.py: computational biology, genomics, single-cell and chemistry),
# longest first: $OUT/new46.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (scvi_nb_vae_train uploads the next step's sparse count matrix (COO rows, columns,
# values) and batch labels from reused pinned host buffers on a side stream, one step ahead, waited on by event and
# record_stream'ed; cellpose_tile_seg uploads each whole uint16 microscopy image on a side stream, one image ahead,
# the same way; the others are single-stream). Several are small: scvi_nb_vae_train peaks near 0.5 GB and
# smiles_reinvent_sample under 3 GB in the meta run.
# The helper that wrote them checked each one on the meta device (its meta runner, saved as
# /work/notes/meta_run.py: every "cuda" device mapped to "meta", op outputs that alias no input counted, peak live
# bytes tracked as the sum of live meta storages freed by weakref finalizers, autocast a no-op so fp32 sizes are
# counted, SDPA on a math path; all eight printed META OK, seven whole at their final sizes and cellpose_tile_seg
# at fewer steps) and ran the CPU smoke run (RECORD_SMOKE=1) on all eight at their final sizes. Events are about
# 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new46.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# enformer_tracks_train 6.01 GB (fp32), 309,474 (~0.56M events);
# msa_transformer_mlm 7.14 GB (fp32), 310,535 (~0.56M events);
# hyenadna_seqwarm_train 6.83 GB (fp32), 311,702 (~0.56M events) (width cut from 256 to 192 after a whole run at
# 256 peaked at 8.98 GB, 283,222 op outputs; the fine-tune lengthened from 40 to 60 steps; rerun whole);
# cellpose_tile_seg 2.51 GB, ~322k (~0.58M events) (86,956 with 150 training steps and 6 serving passes, 555 and
# 22 now);
# esm_variant_scan 5.80 GB (fp32), 347,792 (~0.63M events);
# egnn_dock_pose_train 4.54 GB, 308,623 (~0.56M events);
# scvi_nb_vae_train 0.53 GB, 303,317 (~0.55M events);
# smiles_reinvent_sample 2.97 GB (fp32), 340,916 (~0.61M events).
# The count marked ~ was scaled after its meta run (the figure in brackets) by the steps kept: the machine's two
# cores were shared (up to six meta runs at once) and that run took 11 minutes; its peak is the shorter run's
# (the longer run draws more image sizes from the same 512-2048 px range, so it may be somewhat higher). The other
# seven were run whole at their final sizes, most of them after a first run that led to a resize:
# enformer_tracks_train (variant scoring cut from 24 variants at 8 passes a window to 8 at 4, 220 steps to 190),
# esm_variant_scan (10 proteins a model to 9; its first run was cut off by a timeout past 310k),
# egnn_dock_pose_train (a whole run at 160 steps gave 262,248; 195 now), smiles_reinvent_sample (18 RL steps to 11
# after a partial run, then 14),
# hyenadna_seqwarm_train (above; its batches also halved to 32k tokens after a partial run peaked at 13.9 GB).
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of Adam/AdamW and clipping ops is lower.
exec bash "$(dirname "$0")/record_batch.sh" new46 enformer_tracks_train msa_transformer_mlm hyenadna_seqwarm_train \
  cellpose_tile_seg esm_variant_scan \
  egnn_dock_pose_train scvi_nb_vae_train smiles_reinvent_sample
