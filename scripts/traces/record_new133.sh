#!/usr/bin/env bash
# The hundred-and-thirty-third recording of issue 8 (held out, written blind; the workloads are in
# scripts/traces/batch133.py and batch133_b.py: sailing, yachting and regattas, written in torch alone), longest
# first (by meta seconds): foil section flow prediction training (a convolutional U-Net of 4 levels, 32/64/128/256
# channels with paired 3x3 convolutions, batch norm, max pooling and transposed convolutions, in channels_last, over
# 8-24 NACA-style sections made on the device at 64 x 128, 96 x 192 or 128 x 256 cells; the velocity and pressure
# fields by masked MSE, the lift and drag from the pressure on a band around the surface), hull resistance
# fine-tuning (a PointNet of 1x1 convolutions, 64/128/256/512 channels, over 12-40 hulls of 1,024-4,096 surface
# points padded under a mask, the first three layers frozen, masked max pooling and a sailing-condition MLP; 6
# resistance and force outputs and each point's pressure coefficient), a course wind-field sampler (a U-Net of
# timestep-conditioned residual blocks, 64/128/192 channels, over 4-16 fields of 32 x 32 to 64 x 64 cells, DDIM over
# 12-30 of 1,000 steps with classifier-free guidance conditioned on 4-16 stations' readings; the mean direction, the
# shift range and the favoured side), helm and sail trim policy training (soft actor-critic over 1,024 boats simulated
# on the device with a polar speed model, a 200,000-transition replay buffer of ring tensors on the device, twin
# critics of 3 layers of 256 with layer norms, a learned temperature, Polyak averaging by _foreach_lerp_, minibatches
# of 256-1,024), leg tactics training (an encoder-decoder transformer, 4 + 4 blocks, width 256, 8 heads, from 12-48
# forecast steps under a key mask to 8-40 manoeuvre tokens of a 64-token vocabulary, position tables of 48 and 41
# rows; the next token by cross-entropy ignoring the padding and the leg time), a fleet tracking service (an MLP over
# each boat's 16-64 GPS fix steps pooled by mean and max, each boat joined to its 8 nearest rivals of the same race by
# cdist and topk, 4 edge-convolution layers of width 128, over 1-4 races of 20-120 boats padded under a mask; the win
# probabilities, the time to the next mark, the distance to the leader, the leverage), a sail shape service (a vision
# transformer of 6 blocks, width 256, 8 heads, over 2-12 masthead frames of 224 x 224, 256 x 320 or 320 x 384 px in
# 16 px patches with row and column tables of 20 and 24 rows; 3 draft stripes' heatmaps, each stripe's camber, draft
# position and twist by soft-argmax) and wind-shift forecasting training (two GRU cells of 256 written out step by
# step over 24-72 readings of 6-12 wind stations padded under masks, padded steps keeping the state by torch.where;
# the next shift, its kind and the speed change per step): $OUT/new133.tar.gz.part00, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). fleet_tracking_gnn_serve uploads each request's fp16
# tracks (up to 4 x 120 x 64 x 4, one span) and sail_shape_vit_serve each request's uint8 frames (up to 12 x 3 x 320 x
# 384, one span) from two reused pinned host buffers on a side stream, one request ahead, through
# workload_helpers.SideUploads.ahead (waited on by event and record_stream'ed); the other six are single-stream. The
# helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, at the
# drafted sizes and again at the final ones). It had 60 minutes in all on a shared 2-core machine; the step and
# request counts were first sized from a partial meta-device run of each workload (about 25 s each, stopped by
# SIGTERM, its op outputs per step or per request read from the readback dump), then each was run whole on the meta
# device (scripts/traces/meta_run.py, one at a time) at its final sizes (the figures below). None was measured on a
# GPU:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new133.sh
# Figures (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs):
# foil_section_flow_unet_train 2.21 GB, 308,858 measured whole (~0.56M events, 156 s on the meta device; ~521 a step
#   from the partial run; 300 -> 590 steps, evaluations every 75 -> 118);
# hull_resistance_pointnet_finetune 2.53 GB, 304,716 measured whole (~0.55M events, 152 s; ~169 a step from the
#   partial run; 560 -> 1,800 steps, evaluations every 140 -> 360);
# course_windfield_ddim_sample 0.45 GB, 320,028 measured whole (~0.58M events, 151 s; ~4,500 a request (12-30 DDIM
#   steps of ~212) from the partial run; 42-46 -> 68-72 requests);
# helm_trim_sac_train 0.05 GB, 310,045 measured whole (~0.56M events, 142 s; ~469 an iteration (an env step and one
#   update) from the partial run; 540 -> 650 iterations after the 40 warm-up steps, readbacks every 45 -> 50);
# leg_tactics_seq2seq_train 1.42 GB, 304,628 measured whole (~0.55M events, 132 s; ~1,312 a step from the partial
#   run; 170 -> 230 steps, evaluations every 34 -> 46);
# fleet_tracking_gnn_serve 0.03 GB, 309,346 measured whole (~0.56M events, 128 s; ~121 a request from the partial
#   run; 1,900-1,940 -> 2,540-2,580 requests);
# sail_shape_vit_serve 0.26 GB, 310,924 measured whole (~0.56M events, 120 s; ~250 a request from the partial run;
#   2,150-2,190 -> 1,230-1,260 requests);
# course_wind_shift_gru_train 0.20 GB, 301,125 measured whole (~0.54M events, 84 s; ~6,100 a step (most of them the
#   two GRU cells over up to 72 steps, forward and backward) from the partial run; 60 -> 48 steps, evaluations every
#   15 -> 12).
# The meta run counts optimizers per parameter (the meta device has no foreach kernels), so the GPU's count of those
# ops (and of helm_trim_sac_train's _foreach_lerp_) is lower. The meta run's SDPA math path (the transformers of
# leg_tactics_seq2seq_train and sail_shape_vit_serve) counts a few more ops a layer than the GPU's fused kernels, and
# its attention matrices make its meta peak above what the fused kernels hold on the GPU. cuDNN convolutions
# (foil_section_flow_unet_train, hull_resistance_pointnet_finetune, course_windfield_ddim_sample, sail_shape_vit_serve's
# patch embedding) may take work areas the meta device does not count. flake8 was not run; both files passed
# py_compile and have no line over 120 characters other than the @_workload family strings.
exec bash "$(dirname "$0")/record_batch.sh" new133 foil_section_flow_unet_train hull_resistance_pointnet_finetune \
  course_windfield_ddim_sample helm_trim_sac_train leg_tactics_seq2seq_train fleet_tracking_gnn_serve \
  sail_shape_vit_serve course_wind_shift_gru_train
