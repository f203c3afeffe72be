#!/usr/bin/env bash
# The fifty-second recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch52.py and
# batch52_b.py: climate, weather and earth-system science on the GPU, written in torch alone), longest first (by
# estimate):
# $OUT/new52.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (ens_emulator_forecast_serve uploads each request's analysis, 24 variables over the
# requested region, from reused pinned host buffers on a side stream, one request ahead, waited on by event and
# record_stream'ed; ealstm_streamflow_train uploads each training batch's forcings, static attributes, targets and
# basin spreads the same way, one batch ahead; the others are single-stream). The largest is sfno_rollout_train,
# near 6.7 GB in the meta run (the one-step stage at batch 4, fp32 where the blocks autocast; the spectral
# transforms are fp32 on the GPU too); ocean_masked_emulator_train peaks near 6.15 GB (the ConvNeXt UNet's
# activations over 96k-cell batches, two rollout steps), climax_varsubset_finetune near 4.3 GB,
# graphcast_mesh_rollout_train near 4.2 GB (the processor's edge tensors over 30,744 mesh edges, each rollout step
# recomputed under checkpointing), corrdiff_downscale_train near 4.0 GB; the service, the LSTM and 4D-Var are small
# (ens_emulator_forecast_serve 1.07 GB,
# ealstm_streamflow_train 1.53 GB, fourdvar_emulator_assim 0.61 GB).
# The helper that wrote them checked each one on the meta device (its meta runner, kept at /tmp/b52/meta_run.py, a
# copy of /work/notes/meta_run.py with the traces directory pointed at this checkout: every "cuda" device mapped to
# "meta", op outputs that alias no input counted, peak live bytes tracked as the sum of live meta storages freed by
# weakref finalizers, autocast a no-op so fp32 sizes are counted, SDPA on a math path; all eight printed META OK,
# all eight whole at their final sizes) and ran the CPU smoke run (RECORD_SMOKE=1) on all eight at their final
# sizes. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new52.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# ens_emulator_forecast_serve 1.07 GB (fp32 where the emulator autocasts), 325,681 (~0.59M events);
# sfno_rollout_train 6.73 GB (fp32 where the blocks autocast), 322,735 (~0.58M events);
# corrdiff_downscale_train 3.96 GB (fp32 where the UNet autocasts), 303,471 (~0.55M events);
# graphcast_mesh_rollout_train 4.19 GB (fp32 where the GNN autocasts), 329,327 (~0.59M events);
# ocean_masked_emulator_train 6.15 GB (fp32 where the UNet autocasts), 312,573 (~0.56M events);
# ealstm_streamflow_train 1.53 GB (fp32), 322,242 (~0.58M events);
# climax_varsubset_finetune 4.28 GB (fp32 where the ViT autocasts), 313,799 (~0.56M events);
# fourdvar_emulator_assim 0.61 GB (fp32 where the emulator autocasts), 315,490 (~0.57M events).
# All eight were run whole at their final sizes, each after a first whole run that led to a resize:
# sfno_rollout_train (256,298 with 84 training steps; 105 now), graphcast_mesh_rollout_train (394,375 with 60
# rollout fine-tuning steps and an evaluation every 42; 40 and every 38 now), ens_emulator_forecast_serve (220,538
# and 2.04 GB with 150 requests of 16-96 members through a width-128 emulator in chunks of 1M cells; 220 requests of
# 8-48 members through a width-64 emulator in chunks of 512k cells now, a quarter of the GPU work a request),
# fourdvar_emulator_assim (636,560 with 40 assimilation cycles; 20 now), climax_varsubset_finetune (185,183 with 64
# steps a task; 110 now), corrdiff_downscale_train (163,347 with 180 steps and a sampling evaluation every 45; 350
# and every 70 now), ealstm_streamflow_train (278,606 with 40 steps; 46 now), ocean_masked_emulator_train (217,049
# with 200 steps and an evaluation every 50; 290 and every 58 now).
# The machine's two cores were shared (two meta runs at a time); the final runs took 125-342 s each.
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of optimizer ops is lower (sfno_rollout_train, climax_varsubset_finetune and
# ocean_masked_emulator_train use AdamW, the others Adam; ens_emulator_forecast_serve and fourdvar_emulator_assim
# only in their short emulator training, 4D-Var's Adam is on one control tensor). The meta run's SDPA math path
# (climax_varsubset_finetune's ViT and variable aggregation) also counts a few more ops a layer than the GPU's fused
# kernels. Composite ops (the circular padding of fourdvar_emulator_assim's emulator, the complex einsums of
# sfno_rollout_train) may be split differently on the GPU than on the meta device.
exec bash "$(dirname "$0")/record_batch.sh" new52 ens_emulator_forecast_serve sfno_rollout_train \
  corrdiff_downscale_train graphcast_mesh_rollout_train ocean_masked_emulator_train \
  ealstm_streamflow_train climax_varsubset_finetune fourdvar_emulator_assim
