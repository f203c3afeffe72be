#!/usr/bin/env bash
# The ninety-eighth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch98.py and
# batch98_b.py: social media platforms, feeds and messaging, written in torch alone), longest first (by estimate):
# friend recommendation training (a GraphSAGE-style link predictor written with index_select and index_add over
# drawn subgraphs of 20,000-50,000 users with 3-6 times as many friendships as users, both directions kept, user-id
# embeddings from a 400,000-row table plus 4 profile fields and 32 dense features, 3 mean-aggregation layers of
# width 192 with held-out edges weighted zero, 2,048-8,192 held-out friendships as positives and 4 drawn negatives
# each, a scaled dot product plus a pair MLP, top-50 retrieval evaluations), feed-ranking training (a multi-task
# ranking model over 1,024-8,192 impressions a step: 12 sparse fields from one offset table of 64-d rows, 8-64
# recent items pooled by target attention under a key mask, a bottom MLP, 91 pairwise dot products, a mixture of 4
# experts with per-task gates and towers for click, like, share and dwell time, Adagrad on the table and AdamW on
# the rest, rank-AUC evaluations by argsort and scatter), post-text moderation training (a 6-block pre-norm
# transformer, width 384, over two micro-batches a step of 8-48 posts from drawn length buckets of 32-511 tokens
# plus a [CLS] slot, padded to a multiple of 32 with a 512-row position table (the longest padded post), author
# metadata on the [CLS] slot, 9 multi-label policy heads and a severity head, warm-up and cosine decay), a
# post-image moderation service (a ResNet-18-style convnet over 1-8 images a post at one of 224 x 224, 256 x 256,
# 320 x 320, 256 x 384 and 384 x 256, 7 policy probabilities, a 128-d embedding matched against 20,000 known
# violating images, per-post remove / review / allow decisions by torch.where), a reply-suggestion service (a
# 6-layer decoder, width 512, with a hand-written key/value cache per layer sized for context plus reply, rotary
# tables of 512 positions, conversations of 2-12 turns of 4-48 tokens cut to 480, three candidates decoding 6-24
# tokens each by Gumbel-max over the top 40 after a 600-token blocklist), engagement-forecast diffusion training (a
# conditional 1-d DDPM U-Net of widths 64/128/256 with attention over time at the lowest level, 32-128 curves of
# 72-168 hours with 4 engagement channels, the first 6-24 hours observed as conditioning channels, post metadata
# added to the timestep embedding, an EMA of the weights by lerp_, 12-step DDIM forecasts), message-spam training (a
# byte embedding, two stride-2 1-d convolutions and a GRU cell written out step by step over 8-64 steps, 64-256
# messages of 24-256 bytes a step, the state frozen past each message's end by torch.where, sender features, a spam
# logit and a 5-way abuse type) and a feed re-ranking service (a 4-block pre-norm transformer, width 256, over a
# session's 16-128 history items and 64-512 candidates under a boolean mask, 5 objective probabilities combined into
# a value, a greedy maximal-marginal-relevance selection of 20-40 posts by masked_fill, argmax and scatter):
# $OUT/new98.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). post_image_moderation_serve uploads each request's uint8
# images (up to 8 images of 320 x 320 x 3, one span) from two reused pinned host buffers on a side stream, one
# request ahead, waited on by event and record_stream'ed (workload_helpers.SideUploads); feed_rerank_diversity_serve
# uploads each request's float features (48 per item, two spans: up to 128 history items and up to 512 candidates)
# the same way; the other six are single-stream.
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, before
# and again after the resizing below) and py_compile on both files (flake8 is not installed there, so it was not
# run). It had 60 minutes in all on a shared 2-core machine; each meta device run (scripts/traces/meta_run.py, one at
# a time) ran whole, first at the drafted step or request counts, then the counts were scaled from the op outputs
# per step or per request and every workload was run whole again at its final sizes (the figures below are those
# final runs). None was measured on a GPU:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new98.sh
# Figures (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs):
# friend_recommendation_sage_train 3.45 GB, 309,532 measured whole after the resizing (~0.56M events, 74 s on the
#   meta device; ~307 a step from a first whole run at 430 steps, 132,052 op outputs, 3.45 GB; 430 -> 1,010 steps,
#   evaluations every 86 -> 202);
# feed_ranking_mtl_train 3.34 GB, 309,858 measured whole after the resizing (~0.56M events, 51 s; ~310 a step from
#   a first whole run at 560 steps, 173,881 op outputs, 3.34 GB; 560 -> 1,000 steps, evaluations every 112 -> 200);
# post_moderation_text_train 3.33 GB, 316,170 measured whole after the resizing (~0.57M events, 60 s; ~1,265 a step
#   (two micro-batches) from a first whole run at 230 steps, 291,008 op outputs, 3.33 GB; 230 -> 250 steps,
#   evaluations every 46 -> 50);
# post_image_moderation_serve 0.17 GB, 309,191 measured whole after the resizing (~0.56M events, 42 s; ~160 a
#   request from a first whole run at 3,300-3,400 requests, 537,287 op outputs; 3,300-3,400 -> 1,900-1,960
#   requests);
# reply_suggestion_serve 0.28 GB, 326,233 measured whole after the resizing (~0.59M events, 38 s; ~4,670 a request
#   with 8 layers from a first whole run at 330-345 requests, 1,573,365 op outputs, 0.32 GB; the decoder cut from 8
#   to 6 layers and 330-345 -> 86-90 requests);
# engagement_curve_diffusion_train 0.86 GB, 304,653 measured whole after the resizing (~0.55M events, 66 s; ~1,340
#   a step from a first whole run at 190 steps, 254,653 op outputs, 0.86 GB; 190 -> 230 steps, evaluations every
#   38 -> 46);
# message_spam_gru_train 0.37 GB, 310,197 measured whole after the resizing (~0.56M events, 43 s; ~3,250 a step (the
#   GRU cell written out over 8-64 steps, forward and backward) from a first whole run at 125 steps, 406,740 op
#   outputs, 0.37 GB; 125 -> 95 steps, evaluations every 25 -> 19);
# feed_rerank_diversity_serve 0.13 GB, 312,579 measured whole after the resizing (~0.56M events, 52 s; ~366 a
#   request from a first whole run at 1,000-1,050 requests, 375,435 op outputs; 1,000-1,050 -> 830-870 requests).
# The meta run counts optimizers per parameter (the meta device has no foreach kernels), so the GPU's count of those
# ops is lower. The meta run's SDPA math path (post_moderation_text_train, reply_suggestion_serve,
# feed_rerank_diversity_serve and engagement_curve_diffusion_train's attention block) counts a few more ops a layer
# than the GPU's fused kernels, and its attention matrices make its meta peak above what the fused kernels hold on
# the GPU. cuDNN convolutions (post_image_moderation_serve, message_spam_gru_train, engagement_curve_diffusion_train)
# and index_add (friend_recommendation_sage_train) may take work areas the meta device does not count. The meta
# times were taken while another process shared the two cores, so they are rough.
exec bash "$(dirname "$0")/record_batch.sh" new98 friend_recommendation_sage_train feed_ranking_mtl_train \
  post_moderation_text_train post_image_moderation_serve reply_suggestion_serve engagement_curve_diffusion_train \
  message_spam_gru_train feed_rerank_diversity_serve
