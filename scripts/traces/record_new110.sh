#!/usr/bin/env bash
# The hundred-and-tenth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch110.py
# and batch110_b.py: forestry, timber and wood products), tree-crown detection training (a CenterNet-style residual
# convnet, a stride-2 stem and four stages of two basic residual blocks of 32/64/128/256 channels, a 96-wide
# feature-pyramid decoder to 1/4 resolution, over 2-16 4-band aerial orthophoto tiles of 256-576 px, a multiple of 64,
# at most 8 x 384^2 pixels a step; a focal-loss crown-centre heatmap, crown radius and tree height, 14 species), a log
# CT-scanning service (a 3-d residual encoder-decoder convnet of 16/32/64 channels over 1-2 logs a request of 48-160
# CT cross-sections of 96 x 96 int16 Hounsfield values; knots, heartwood and a soft-argmax pith, knots per length zone
# and angular sector, the best sawing rotation), airborne-lidar tree-species fine-tuning (two EdgeConv layers over the
# 16 nearest neighbours found by topk, then 4 pre-norm transformer blocks of width 192 over every fourth point under
# a key mask, 6-48 trees a step of 256-2,048 points padded to a multiple of 128, at most 24,576 padded points a step;
# 11 species, height and stem diameter; the EdgeConv front frozen for the first 30% of the steps, then trained at a
# tenth of the learning rate), a canopy-height-model sampling service (a conditional diffusion U-Net of widths
# 64/128/256 with timestep-embedded residual blocks and attention at the lowest level, 1-8 tiles of 64, 96 or 128
# cells a request, 10-30 DDIM steps with classifier-free guidance of scale 1.5-4.0, forest type and stand age
# conditions, height statistics read back), a board-grading service (a residual encoder-decoder convnet over 1-6
# sawn-board line-scanner images a request, 4 channels, 128 px wide and 512-1,536 px long; 8 defect classes per pixel,
# 5 grades, defect fractions per length zone and the longest clear run by cummax), individual-tree growth training (a
# 4-layer message-passing network over 8-24 plots of 40-300 trees, each tree's 8 nearest neighbours by topk, messages
# summed by index_add_, rolled out over 2-5 five-year periods with diameter, height and survival fed back), log-bucking
# policy training for cutting optimisation (a 3-block transformer encoder, width 192, over 96-384 scanned stems of 24-64
# half-metre sections, padded to a multiple of 8 with a 64-row position table, up to 8 cutting rounds of Gumbel-max
# sampled products among those that fit, values from precomputed window volumes, small-end diameters and worst grades,
# advantage actor-critic) and stand growth and yield forecasting training (a two-layer GRU of width 256 written out year
# by year over 64-512 plot histories of 6-30 years, padded and masked, climate, management and site covariates, with
# 40-year free-running forecasts), written in torch alone), longest first (by estimate):
# $OUT/new110.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). board_grading_serve uploads each request's uint8 boards (up
# to 6 boards x 4 x 128 x 1,536, one span) from two reused pinned host buffers on a side stream, one request ahead,
# waited on by event and record_stream'ed (workload_helpers.SideUploads.ahead); log_ct_knot_serve uploads each
# request's int16 CT stacks (up to 2 logs x 160 x 96 x 96, one span) the same way; the other six are single-stream.
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, again
# after the resizing below). It had 60 minutes in all on a shared 2-core machine; each meta device run
# (scripts/traces/meta_run.py, one at a time) ran whole, first at the drafted step or request counts, then the
# counts were scaled from the op outputs per step or per request and every workload was run whole again at its final
# sizes (the figures below are those final runs). flake8 was not installed (py_compile passed). None was measured on a
# GPU:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new110.sh
# Figures (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs):
# tree_crown_centernet_train 0.94 GB, 312,362 measured whole after the resizing (~0.56M events, 67 s on the meta
#   device; ~653 a step from a first whole run at 250 steps, 163,311 op outputs, 0.94 GB; 250 -> 480 steps,
#   evaluations every 50 -> 96);
# log_ct_knot_serve 0.35 GB, 306,349 measured whole after the resizing (~0.55M events, 34 s; ~89 a request from a
#   first whole run at 4,700-4,900 requests, 428,141 op outputs; 4,700-4,900 -> 3,480-3,620 requests);
# lidar_tree_species_finetune 2.19 GB, 314,390 measured whole after the resizing (~0.57M events, 55 s; ~650 a step
#   from a first whole run at 290 steps, 188,549 op outputs, 2.19 GB; 290 -> 485 steps, evaluations every 58 -> 97);
# canopy_height_ddim_sample 0.77 GB, 312,504 measured whole after the resizing (~0.56M events, 48 s; ~3,500 a request
#   from a first whole run at 95-100 requests, 339,995 op outputs; 95-100 -> 88-92 requests);
# board_grading_serve 0.21 GB, 317,361 measured whole after the resizing (~0.57M events, 37 s; a first whole run at
#   3,000-3,150 requests, 679,061 op outputs, spent ~72 ops a request on a longest-clear-run loop over 24 zones, which
#   was replaced by a cummax; a second whole run at 2,050-2,150 requests, 218,561 op outputs, ~104 a request;
#   -> 3,000-3,100 requests);
# tree_growth_gnn_train 4.41 GB, 311,426 measured whole after the resizing (~0.56M events, 38 s; ~1,430 a step from a
#   first whole run at 190 steps, 272,254 op outputs, 4.41 GB; 190 -> 220 steps, evaluations every 38 -> 44);
# log_bucking_policy_train 1.16 GB, 315,038 measured whole after the resizing (~0.57M events, 39 s; ~1,340 a step from
#   a first whole run at 210 steps, 281,886 op outputs, 1.16 GB; 210 -> 235 steps, evaluations every 42 -> 47);
# stand_yield_gru_train 0.35 GB, 313,247 measured whole after the resizing (~0.56M events, 44 s; ~3,670 a step (up to
#   30 years of two GRU cells written out, forward and backward) from a first whole run at 70 steps, 256,544 op
#   outputs, 0.35 GB; 70 -> 86 steps, evaluations every 14 -> 17).
# The meta run counts optimizers per parameter (the meta device has no foreach kernels), so the GPU's count of those
# ops is lower. The meta run's SDPA math path (the transformers of lidar_tree_species_finetune and
# log_bucking_policy_train, canopy_height_ddim_sample's lowest-level attention block) counts a few more ops a layer
# than the GPU's fused kernels, and its attention matrices make its meta peak above what the fused kernels hold on the
# GPU. cuDNN convolutions (tree_crown_centernet_train, log_ct_knot_serve's 3-d convolutions, board_grading_serve,
# canopy_height_ddim_sample), topk and index_add may take work areas the meta device does not count.
exec bash "$(dirname "$0")/record_batch.sh" new110 tree_crown_centernet_train log_ct_knot_serve \
  lidar_tree_species_finetune canopy_height_ddim_sample board_grading_serve tree_growth_gnn_train \
  log_bucking_policy_train stand_yield_gru_train
