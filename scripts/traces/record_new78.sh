#!/usr/bin/env bash
# The seventy-eighth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch78.py and
# batch78_b.py: oceanography, marine science and fisheries, sea-ice segmentation of satellite radar swaths (a 5-level
# UNet over 2-5 tiles of 192-576 x 256-768 pixels with HH/HV backscatter, an incidence-angle ramp and masked no-data
# margins, 5 ice classes, cross-entropy plus soft dice over the valid pixels, per-class IoU at evaluation points), a
# side-scan sonar object detection service (1-4 waterfall strips of 256-2,048 pings x 2 channels x 512 range bins, a
# ResNet-style trunk with a stride-4 fusion and CenterNet heads for 6 classes, peaks by max pooling, top-100, decoded
# boxes and a one-pass IoU-matrix non-maximum suppression by torch.where), long-tailed plankton classification (a
# ResNet-style CNN over 96-192 grayscale images at 64-160 pixels, 1,000 taxa from a Zipf prior, a logit-adjusted
# cross-entropy, balanced and head/middle/tail accuracies by scatter_add at evaluation points), fish re-identification
# (P x K batches of 16-32 identities x 4 crops at 128 x 64 to 256 x 128, a ResNet-style embedder with GeM pooling and a
# BNNeck, batch-hard triplet plus ArcFace losses, rank-1 and average precision at evaluation points), a Fourier neural
# operator surrogate of sea-surface temperature (fields from a damped drifting spectral recurrence under a land mask,
# 4-10 regional crops of 64-160 x 128-320 cells, rollouts of 1-6 steps fed back, 4 rfft2/irfft2 spectral layers of 16 x
# 16 modes, a loss over ocean cells), a whale-call detection service over hydrophone audio (1-4 hydrophones x 20-120 s
# at 2 kHz, framing and an rfft power spectrum, a 64-band mel filterbank and PCEN-style normalisation, a CNN and a
# dilated temporal convolution scoring 4 call types per frame, hysteresis and event merging by cumulative sums and
# scatter_reduce into 64 slots), Argo float profile interpolation (128-256 profiles of 32-256 irregular depth samples
# under key-padding masks, a 4-block set-transformer encoder and 2 query blocks cross-attending at 16-128 query
# depths, a Gaussian negative log-likelihood of temperature and salinity) and a fisheries catch-at-age
# management-strategy-evaluation simulation (4 scenarios of 33-46 years, 2,000-8,000 replicates of 20 age classes,
# autocorrelated Beverton-Holt recruitment, Baranov catch, noisy survey and catch-at-age observations, a per-replicate
# estimation model fitted by 12 Adam steps each year, a hockey-stick harvest control rule and a TAC solved for F by
# Newton steps), written in torch alone), longest first (by estimate): $OUT/new78.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). sidescan_sonar_detect_serve uploads each request's uint8
# pings (up to 4 strips x 2,048 pings x 2 channels x 512 bins) from two reused pinned host buffers on a side stream,
# one request ahead, waited on by event and record_stream'ed; hydrophone_whale_detect_serve uploads each request's
# int16 samples (up to 4 hydrophones x 120 s x 2,000 samples) the same way, one request ahead; the others are
# single-stream.
# The largest are sea_ice_swath_seg_train, 6.53 GB in its meta run (up to 5 tiles of 576 x 768 through the UNet's
# full-resolution levels at width 32, batch norm and the concatenated skips, fp32 on the meta device),
# fish_reid_track_train (8.70 GB measured with up to 40 identities x 4 crops at 256 x 128 through the unstrided last
# stage; cut to 16-32 identities after that run, about 7.0 GB scaled), plankton_longtail_train (7.77 GB measured with
# up to 256 images at 160; cut to 96-192 images after that run, about 5.8 GB scaled), sst_fno_rollout_train (7.75 GB
# measured with up to 12 crops of 160 x 320 through 6 rollout steps of 4 spectral layers, the rfft2 spectra and
# their gradients held for the whole rollout; cut to 4-10 crops after that run, about 6.5 GB scaled) and
# argo_profile_interp_train (9.80 GB measured with up to 384 profiles x 256 samples through 4 encoder blocks whose
# 6-head attention matrices the meta run's math path holds; cut to 128-256 profiles after that run, about 6.5 GB
# scaled, less on the GPU's fused attention).
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK; all eight
# again after the resizing below, their smoke sizes unchanged) and each one on the meta device with
# scripts/traces/meta_run.py, one at a time, at its first sizes. It ran out of time before any second meta run: the figures marked "scaled" below are the first whole
# run's op outputs scaled by the step (or year) ratio and its peak scaled by the batch cut, NOT measured at the final
# sizes; none of the eight was measured whole at its final sizes.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new78.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# sea_ice_swath_seg_train ~6.53 GB, ~308,000 op outputs (~0.55M events; scaled from 230,089 measured whole at 500 steps, 196 s);
# plankton_longtail_train ~5.8 GB, ~310,000 op outputs (~0.56M events; scaled from 238,049 and 7.77 GB measured whole at 560 steps and up to 256 images, 224 s);
# fish_reid_track_train ~7.0 GB, ~308,000 op outputs (~0.55M events; scaled from 244,177 and 8.70 GB measured whole at 380 steps and up to 40 identities, 271 s);
# sst_fno_rollout_train ~6.5 GB, ~309,000 op outputs (~0.56M events; scaled from 230,870 and 7.75 GB measured whole at 280 steps and up to 12 crops, 129 s);
# argo_profile_interp_train ~6.5 GB, ~313,000 op outputs (~0.56M events; scaled from 255,878 and 9.80 GB measured whole at 270 steps and up to 384 profiles, 264 s);
# sidescan_sonar_detect_serve 0.71 GB, ~310,000 op outputs (~0.56M events; scaled from 198,552 measured whole at 1,200-1,320 requests, 133 s);
# hydrophone_whale_detect_serve 0.11 GB, ~315,000 op outputs (~0.57M events; scaled from 216,922 measured whole at 2,000-2,200 requests, 153 s);
# catch_at_age_mse_sim 0.11 GB, ~310,000 op outputs (~0.56M events; scaled from 236,049 measured whole at 25-35 years a scenario, 144 s).
# Resized after the first meta runs (step counts and evaluation intervals, and where said the batch range, the models
# and designs unchanged): sea_ice_swath_seg_train (500 -> 670 steps, evaluations every 125 -> 134; 230,089 at 500,
# 6.53 GB, 196 s), plankton_longtail_train (560 -> 730 steps, evaluations every 112 -> 146, batches 96-256 -> 96-192;
# 238,049 at 560, 7.77 GB, 224 s), fish_reid_track_train (380 -> 480 steps, evaluations every 95 -> 120, identities
# 16-40 -> 16-32; 244,177 at 380, 8.70 GB, 271 s), sst_fno_rollout_train (280 -> 375 steps, evaluations every 70 -> 75,
# crops 4-12 -> 4-10; 230,870 at 280, 7.75 GB, 129 s), argo_profile_interp_train (270 -> 330 steps, evaluations
# every 54 -> 66, profiles 128-384 -> 128-256; 255,878 at 270, 9.80 GB, 264 s), catch_at_age_mse_sim (25-35 ->
# 33-46 years a scenario; 236,049 at 25-35, 0.11 GB, 144 s), sidescan_sonar_detect_serve (1,200-1,320 -> 1,880-2,060
# requests; 198,552 at 1,200-1,320, 0.71 GB, 133 s), hydrophone_whale_detect_serve (2,000-2,200 -> 2,900-3,200
# requests; 216,922 at 2,000-2,200, 0.11 GB, 153 s). Their step counts before any meta run had been set from the
# CPU smoke run's op counts.
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of those ops is lower. The meta run's SDPA math path (argo_profile_interp_train's encoder and query
# blocks) counts a few more ops a layer than the GPU's fused kernels, and its attention matrices make its meta peak
# above what the fused kernels hold on the GPU. cuDNN convolutions, rfft2/irfft2 and rfft (cuFFT plans), topk, argsort,
# cdist, scatter_reduce, interpolation and max pooling may take work areas the meta device does not count.
exec bash "$(dirname "$0")/record_batch.sh" new78 sea_ice_swath_seg_train plankton_longtail_train \
  fish_reid_track_train sst_fno_rollout_train argo_profile_interp_train sidescan_sonar_detect_serve \
  hydrophone_whale_detect_serve catch_at_age_mse_sim
