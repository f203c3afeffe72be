#!/usr/bin/env bash
# The seventy-ninth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch79.py and
# batch79_b.py: news, media and content moderation, a headline generation service (a 6-block decoder-only transformer
# over 1-16 left-padded articles of 64-768 prompt tokens, a prefill and 8-24 new tokens decoded one at a time with
# every block's keys and values grown by concatenation each step, greedy or top-50 sampling with a repetition
# penalty), abstractive summarization fine-tuning (a 4 + 4-block encoder-decoder over 8-16 articles of 128-640 tokens
# and summaries of 24-128 tokens, both padded per batch to their longest, teacher forcing, label-smoothed
# cross-entropy over the real summary tokens, token accuracy and perplexity at evaluation points), claim-evidence
# verification for misinformation and stance detection (a 6-block cross-encoder over each claim joined to 2-5
# evidence passages of 32-192 tokens, attention pooling and a masked max over the real evidence, a 3-way stance head
# and a per-passage relevance head, accuracy and macro-F1 at evaluation points), an image moderation service (a
# ResNet-18-style classifier over 1-24 images at 160-256 with five policy heads, per-label thresholds and actions by
# torch.where), NRMS-style news recommendation (self-attention news and user encoders with additive attention
# pooling over 8-30-word titles and 10-50-article click histories, one clicked article against 4 negatives, AUC, MRR
# and nDCG@5 at evaluation points), multi-label toxic comment fine-tuning (a 6-block BERT-style encoder over 8-512-token
# comments, batches of 16-96 padded to their longest under a token budget, six labels with positive weights,
# per-label AUC at evaluation points), video moderation with highlight detection (a 2D frame network over 4-12 clips
# of 8-32 frames at 112-128, a depthwise temporal convolution and a 3-block temporal transformer under the frame mask,
# frame highlight, multiple-instance and clip policy losses) and a near-duplicate article detection service (a 4-block
# encoder's pooled embedding of 1-32 articles of 64-512 tokens, 64 MinHash signatures of hashed token trigrams, a
# cosine search over an index that grows from 60,000 articles with every request, top-10, signature agreement),
# written in torch alone), longest first (by estimate): $OUT/new79.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). image_moderation_serve uploads each request's uint8 pixels
# (up to 24 images x 3 x 256 x 256) from two reused pinned host buffers on a side stream, one request ahead, waited
# on by event and record_stream'ed; near_dup_article_serve uploads each request's int32 token ids (up to 32 articles x
# 512 tokens) and their lengths (two spans of one buffer) the same way, one request ahead; the others are
# single-stream. The largest is news_summarizer_finetune (its first sizes, up to 24 articles, peaked at 6.55 GB in
# the first steps of a meta run at 16 articles x 632 tokens, so its batches were cut to 8-16 articles: up to 16 x 640
# tokens through 4 encoder blocks with math-path attention, 16 x 136 decoder tokens, the 32,000-word logits);
# toxic_comment_finetune (up to about 12,300 tokens a step, 24 comments x 512 at the longest, through 6 blocks);
# claim_evidence_verify_train (up to 80 claim-evidence pairs x 248 tokens through 6 blocks; cut from 8-32 claims to
# 8-16 before its meta run, after an estimate of about 11 GB at 160 pairs); nrms_news_rec_train (up to 160 users x
# 55 titles x 30 words through the news encoder); video_moderation_highlight_train (up to 384 frames at 128 through
# the frame network); news_headline_kv_serve, near_dup_article_serve and image_moderation_serve hold little (the KV
# caches of up to 16 x 792 positions, the index of up to 140,000 x 256 in bf16 and its signatures, up to 24 images).
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, again
# after the resizing below). It had under half an hour in all on a shared 2-core machine, so the meta device runs
# (scripts/traces/meta_run.py, one at a time) could not all be made: see the figures below for which were measured
# whole at the final sizes and which are estimates scaled from CPU smoke counts of ops per step or per request.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new79.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# toxic_comment_finetune 4.38 GB, 264,771 at 360 steps (~0.48M events; measured whole, 341 s, META OK), then raised to
#   410 steps (evaluations every 90 -> 100): ~301,000 (~0.54M events; scaled from the whole run, ~720 a step);
# claim_evidence_verify_train 4.06 GB, 300,772 (~0.54M events; measured whole at its final sizes, 228 s, META OK);
# news_summarizer_finetune ~6.6 GB (6.55 GB in the first 40 s of a meta run at 16 articles x 632 tokens, stopped when
#   its batches were cut to 8-16), ~300,000 (~0.54M events; estimated, ~1,190 a step from the CPU smoke count
#   corrected by toxic_comment_finetune's measured-to-smoke ratio; not measured whole);
# nrms_news_rec_train ~4.5 GB (rough, from tensor sizes), ~300,000 (~0.54M events; estimated, ~285 a step from the
#   difference of two CPU smoke counts at 3 and 15 steps; not measured);
# video_moderation_highlight_train ~3 GB (rough, from tensor sizes), ~298,000 (~0.54M events; estimated, ~795 a step
#   from the CPU smoke count corrected as above; not measured);
# news_headline_kv_serve ~1 GB (rough: the prefill's attention and the caches), ~313,000 (~0.56M events; estimated,
#   ~232 a decode step and ~150 a request from two CPU smoke counts, 1,297 decode steps over 81 requests; not measured);
# near_dup_article_serve ~0.55 GB (the peak of a stopped meta run at 2,100-2,300 requests), ~323,000 (~0.58M events;
#   estimated, ~179 a request from two CPU smoke counts, 1,799 requests; not measured whole);
# image_moderation_serve ~0.35 GB (rough, from tensor sizes), ~308,000 (~0.55M events; estimated, ~207 a request from
#   two CPU smoke counts, 1,483 requests; not measured).
# Resized (request or step counts from CPU smoke counts of ops per step or per request, the trainers' raised again by
# about 1/0.86 after toxic_comment_finetune's whole meta run counted 0.86 of its smoke-based estimate; batch sizes for
# memory): news_headline_kv_serve (135-150 -> 76-84 requests and 8-40 -> 8-24 new tokens; ~232 op
# outputs a decode step), image_moderation_serve (2,000-2,200 -> 1,450-1,550 requests; ~207 a request),
# near_dup_article_serve (2,100-2,300 -> 1,650-1,800 requests; ~179 a request; a first meta run at 2,100-2,300
# counted 180,803 op outputs in 300 s and peaked at 0.55 GB before it was stopped), news_summarizer_finetune
# (300 -> 220 -> 250 steps, evaluations every 75 -> 55 -> 62; 8-32 -> 8-24 -> 8-16 articles),
# claim_evidence_verify_train (420 -> 340 -> 380 steps, evaluations every 105 -> 85 -> 95; 16-48 -> 8-16 claims,
# 2-6 -> 2-5 passages of up to 224 -> 192 tokens), toxic_comment_finetune (480 -> 360 -> 410 steps, evaluations
# every 120 -> 90 -> 100; a token budget of 24,576 -> 12,288), video_moderation_highlight_train (600 -> 320 -> 370
# steps, evaluations every 150 -> 80 -> 90), nrms_news_rec_train (900 -> 1,050
# steps, evaluations every 180 -> 210; 64-192 -> 64-160 users).
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of those ops is lower. The meta run's SDPA math path (every transformer here) counts a few more ops a
# layer than the GPU's fused kernels, and its attention matrices make its meta peak above what the fused kernels hold
# on the GPU. cuDNN convolutions, topk, argsort, multinomial and scatter may take work areas the meta device does not
# count. The estimated figures are the less certain: the smoke counts' ops per step include a share of evaluation
# and start-up, and their peaks are rough estimates from tensor sizes, not measured.
exec bash "$(dirname "$0")/record_batch.sh" new79 news_summarizer_finetune toxic_comment_finetune \
  claim_evidence_verify_train nrms_news_rec_train video_moderation_highlight_train news_headline_kv_serve \
  near_dup_article_serve image_moderation_serve
