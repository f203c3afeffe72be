#!/usr/bin/env bash
# The fifty-eighth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch58.py and
# batch58_b.py: agriculture, ecology and Earth observation on the GPU, crops, forests, wildlife, biodiversity and
# remote sensing, written in torch alone), longest first (by estimate):
# $OUT/new58.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (camtrap_burst_detect_serve uploads each burst of 3-10 uint8 frames of 384 x 512 to
# 720 x 960 from reused pinned host buffers on a side stream, one burst ahead, waited on by event and
# record_stream'ed; birdnet_mel_window_serve uploads each 15-120 s recording at 48 kHz in fp32 the same way, one
# request ahead; the others are single-stream). The largest is crop_tae_pixelset_train, near 4.98 GB in the meta run
# (the pixel-set encoder's per-pixel activations over up to 512 parcels x 72 acquisitions x 64 pixel slots, counted
# in fp32); canopy_height_unet_train 3.27 GB (the 5-level UNet's activations over 1.05M pixels a batch, and the
# 2,048^2 mosaic's blending buffers); sdm_presence_only_mlp_train 2.91 GB (the 6,000-species logits of up to
# 16,384 presence and pseudo-absence rows with grad, and the range maps' chunks); wildlife_reid_gallery_train
# 2.11 GB (the embedding network over up to 192 sightings of 160 x 320, and the rendering); hsi_spectral_3dconv_train
# 1.43 GB (the 3-D convolutions' activations over 256 patches of up to 25^2 x 30 components);
# sar_flood_change_siamese_train 0.75 GB (the shared encoder over both dates of 1.6M pixels at stride 2 and beyond,
# and the decoder); camtrap_burst_detect_serve 0.58 GB (the detector over 10 frames of 720 x 960 and 120 crops of
# 160^2); birdnet_mel_window_serve 0.21 GB (the STFTs and the CNN over chunks of 24 windows of 3 s).
# The helper that wrote them checked each one on the meta device (its meta runner, kept at /tmp/b58/meta_run.py, a
# copy of /work/notes/meta_run.py with the traces directory pointed at this checkout and readbacks counted in its
# progress lines: every "cuda" device mapped to "meta", op outputs that alias no input counted, peak live bytes
# tracked as the sum of live meta storages freed by weakref finalizers, autocast a no-op so fp32 sizes are counted,
# SDPA on a math path) and ran the CPU smoke run (RECORD_SMOKE=1) on all eight at their final sizes. Events are about
# 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new58.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# camtrap_burst_detect_serve 0.58 GB (fp32 where the CNNs autocast), 313,494 (~0.56M events);
# canopy_height_unet_train 3.27 GB (fp32 where the UNet autocasts), about 287,000 (~0.52M events; extrapolated);
# sar_flood_change_siamese_train 0.75 GB (fp32 where the network autocasts), about 310,000 (~0.56M events;
# extrapolated);
# birdnet_mel_window_serve 0.21 GB (fp32 where the CNN autocasts), about 321,000 (~0.58M events; extrapolated);
# wildlife_reid_gallery_train 2.11 GB (fp32 where the network autocasts), 313,797 (~0.56M events);
# hsi_spectral_3dconv_train 1.43 GB (fp32 where the network autocasts), about 309,000 (~0.56M events; extrapolated);
# crop_tae_pixelset_train 4.98 GB (fp32 where the PSE-TAE autocasts), 317,946 (~0.57M events);
# sdm_presence_only_mlp_train 2.91 GB (fp32 where the MLP autocasts), 317,764 (~0.57M events).
# Four were run whole at their final sizes: crop_tae_pixelset_train and sdm_presence_only_mlp_train after a first run
# cut short once its rate was clear (about 318 and 255 op outputs a step, with 900 and 700 steps then; 1,000 and
# 1,250 now), camtrap_burst_detect_serve and wildlife_reid_gallery_train after a short probe (about 181 op outputs a
# burst and 330 a step; 1,750 bursts and 950 steps now, from 1,000 and 420). The other four were run in part at their
# final sizes and their counts extrapolated, as the helper's 45-minute deadline on two shared cores did not allow
# whole runs (eight meta runs side by side made about 1,000 op outputs a second in all): canopy_height_unet_train
# through 152 of its 500 steps, its first mosaic evaluation included (86,920 op outputs, about 555 a training step
# and 2,300 an evaluation); sar_flood_change_siamese_train through 143 of its 540 steps, its first evaluation
# included (83,252, about 570 a step); birdnet_mel_window_serve through 124 of its 750 requests (53,037, about 428 a
# request); hsi_spectral_3dconv_train through its first scene's 720 steps and full-scene prediction and 159 steps of
# its second (120,857, about 136 a step and 45 a prediction chunk). Their peaks are those of the parts run (the rest
# draws the same kinds of shapes anew). Their sizes before came from short probes (canopy 260 steps, SAR 300, bird
# sound 1,100 requests, hyperspectral 220 steps a scene). The first smoke runs caught torch.hann_window made on the
# device (not patched by the runners; the window is a formula on arange now), smoke patches too small for the
# HybridSN's convolutions, and an even crown kernel (22 taps) that grew the canopy map by a pixel (the kernels are
# odd now). camtrap_burst_detect_serve was run whole twice: 311,744 op outputs and a 1.19 GB peak when its crops were
# sampled from every frame repeated 12 times (repeat_interleave, about 1 GB a burst), then 313,494 and 0.58 GB with
# each frame's 12 crop grids stacked into one grid_sample over the frame, as now. The whole runs took 961-1,292 s
# each (up to eight at a time), the last camtrap run 146 s alone.
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of optimizer ops is lower (crop_tae_pixelset_train, sdm_presence_only_mlp_train,
# canopy_height_unet_train and sar_flood_change_siamese_train use AdamW, hsi_spectral_3dconv_train Adam,
# wildlife_reid_gallery_train SGD with momentum, also on the ArcFace class weights; camtrap_burst_detect_serve and
# birdnet_mel_window_serve train nothing). No workload calls SDPA. birdnet_mel_window_serve's torch.stft may take
# cuFFT work areas, and hsi_spectral_3dconv_train's linalg.eigh (the PCA, once a scene) cuSOLVER work areas, that the
# meta device does not count.
# After the helper, the lead ran the four extrapolated ones whole at their final sizes with the same runner (same
# files, nothing changed), two at a time on the otherwise idle two cores: canopy_height_unet_train 286,601 op
# outputs, peak 3.27 GB (170 s); sar_flood_change_siamese_train 313,252, 0.75 GB (211 s); birdnet_mel_window_serve
# 306,825, 0.21 GB (106 s); hsi_spectral_3dconv_train 309,543, 1.43 GB (160 s). All eight are now checked whole.
exec bash "$(dirname "$0")/record_batch.sh" new58 camtrap_burst_detect_serve canopy_height_unet_train \
  sar_flood_change_siamese_train birdnet_mel_window_serve wildlife_reid_gallery_train hsi_spectral_3dconv_train \
  crop_tae_pixelset_train sdm_presence_only_mlp_train
