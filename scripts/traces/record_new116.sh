#!/usr/bin/env bash
# The hundred-and-sixteenth recording of issue 8 (held out, written blind; the workloads are in
# scripts/traces/batch116.py and batch116_b.py: dentistry and oral health, written in torch alone), longest first
# (by meta seconds): bitewing caries segmentation training (a residual U-Net, four stages of 32/64/128/256 channels
# and a decoder with skips back to 1/2, over 2-12 bitewing films of 256-448 x 320-576 px, multiples of 64, at most
# 8 x 384 x 512 pixels a step, 6 classes a pixel, cross-entropy and a soft Dice on the caries and restoration
# classes), cone-beam CT tooth and canal segmentation fine-tuning (a 3-d residual U-Net of 16/32/64/128 channels with
# instance norm over 1-4 CBCT cubes of 48-112 voxels a side, a multiple of 16, at most 2 x 96^3 voxels a step, 35
# labels, the encoder frozen for the first 182 of 730 steps and then trained at a tenth of the decoder's learning rate
# through AdamW parameter groups), orthodontic aligner staging policy training (3 pre-norm blocks, width 128, over 28
# tooth slots with 22-28 teeth present, 64-256 cases a step, 12-30 stages an episode of tanh-squashed Gaussian moves
# per tooth and axis, neighbour-clearance and intrusion penalties by shifted slices, advantage actor-critic over the
# stages), a panoramic tooth-charting service (two stride-2 convolutions and a 4x4 patch convolution to 1/16, 2-d
# sine-cosine positions computed for the drawn size, 4 pre-norm encoder blocks of width 256, 32 tooth queries through
# 3 DETR-style decoder blocks; 1-4 films of 384-640 px high and twice as wide a request), a periapical lesion triage
# service (a ConvNeXt-style convnet of 48/96/192/384 channels, 1/1/3/1 blocks, in eval and not channels-last, over
# 1-8 int16 periapical films a request of one of three sensor sizes; a PAI score, bone loss, a referral flag and the 3
# hottest cells of a 1/16 lesion heatmap), a crown-design point diffusion sampler (an MLP and 2 pre-norm blocks over
# a 768-point context of the preparation, neighbours and antagonist, once per request; 6 DiT blocks of width 256 with
# adaptive layer norm and cross-attention over 1-4 crowns of 512-1,536 points, classifier-free guidance by tooth type
# in one doubled batch, 20-50 DDIM steps and a guidance scale of 1.5-4 drawn per request), intraoral-scan tooth
# segmentation training (a point transformer, 4 vector-attention layers of width 128 over the 16 nearest neighbours
# of every vertex by topk and index_select, 2-12 scans of 1,024-4,096 padded vertices, at most 12,288 a step, 17
# labels and a centroid offset a vertex) and periodontal charting risk forecasting training (a visit MLP and two GRU
# cells of width 256 written out visit by visit over 64-384 patients of 3-20 recall visits of full-mouth six-site
# charts, padded visits keeping the state by torch.where; next-visit probing-depth change, tooth loss and a stage):
# $OUT/new116.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). panoramic_tooth_chart_serve uploads each request's uint8
# films (up to 4 films of 640 x 1,280, one span) and periapical_lesion_triage_serve each request's int16 films (up to
# 8 films of 512 x 384, one span) from two reused pinned host buffers on a side stream, one request ahead, through
# workload_helpers.SideUploads.ahead (waited on by event and record_stream'ed); the other six are single-stream.
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, first
# at the drafted sizes and again at the final ones). It had 45 minutes in all on a shared 2-core machine; the step
# and request counts were first sized from a partial meta-device run of each workload (about 25-30 s each, stopped by
# SIGTERM, its op outputs per step or per request read from the readback dump), then each was run whole on the meta
# device (scripts/traces/meta_run.py, one at a time) at its final sizes (the figures below). None was measured on a
# GPU:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new116.sh
# Figures (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs):
# bitewing_caries_seg_train 1.64 GB, 310,888 measured whole (~0.56M events, 171 s on the meta device, slowed by the
#   other helper sharing the machine; ~563 a step and ~160 an evaluation from the partial run; 470 -> 550 steps,
#   evaluations every 94 -> 110);
# cbct_tooth_seg_finetune 3.98 GB, 310,946 measured whole (~0.56M events, 144 s; ~305 a step frozen and ~463 a step
#   unfrozen from the partial run; 290 -> 730 steps, the encoder frozen for 72 -> 182, evaluations every 58 -> 146);
# ortho_aligner_staging_train 5.10 GB, 328,830 measured whole (~0.59M events, 111 s; ~7,900 a step (12-30 stages of
#   the policy, the environment update and the losses, forward and backward) from the partial run; 60 -> 38 steps,
#   evaluations every 15 -> 13);
# panoramic_tooth_chart_serve 2.75 GB, 306,390 measured whole (~0.55M events, 111 s; ~347 a request from the partial
#   run; 1,400-1,500 -> 880-920 requests);
# periapical_lesion_triage_serve 0.21 GB, 310,479 measured whole (~0.56M events, 101 s; 109 a request from the
#   partial run; 1,900-2,000 -> 2,800-2,900 requests);
# crown_point_diffusion_sample 1.00 GB, 297,376 measured whole (~0.54M events, 90 s; ~16,000 a request (~460 a DDIM
#   step) from the partial run; 56-60 -> 19-20 requests);
# intraoral_scan_tooth_seg_train 2.53 GB, 308,984 measured whole (~0.56M events, 76 s; ~570 a step from the partial
#   run; 450 -> 540 steps, evaluations every 90 -> 108);
# periodontal_chart_gru_train 0.27 GB, 309,711 measured whole (~0.56M events, 49 s; ~1,977 a step (the step's
#   longest history is nearly always 20 visits of 2 cells, forward and backward) and ~630 an evaluation from the
#   partial run; 170 -> 155 steps, evaluations every 34 -> 31).
# The meta run counts optimizers per parameter (the meta device has no foreach kernels), so the GPU's count of those
# ops is lower. The meta run's SDPA math path (the transformers of panoramic_tooth_chart_serve,
# ortho_aligner_staging_train and crown_point_diffusion_sample) counts a few more ops a layer than the GPU's fused
# kernels, and its attention matrices make its meta peak above what the fused kernels hold on the GPU. cuDNN
# convolutions (bitewing_caries_seg_train, cbct_tooth_seg_finetune's 3-d convolutions, periapical_lesion_triage_serve's
# depthwise ones, panoramic_tooth_chart_serve's stem) may take work areas the meta device does not count. flake8 was
# not installed on the writing machine; both files passed py_compile and have no line over 120 characters other than
# the @_workload family strings.
exec bash "$(dirname "$0")/record_batch.sh" new116 bitewing_caries_seg_train cbct_tooth_seg_finetune \
  ortho_aligner_staging_train panoramic_tooth_chart_serve periapical_lesion_triage_serve \
  crown_point_diffusion_sample intraoral_scan_tooth_seg_train periodontal_chart_gru_train
