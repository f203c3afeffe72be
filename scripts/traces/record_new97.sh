#!/usr/bin/env bash
# The ninety-seventh recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch97.py and
# batch97_b.py: video platforms and video understanding, a frame-interpolation service (a RIFE-style coarse-to-fine
# flow network, three levels of widths 192/128/96 at 1/4, 1/2 and full resolution, grid_sample warps in fp32, a
# sigmoid blending mask and a refinement convnet, over segments of 2-5 consecutive frames of 256 x 448, 352 x 640 or
# 544 x 960 with a 2x, 3x or 4x up-conversion, all of a request's pairs and intermediate times in one batch, the output
# quantised to uint8), recurrent video super-resolution training (a BasicVSR-style bidirectional recurrence written
# out frame by frame, a 5-layer flow convnet, 64-channel hidden states warped by grid_sample and updated by 7
# residual blocks, x4 upsampling by two pixel shuffles, over 2-8 clips of 5-15 frames of 32-64 px low-resolution
# patches, at most 40 frames of 64^2 a step, Charbonnier loss), action-recognition training (a factorised space-time
# ViT, 2 x 16 x 16 tubelets by a strided 3-d convolution to width 384, 5 spatial then 3 temporal pre-norm blocks, row
# and column tables of 12 rows and a time table of 8 rows, over 4-16 clips of 8, 12 or 16 frames at 112-192 px, a
# multiple of 16, at most 12 x 8 x 144 tokens a step, mixup and label smoothing, 400 classes), video latent diffusion
# sampling (a space-time latent U-Net of widths 64/128/192 with TimeResBlocks, frame attention with a 16-row frame
# table at the two lower levels and a spatial attention block at the bottom, 12-30 DDIM steps with classifier-free
# guidance over 1-4 clips of 8, 12 or 16 frames of 24-32 x 32-48 latents, decoded x4 to RGB), video captioning
# training (a 3-block encoder over 8-64 frame features of 768-d, padded to a multiple of 8 with a 64-row frame table,
# a 4-layer decoder with causal self-attention and cross-attention, width 512, over 1-3 captions per video of 6-40
# tokens plus BOS and EOS padded to a multiple of 8 with a 48-row token table, 16-48 videos a step, greedy-decoding
# evaluations), next-video recommendation training (a SASRec-style causal transformer, 4 blocks of width 256, over
# 64-256 watch histories of 8-256 videos from a 200,000-video catalogue, log-uniform, padded to a multiple of 16 with
# a 256-row position table, at most 32,768 positions a step, sampled softmax over 512 shared negatives, full-catalogue
# hit-rate evaluations), watch-graph recommendation training (a 3-layer bipartite message-passing network by
# index_select and index_add over drawn subgraphs of 20,000-60,000 users and 8,000-30,000 videos with 3-8 watch edges
# per user, tables of 400,000 users and 150,000 videos, BPR loss over 4,096-16,384 triples) and a video-text
# retrieval service (a 300,000-entry bf16 gallery on the device, each request ingesting 1-6 uploaded videos of 8-64
# frame features through a 2-block video tower and writing them into ring-buffer slots by index_copy, and answering
# 1-32 queries of 4-32 tokens through a 4-block text tower by one matrix product over the gallery, blocked videos
# removed by torch.where, top 50), written in torch alone), longest first (by estimate):
# $OUT/new97.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). frame_interp_serve uploads each request's uint8 frames (up
# to 5 frames of 544 x 960 x 3, one span) from two reused pinned host buffers on a side stream, one request ahead,
# waited on by event and record_stream'ed (workload_helpers.SideUploads); video_text_retrieval_serve uploads each
# request's fp16 frame features (up to 6 videos x 64 frames x 512, one span padded to the request's longest video) the
# same way; the other six are single-stream.
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, again
# after the resizing below) and py_compile on both files (flake8 is not installed there, so it was not run; no line
# but the family strings is over 120 characters). It had 60 minutes in all on a shared 2-core machine; each meta device
# run (scripts/traces/meta_run.py, one at a time) ran whole, first at the drafted step or request counts, then the
# counts were scaled from the op outputs per step or per request and every workload but frame_interp_serve (already
# inside the range at its first run) was run whole again at its final sizes (the figures below are those final runs).
# None was measured on a GPU:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new97.sh
# Figures (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs):
# frame_interp_serve 2.79 GB, 339,204 op outputs measured whole at its drafted and final 2,000-2,100 requests (~0.61M
#   events, 335 s on the meta device, the slowest there; ~165 a request; not resized);
# video_superres_recurrent_train 4.06 GB, 315,880 measured whole after the resizing (~0.57M events, 60 s; ~3,220 a
#   step from a first whole run at 110 steps, 354,196 op outputs, 4.06 GB; 110 -> 98 steps, evaluations every
#   22 -> 20);
# video_tubelet_vit_train 3.44 GB, 316,240 measured whole after the resizing (~0.57M events, 84 s; ~944 a step from a
#   first whole run at 260 steps, 245,564 op outputs, 3.44 GB; 260 -> 335 steps, evaluations every 65 -> 67);
# video_latent_diffusion_sample 0.38 GB, 321,156 measured whole after the resizing (~0.58M events, 42 s; ~6,150 a
#   request (12-30 guided DDIM steps of the U-Net) from a first whole run at 66-70 requests, 417,860 op outputs;
#   66-70 -> 50-53 requests);
# video_caption_train 4.00 GB, 317,113 measured whole after the resizing (~0.57M events, 57 s; ~1,280 a step from a
#   first whole run at 215 steps, 274,885 op outputs, 4.00 GB; 215 -> 245 steps, evaluations every 54 -> 61);
# watch_history_seqrec_train 4.22 GB, 312,328 measured whole after the resizing (~0.56M events, 57 s; ~520 a step from
#   a first whole run at 420 steps, 218,908 op outputs, 4.22 GB; 420 -> 600 steps, evaluations every 105 -> 150);
# watch_graph_rec_train 1.72 GB, 315,643 measured whole after the resizing (~0.57M events, 50 s; ~316 a step from a
#   first whole run at 650 steps, 205,393 op outputs, 1.71 GB; 650 -> 1,000 steps, evaluations every 130 -> 200);
# video_text_retrieval_serve 0.71 GB, 316,609 measured whole after the resizing (~0.57M events, 43 s; ~270 a request
#   from a first whole run at 2,000-2,100 requests, 552,781 op outputs; 2,000-2,100 -> 1,150-1,200 requests).
# The meta run counts optimizers per parameter (the meta device has no foreach kernels), so the GPU's count of those
# ops is lower. The meta run's SDPA math path (the transformers of video_tubelet_vit_train, video_caption_train,
# watch_history_seqrec_train and video_text_retrieval_serve, and video_latent_diffusion_sample's frame and spatial
# attention) counts a few more ops a layer than the GPU's fused kernels, and its attention matrices make its meta peak
# above what the fused kernels hold on the GPU. cuDNN convolutions (frame_interp_serve, video_superres_recurrent_train,
# video_tubelet_vit_train's 3-d tubelet embedding, video_latent_diffusion_sample) and index_add
# (watch_graph_rec_train) may take work areas the meta device does not count.
exec bash "$(dirname "$0")/record_batch.sh" new97 frame_interp_serve video_superres_recurrent_train \
  video_tubelet_vit_train video_latent_diffusion_sample video_caption_train watch_history_seqrec_train \
  watch_graph_rec_train video_text_retrieval_serve
