#!/usr/bin/env bash
# The seventy-seventh recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch77.py and
# batch77_b.py: retail, advertising and e-commerce, two-tower candidate retrieval with in-batch sampled softmax and a
# logQ popularity correction (a 1,000,000-user and 500,000-item catalogue, masked history and title-word bags,
# accidental hits masked, Adagrad on the tables and AdamW on the towers, full-catalogue recall@100 at evaluation
# points), SASRec-style sequential recommendation (a 3-block causal transformer over left-padded histories of 64-200
# items, a sampled softmax against 4,096 shared negatives, full-catalogue HR@10 and NDCG@10 over 100,000 items with
# the seen items scattered out), DCN-v2 click-through prediction (26 hashed fields of drawn cardinalities in one offset
# table, 13 dense features, a low-rank cross network stacked with a 1,024-1,024-512 deep network, clicks from a hidden
# logistic model, AUC, log-loss and calibration at evaluation points), a visual product search service (a
# ResNet-18-style embedder with GeM pooling over 1-16 shop photos at 224-288, a cosine search of a 262,144-product
# index with an optional category filter, alpha query expansion and a second search), a display-ad ranking and auction
# service (a Deep Interest Network's target attention of 64-1,024 candidate ads over 20-256 behaviours, ESMM-style
# click and conversion heads, quality-weighted eCPM, 3-8 slots and generalised second prices), M5-like retail demand
# forecasting (sales drawn from hidden seasonality, price elasticity, promotions and events, an encoder-decoder
# transformer over 84-364 context days and a 28-day horizon, pinball loss over 3 quantiles, weighted quantile loss and
# coverage at evaluation points), a Thompson-sampling dynamic pricing simulation (20,000-60,000 products with
# Bayesian linear regression posteriors, batched 4 x 4 Cholesky draws, a 16-level price grid under inventory,
# rank-one updates, and every 14 days a markdown plan optimised by 50 Adam steps) and product matching fine-tuning
# over images and titles (a ViT at 160-224 with interpolated position embeddings and a title transformer, a
# symmetric contrastive loss and a match classifier on in-batch hard negatives), written in torch alone), longest
# first (by estimate): $OUT/new77.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). visual_product_search_serve uploads each request's uint8
# pixels (up to 16 photos x 3 x 288 x 288) from two reused pinned host buffers on a side stream, one request ahead,
# waited on by event and record_stream'ed; din_ad_auction_serve uploads each request's int32 behaviour items and
# categories, candidate ads, categories, advertisers, bids and profile fields (up to 256 behaviours and 1,024
# candidates, seven spans of one buffer) the same way, one request ahead; the others are single-stream. The largest
# is product_image_title_match_finetune, 6.97 GB in the meta run (up to 160 pairs at 224 through 8 ViT blocks and
# 6 text blocks, the attention matrices on the meta run's math path); sasrec_next_item_train 7.06 GB (up to 256 users
# x 200 positions x 4,097 sampled logits in fp32, their log-sum-exp and gradient, and the 3 blocks' attention);
# demand_quantile_forecast_train 4.66 GB (up to 256 series x 392 days through 3 + 2 blocks, the causal attention
# matrices on the math path); two_tower_logq_retrieval_train 3.00 GB (the 1,000,000 x 64 and 500,000 x 64 tables,
# their dense gradients and Adagrad state, the evaluation's 512 x 500,000 scores); dcnv2_ctr_train 0.55 GB (up to
# 16,384 impressions through the cross and deep networks, the offset table's gradient); visual_product_search_serve
# 0.58 GB (the index and up to 16 photos at 288 through the trunk); din_ad_auction_serve 0.49 GB (up to 1,024
# candidates x 256 behaviours x 256 attention features); thompson_pricing_sim 0.06 GB (60,000 products' posteriors,
# grids and plans).
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, again
# after the resizing below) and each one on the meta device with scripts/traces/meta_run.py, one at a time, at its first
# sizes and again at its final sizes (the final runs under a 200 s limit): every figure below was measured whole at the
# final sizes (META OK, none stopped, none extrapolated).
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new77.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# product_image_title_match_finetune 6.97 GB, 308,981 (~0.56M events; measured whole, 183 s);
# sasrec_next_item_train 7.06 GB, 308,856 (~0.56M events; measured whole, 160 s);
# visual_product_search_serve 0.58 GB, 311,210 (~0.56M events; measured whole, 84 s);
# dcnv2_ctr_train 0.55 GB, 304,749 (~0.55M events; measured whole, 107 s);
# demand_quantile_forecast_train 4.66 GB, 300,039 (~0.54M events; measured whole, 132 s);
# two_tower_logq_retrieval_train 3.00 GB, 312,313 (~0.56M events; measured whole, 187 s);
# din_ad_auction_serve 0.49 GB, 299,506 (~0.54M events; measured whole, 78 s; its first sizes were its final ones);
# thompson_pricing_sim 0.06 GB, 298,845 (~0.54M events; measured whole, 92 s).
# Resized after the first meta runs (step, season or request counts only, the models and designs unchanged except
# where said): two_tower_logq_retrieval_train (700 -> 1,250 steps, evaluations every 150 -> 250; 175,474 at 700),
# sasrec_next_item_train (420 -> 750 steps, evaluations every 70 -> 125; 174,546), dcnv2_ctr_train (700 -> 2,200
# steps, evaluations every 140 -> 440; 97,749), visual_product_search_serve (2,400-2,600 -> 1,750-1,900 requests;
# 423,908 measured whole, ~170 a request), thompson_pricing_sim (9 -> 14 seasons; 192,115; its products were also
# raised from 2,000-8,000 to 20,000-60,000 a season, which leaves the op count unchanged),
# product_image_title_match_finetune (120 -> 180 steps, evaluations every 30 -> 45; 208,879).
# demand_quantile_forecast_train kept its 330 steps (293,459) but its first sizes peaked at 29.42 GB in the meta run
# (1,024 series x 8 heads x 392 days of math-path attention): its batches were cut from 256-1,024 to 128-256 series,
# its heads from 8 to 4 and its evaluation chunks from 4 x 512 to 8 x 256 series. din_ad_auction_serve was not resized
# (299,506 at its first sizes).
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of those ops is lower (product_image_title_match_finetune's two encoders have ~190 parameter tensors).
# The meta run's SDPA math path (every transformer here) counts a few more ops a layer than the GPU's fused kernels,
# and its attention matrices make its meta peak above what the fused kernels hold on the GPU. cuDNN convolutions,
# topk, argsort, multinomial, scatter, Cholesky and interpolation may take work areas the meta device does not count.
exec bash "$(dirname "$0")/record_batch.sh" new77 product_image_title_match_finetune sasrec_next_item_train \
  visual_product_search_serve dcnv2_ctr_train demand_quantile_forecast_train two_tower_logq_retrieval_train \
  din_ad_auction_serve thompson_pricing_sim
