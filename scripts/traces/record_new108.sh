#!/usr/bin/env bash
# The hundred-and-eighth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch108.py
# and batch108_b.py: dairy, livestock and aquaculture farming, written in torch alone): cattle-behaviour video
# training (a channels-last ResNet-style frame convnet, 7x7 stride-2 stem of 32, max-pool, stages of 32/64/128/256
# with two basic blocks each, pooled per frame, a residual temporal convolution, over 2-8 barn-camera clips of 8-16
# frames at 112-176 px, a multiple of 16, at most 128 frames a step, padded frames masked; 8 per-frame behaviours and
# a 4-level clip locomotion score; SGD with Nesterov momentum), a fish-pen biomass service (a CenterNet-style
# channels-last residual detector, stem 32, stages of 32/64/128/256, a top-down pyramid of width 96 to 1/4 resolution,
# over 1-6 underwater frames a request from one of 24 cameras of 384 x 512, 480 x 640 or 448 x 768; 3 condition
# heatmaps and a length/height regression, peaks by max pooling and top-64, weights by a length-weight relation, the
# lice-positive fraction, a running biomass per pen kept by index_copy), herd contact-graph disease training (6
# edge-conditioned message-passing layers of width 96 by index_select and index_add over 2-16 barns of 150-2,500 cows
# with 3-12 proximity-collar contacts each, both directions, at most 16,000 cows a step; per-cow onset and per-barn
# outbreak heads, the barn pooling by index_add), pig-barn cough detection training (log-mel features on the device
# by unfold, an rFFT and 64 mel filters over 8-32 clips of 2-10 s at 16 kHz, SpecAugment by torch.where, two stride-2
# convolutions, 4 pre-norm blocks of width 192 under a key mask with a 250-row position table (the longest clip's
# subsampled frames); 5 frame-level sound events and a clip respiratory score), milk-yield and herd-health forecasting
# training (a 4-block pre-norm transformer of width 256 over 16-64 cows' 30-365 days of 12 daily features, padded to a
# multiple of 16, a 368-row day-position table, breed, parity and herd from one offset table, masked mean and
# last-day pooling; a 14-day yield forecast and 3 health events), feed-ration rumen surrogate training (an ingredient
# MLP and masked attention pooling over 64-256 rations of 4-24 ingredients, a GRU cell of 192 written out step by step
# over 12-36 hours; 6 hourly rumen outputs and 4 daily milk and methane outputs), sea-pen oxygen-field diffusion
# sampling (a conditional U-Net of widths 64/128/256 with timestep residual blocks and a pre-norm attention block at
# the lowest level, DDIM of 10-40 steps over a 1,000-step linear schedule with classifier-free guidance of 1.5-4, 1-8
# scenarios of 32-96 cells a side a request, 5 site maps and 6 weather values; minimum and mean oxygen, hypoxic area
# and mean temperature read back) and a collar rumination service (a dilated temporal convnet, a stride-10 stem and
# 10 residual blocks of width 64, dilations 1-16 twice, over 8-256 cows' 120-600 s windows of 3-axis 10 Hz int16
# accelerometer samples a request; per-cow behaviour minutes, day tallies and monitored seconds by index_add_,
# low-rumination alerts by torch.where), longest first (by estimate): $OUT/new108.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). fish_pen_biomass_serve uploads each request's uint8 frames
# (up to 6 frames of 448 x 768 x 3, one span) from two reused pinned host buffers on a side stream, one request ahead,
# by workload_helpers.SideUploads.ahead (waited on by event, record_stream'ed); collar_rumination_serve uploads each
# request's int16 accelerometer windows and cow ids (up to 256 cows x 3 x 6,000 samples, and 256 ids: two spans of one
# buffer) the same way; the other six are single-stream.
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, again
# after the resizing below). It had 45 minutes in all on a shared 2-core machine; each meta device run
# (scripts/traces/meta_run.py, one at a time) ran whole, first at the drafted step or request counts, then the
# counts were scaled from the op outputs per step or per request and every workload was run whole again at its final
# sizes (the figures below are those final runs). None was measured on a GPU:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new108.sh
# Figures (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs):
# cattle_behaviour_video_train 0.95 GB, 312,953 measured whole after the resizing (~0.56M events, 93 s on the meta
#   device; ~532 a step from a first whole run at 320 steps, 170,270 op outputs, 0.95 GB; 320 -> 590 steps,
#   evaluations every 80 -> 148);
# fish_pen_biomass_serve 0.24 GB, 305,428 measured whole after the resizing (~0.55M events, 52 s; ~191 a request from
#   a first whole run at 2,000-2,100 requests, 391,720 op outputs, 0.24 GB; 2,000-2,100 -> 1,620-1,700 requests);
# herd_contact_graph_train 3.86 GB, 313,190 measured whole after the resizing (~0.56M events, 69 s; ~581 a step from a
#   first whole run at 300 steps, 174,391 op outputs, 3.86 GB; 300 -> 540 steps, evaluations every 75 -> 135);
# pig_cough_audio_train 0.78 GB, 314,930 measured whole after the resizing (~0.57M events, 79 s; ~591 a step from a
#   first whole run at 300 steps, 177,173 op outputs, 0.78 GB; 300 -> 535 steps, evaluations every 75 -> 134);
# milk_yield_forecast_train 2.30 GB, 314,713 measured whole after the resizing (~0.57M events, 69 s; ~535 a step from
#   a first whole run at 300 steps, 160,610 op outputs, 2.30 GB; 300 -> 590 steps, evaluations every 75 -> 148);
# rumen_ration_surrogate_train 0.15 GB, 313,136 measured whole after the resizing (~0.56M events, 55 s; ~1,000 a step
#   (12-36 GRU steps forward and backward) from a first whole run at 200 steps, 199,945 op outputs, 0.15 GB;
#   200 -> 315 steps, evaluations every 50 -> 79);
# sea_pen_oxygen_ddim_sample 0.43 GB, 313,100 measured whole after the resizing (~0.56M events, 72 s; ~4,320 a
#   request (10-40 guided U-Net evaluations) from a first whole run at 60-64 requests, 267,830 op outputs, 0.43 GB;
#   60-64 -> 71-75 requests);
# collar_rumination_serve 0.17 GB, 315,966 measured whole after the resizing (~0.57M events, 65 s; ~109 a request
#   from a first whole run at 5,000-5,200 requests, 555,439 op outputs, 0.17 GB; 5,000-5,200 -> 2,850-2,950
#   requests).
# python3 -m py_compile passed on both batch files; flake8 was not installed here, so it was not run (no line
# outside the family strings is longer than 120 characters).
# The meta run counts optimizers per parameter (the meta device has no foreach kernels), so the GPU's count of those
# ops is lower. The meta run's SDPA math path (the transformers of milk_yield_forecast_train and
# pig_cough_audio_train, sea_pen_oxygen_ddim_sample's lowest-level attention block) counts a few more ops a layer than
# the GPU's fused kernels, and its attention matrices make its meta peak above what the fused kernels hold on the GPU.
# cuDNN convolutions (cattle_behaviour_video_train, fish_pen_biomass_serve, pig_cough_audio_train,
# sea_pen_oxygen_ddim_sample, collar_rumination_serve), cuFFT plans (pig_cough_audio_train) and index_add may take
# work areas the meta device does not count.
exec bash "$(dirname "$0")/record_batch.sh" new108 cattle_behaviour_video_train fish_pen_biomass_serve \
  herd_contact_graph_train pig_cough_audio_train milk_yield_forecast_train rumen_ration_surrogate_train \
  sea_pen_oxygen_ddim_sample collar_rumination_serve
