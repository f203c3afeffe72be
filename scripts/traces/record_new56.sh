#!/usr/bin/env bash
# The fifty-sixth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch56.py and
# batch56_b.py: neuroscience and brain-computer interfaces on the GPU, electrophysiology, calcium imaging,
# connectomics, neural decoding, brain encoding models, behaviour video and biophysical simulation, written in torch
# alone), longest first (by estimate):
# $OUT/new56.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (speech_bci_ctc_train uploads each batch's neural features, 16-48 sentences of
# 100-500 bins x 512 features in fp32, from reused pinned host buffers on a side stream, one batch ahead, waited on
# by event and record_stream'ed; dlc_pose_behavior_serve uploads each request's 4-16 uint8 video frames of 368x480 to
# 540x720 the same way, one request ahead; the others are single-stream). The largest are calcium_cnmf_hals_extract,
# 3.35 GB in the meta run (a movie of up to 2,000 frames of 384^2 in fp32, its motion-corrected copy being
# concatenated, and the phase-correlation FFTs of a batch of 200 frames), fmri_voxel_ridge_encode 3.26 GB (a
# subject's 6,000 x 40k responses and their simulation's temporaries), neuropixels_template_spikesort 3.21 GB (the
# kept PCA features of all chunks concatenated, about 1.4M spikes x 193, and k-means' distance matrix over them);
# em_affinity_unet_train 2.76 GB (the UNet's activations over two 24 x 160^2 patches at width 16-128 with their
# gradients, beside the pool of six 40 x 320^2 training volumes and their int64 labels); dlc_pose_behavior_serve
# 1.90 GB (ResNet-50 activations of 16 frames of 540x720 at stride 4 to 16, counted in fp32);
# ndt_masked_spikes_train 2.01 GB (attention over 8,192-bin batches, 8 heads, counted on the meta device's math path
# in fp32); speech_bci_ctc_train 1.06 GB (the transformer over batches of up to 12,000 bins);
# hh_conductance_network_sim 0.51 GB (the dense weights of the largest network drawn, and its raster).
# The helper that wrote them checked each one on the meta device (its meta runner, kept at /tmp/b56/meta_run.py, a
# copy of /work/notes/meta_run.py with the traces directory pointed at this checkout and one addition: F.ctc_loss,
# which has no meta kernel, answered on the meta device by a stand-in of the native kernel's outputs, the loss and an
# alpha table of (batch, frames, 2 x target + 1); every "cuda" device mapped to "meta", op outputs that alias no input
# counted, peak live bytes tracked as the sum of live meta storages freed by weakref finalizers, autocast a no-op so
# fp32 sizes are counted, SDPA on a math path; all eight printed META OK, all eight whole at their final sizes) and
# ran the CPU smoke run (RECORD_SMOKE=1) on all eight at their final sizes. Events are about 1.8x the op outputs
# counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new56.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# em_affinity_unet_train 2.76 GB (fp32 where the UNet autocasts), 317,698 (~0.57M events);
# dlc_pose_behavior_serve 1.90 GB (fp32 where the ResNet autocasts), 293,191 (~0.53M events);
# fmri_voxel_ridge_encode 3.26 GB (fp32 where the frozen CNN autocasts; the solves are fp32), 329,981 (~0.59M events);
# calcium_cnmf_hals_extract 3.35 GB (fp32 throughout), 329,773 (~0.59M events);
# neuropixels_template_spikesort 3.21 GB (fp32 throughout), 307,498 (~0.55M events);
# speech_bci_ctc_train 1.06 GB (fp32 where the transformer autocasts), 312,960 (~0.56M events);
# ndt_masked_spikes_train 2.01 GB (fp32 where the transformer autocasts), 327,332 (~0.59M events);
# hh_conductance_network_sim 0.51 GB (fp32 throughout), 317,212 (~0.57M events).
# All eight were run whole at their final sizes; five after a first run (whole or cut short once its count or peak
# was clear) that led to a resize: neuropixels_template_spikesort (93,390 with 330 chunks and 1,500-6,000 spikes
# kept a chunk; 1,100 chunks and 500-2,000 spikes now, so that the kept features and k-means' distances stay near
# 3 GB), speech_bci_ctc_train (261,360 with 400 steps and an evaluation every 100; 480 and every 120 now),
# hh_conductance_network_sim (401,436 with 1,000-1,500 steps a network; 800-1,200 now), em_affinity_unet_train (cut
# at 117 steps of 420 with about 420 op outputs a training step and 5.3k a segmentation; 700 steps and a
# segmentation every 175 now), dlc_pose_behavior_serve (cut at about 400k op outputs of 1,200 requests, about 450
# op outputs a request; 700 requests now). fmri_voxel_ridge_encode was run whole twice (330,773 and 3.26 GB with the
# refit's eigendecomposition repeated in every voxel chunk; once a feature space now, 329,981).
# ndt_masked_spikes_train and calcium_cnmf_hals_extract were run once, at their final sizes
# (calcium_cnmf_hals_extract after its movie synthesis was chunked and its largest field of view cut to 384^2 before
# the run, by estimate).
# The machine's two cores were shared (two or three meta runs at a time); the final runs took 66-570 s each
# (em_affinity_unet_train the longest).
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of optimizer ops is lower (ndt_masked_spikes_train and speech_bci_ctc_train use AdamW,
# em_affinity_unet_train Adam; the other five train nothing). The meta run's SDPA math path (the hand-written
# attention layers of ndt_masked_spikes_train and speech_bci_ctc_train, with float biases for the local window and
# the padding) counts a few more ops a layer than the GPU's fused kernels, and its CTC stand-in counts a few ops where
# the GPU runs the native CTC kernels. The FFTs (rfft, irfft, rfft2, irfft2) may take cuFFT work areas on the GPU
# that the meta device does not count; torch.linalg.eigh (neuropixels_template_spikesort's whitening,
# fmri_voxel_ridge_encode's Gram matrices of up to 2,048^2, six a feature space) and torch.linalg.qr take cuSOLVER
# work areas the meta device does not count either.
exec bash "$(dirname "$0")/record_batch.sh" new56 em_affinity_unet_train dlc_pose_behavior_serve \
  fmri_voxel_ridge_encode calcium_cnmf_hals_extract neuropixels_template_spikesort speech_bci_ctc_train \
  ndt_masked_spikes_train hh_conductance_network_sim
