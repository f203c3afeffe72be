#!/usr/bin/env bash
# The ninety-fourth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch94.py and
# batch94_b.py: semiconductor design and fabrication, routing congestion prediction training (a RouteNet-style U-Net,
# double conv-BN-ReLU stages of 32/64/128/256, over 4-16 placement grids of 128-256 bins, a multiple of 32, at most
# 8 x 256^2 bins a step, 7 feature channels (cell and pin density, a macro mask, horizontal and vertical RUDY and
# others), horizontal and vertical overflow maps by smooth-L1 weighted off macros and a hotspot logit), a lithography
# hotspot detection service (a residual convnet, stem 32 and basic-block stages of 32/64/128/256, over 8-64 two-layer
# layout clips a request of 128, 192 or 256 px, per-request thresholds, severities and top-4 clips), static timing
# prediction training over netlist graphs (3 rounds of bidirectional edge-conditioned message passing by index_select
# and index_add, width 128, over drawn netlists of 16-40 levels of 400-1,600 cells with fan-ins of 1-3, then arrival
# propagation level by level with softmax-weighted fan-in by exp and index_add and a GRU cell written out; per-node
# arrival and slew, per-edge delay, an endpoint loss), wafer defect map diffusion training (a class-conditioned DDPM
# U-Net of widths 64/128/256 with TimeResBlocks and two attention blocks at the lowest level over 8-48 wafer maps of
# 48-112 dies a side, a multiple of 16, inside each wafer's disc, 9 defect patterns, the class dropped 10% of the
# time, 10-step DDIM evaluations with classifier-free guidance), wafer defect pattern fine-tuning (a 6-block vision
# transformer, width 256, over 32-128 wafer maps of 24-64 dies a side drawn per wafer, padded to the step's largest
# and masked by patch, a 257-row position table for the largest 16 x 16 patch grid plus the class token, the patch
# embedding, position table and first 2 blocks frozen, layer-wise learning-rate decay), electrostatic global placement
# simulation (ePlace/DREAMPlace-style in fp32: 22 designs of 20,000-80,000 cells with 1.0-1.3 nets per cell of 2-8
# pins, on 128 or 256 bins a side, 60-180 Adam iterations on the cell positions each: weighted-average wirelength by
# masked softmax, a bilinear density splat by index_add, the potential from an rfft2/irfft2 Poisson solve, a growing
# density weight), a netlist power-estimation service (4 GraphSAGE layers, width 128, mean aggregation over fan-in and
# fan-out by index_add, over netlist blocks of 2,000-24,000 cells with fan-ins of 2-3 and toggle counts over 8-32
# windows, per-window power, the peak window, leakage and the 16 hottest cells) and timing-path delay training (a
# 2-layer LSTM, width 256, written out stage by stage over 64-256 critical paths of 6-48 stages padded and masked by
# torch.where, per-stage delay and slew, the endpoint arrival a masked cumulative sum gathered at each path's last
# stage), written in torch alone), longest first (by estimate): $OUT/new94.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). litho_hotspot_serve uploads each request's uint8 clips (up
# to 64 clips x 2 layers x 256^2, one span) from two reused pinned host buffers on a side stream, one request ahead,
# waited on by event and record_stream'ed (workload_helpers.SideUploads); netlist_power_serve uploads each request's
# int32 words (cell types, edge list and toggle counts, up to 24,000 cells with fan-in 3 and 32 windows, one span) the
# same way; the other six are single-stream.
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, again
# after the resizing below). It had 60 minutes in all on a shared 2-core machine; each meta device run
# (scripts/traces/meta_run.py, one at a time) ran whole, first at the drafted step, design or request counts, then
# the counts were scaled from the op outputs per step, design or request and every workload was run whole again at
# its final sizes (the figures below are those final runs). None was measured on a GPU:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new94.sh
# Figures (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs):
# congestion_unet_train 1.60 GB, 314,950 measured whole after the resizing (~0.57M events, 85 s on the meta device;
#   ~362 a step from a first whole run at 560 steps, 203,024 op outputs, 1.60 GB; 560 -> 870 steps, evaluations
#   every 112 -> 174);
# litho_hotspot_serve 0.60 GB, 315,200 measured whole after the resizing (~0.57M events, 43 s; ~143 a request from a
#   first whole run at 3,300-3,450 requests, 485,285 op outputs; 3,300-3,450 -> 2,150-2,250 requests);
# wafer_map_diffusion_train 1.36 GB, 314,525 measured whole after the resizing (~0.57M events, 64 s; ~760 a step
#   plus the DDIM evaluations from a first whole run at 300 steps, 241,280 op outputs, 1.36 GB; 300 -> 395 steps,
#   evaluations every 60 -> 79);
# wafer_defect_vit_finetune 3.81 GB, 314,289 measured whole after the resizing (~0.57M events, 55 s; ~664 a step
#   from a first whole run at 270 steps, 179,399 op outputs, 3.81 GB; 270 -> 475 steps, evaluations every 54 -> 95);
# timing_levelized_gnn_train 2.75 GB, 308,699 measured whole after the resizing (~0.56M events, 36 s; ~3,820 a step
#   (16-40 levels of propagation, forward and backward) from a first whole run at 130 steps, 497,119 op outputs,
#   2.92 GB; 130 -> 84 steps, evaluations every 26 -> 21);
# timing_path_lstm_train 0.28 GB, 318,195 measured whole after the resizing (~0.57M events, 38 s; ~4,670 a step (up
#   to 48 stages of 2 LSTM layers, forward and backward) from a first whole run at 90 steps, 420,590 op outputs,
#   0.28 GB; 90 -> 68 steps, evaluations every 18 -> 17);
# eplace_density_sim 0.07 GB, 336,114 measured whole after the resizing (~0.61M events, 37 s; ~14,200 a design (60-180
#   iterations) from a first whole run at 36 designs, 512,116 op outputs, 0.07 GB; 36 -> 22 designs);
# netlist_power_serve 0.10 GB, 314,970 measured whole after the resizing (~0.57M events, 37 s; ~100 a request from a
#   first whole run at 3,500-3,650 requests, 357,188 op outputs; 3,500-3,650 -> 3,100-3,200 requests).
# The meta run counts optimizers per parameter (the meta device has no foreach kernels), so the GPU's count of those
# ops is lower. The meta run's SDPA math path (the transformer of wafer_defect_vit_finetune and
# wafer_map_diffusion_train's lowest-level attention blocks) counts a few more ops a layer than the GPU's fused
# kernels, and its attention matrices make its meta peak above what the fused kernels hold on the GPU. cuDNN
# convolutions (congestion_unet_train, litho_hotspot_serve, wafer_map_diffusion_train, wafer_defect_vit_finetune's
# patch embedding), cuFFT plans (eplace_density_sim) and index_add may take work areas the meta device does not count.
exec bash "$(dirname "$0")/record_batch.sh" new94 congestion_unet_train litho_hotspot_serve \
  wafer_map_diffusion_train wafer_defect_vit_finetune timing_levelized_gnn_train timing_path_lstm_train \
  eplace_density_sim netlist_power_serve
