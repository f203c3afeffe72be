#!/usr/bin/env bash
# The seventy-third recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch73.py and
# batch73_b.py: mathematics and symbolic reasoning, end-to-end transformer symbolic regression (random expression trees
# of 5 levels drawn on the device, evaluated bottom-up on 50-200 drawn points, serialised in prefix notation by a stable
# argsort; a set encoder over the points, a causal decoder of the tokens, greedy decoding at evaluation points),
# PDE-FIND and SINDy equation discovery (Burgers, KdV and Kuramoto-Sivashinsky by pseudo-spectral integrating-factor
# RK4, Lorenz and Rossler by RK4, noisy spectral and Savitzky-Golay derivatives, 20-term libraries, sequentially
# thresholded ridge regression over a tolerance sweep by batched fp64 Cholesky solves, bootstrap ensembles), a
# transformer on integer sequences (recurrences and polynomials generated on the device, terms as a sign and two
# base-1,000 digits, greedy continuation with an exact-match score), a neural premise-selection service (a dual encoder
# trained by InfoNCE, a 60,000-premise library, chunked similarity search with running top-k merges, cross-encoder
# reranking), neural theorem proving by expert iteration (a policy with a value head, batched best-first proof search
# with KV-cached tactic sampling and a device-side frontier by top-k, a device replay buffer, fine-tuning rounds),
# multi-digit arithmetic with a looped transformer and Abacus positional embeddings (carry loops on the device,
# KV-cached greedy decoding of longer problems), NeuroSAT-style message passing on planted 3-SAT trained without labels
# (LSTM cells, index_add over the clause-literal incidence) and a symbolic-integration service (a seq2seq transformer,
# beam search with a reordered KV cache, every candidate verified by a device stack machine over its prefix tokens),
# written in torch alone), longest first (by estimate): $OUT/new73.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). premise_selection_rerank_serve uploads each request's int32
# goal tokens (up to 16 x 128) from two reused pinned host buffers on a side stream, one request ahead, waited on by
# event and record_stream'ed; symbolic_integration_beam_serve uploads each request's int16 integrand tokens (up to 8 x
# 48) the same way, one request ahead; the others are single-stream. The largest is integer_sequence_transformer_train,
# 6.89 GB in the meta run (up to 256 sequences of 144 tokens through 6 blocks in fp32, the attention matrices on the
# meta run's math path, 1,004-way logits); looped_abacus_arithmetic_train 5.97 GB (the fp32 activations of 8 block
# applications for batches of up to 384 problems); premise_selection_rerank_serve 4.08 GB (the training steps' cross-
# encoder over 256 goal+premise concatenations of up to 192 tokens); symbolic_regression_e2e_train 4.03 GB (the set
# encoder's attention over up to 200 points for up to 160 expressions); proof_search_expert_iteration_train 2.77 GB
# (pretraining batches of up to 64 x 185 tokens with 1,024-way logits, the search's prefills);
# neurosat_unsupervised_train 2.01 GB (the saved messages over ~38,000 clause-literal edges for up to 14 rounds);
# symbolic_integration_beam_serve 1.00 GB (the warm-up batches at width 512); pde_find_sindy_stridge_opt 0.34 GB (the
# library rows and bootstrap samples).
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, again
# after the resizing below) and each one on the meta device with scripts/traces/meta_run.py, one at a time, at its first
# sizes and again at its final sizes (the final runs under a 200 s limit): every figure below was measured whole at the
# final sizes (META OK, none stopped, none extrapolated).
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new73.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# looped_abacus_arithmetic_train 5.97 GB, 313,125 (~0.56M events; measured whole, 155 s);
# symbolic_regression_e2e_train 4.03 GB, 322,232 (~0.58M events; measured whole, 146 s);
# proof_search_expert_iteration_train 2.77 GB, 287,954 (~0.52M events; measured whole, 147 s);
# premise_selection_rerank_serve 4.08 GB, 318,132 (~0.57M events; measured whole, 124 s);
# integer_sequence_transformer_train 6.89 GB, 314,446 (~0.57M events; measured whole, 77 s);
# pde_find_sindy_stridge_opt 0.34 GB, 309,403 (~0.56M events; measured whole, 73 s);
# symbolic_integration_beam_serve 1.00 GB, 302,092 (~0.54M events; measured whole, 136 s);
# neurosat_unsupervised_train 2.01 GB, 312,006 (~0.56M events; measured whole, 127 s).
# Resized after the first meta runs (step, round, problem or request counts only, the models and designs unchanged):
# symbolic_regression_e2e_train (110 -> 200 steps; 170,954 at 110), pde_find_sindy_stridge_opt (7-8 -> 11-12 problems,
# 70-100 -> 140-200 snapshots a PDE, 350-500 -> 700-1,000 RK4 steps an ODE; 89,114 at the first sizes, 371,705 at 13-15
# problems), integer_sequence_transformer_train (300 -> 210 steps; stopped at 100 s at 288,703, ~1.4k a step),
# premise_selection_rerank_serve (480-520 -> 400-440 requests; 352,996 at the first sizes),
# proof_search_expert_iteration_train (5 -> 8 search rounds, 3-5 -> 4-6 expansions a round; 179,724),
# looped_abacus_arithmetic_train (250 -> 340 steps; 231,810), neurosat_unsupervised_train (150 -> 200 steps; 235,522),
# symbolic_integration_beam_serve (60-66 -> 41-45 requests; 431,699). The PDE-FIND regression's factorisations were also
# changed from linalg.cholesky to linalg.cholesky_ex (no error-check sync) and it was rerun whole (the same count).
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of optimizer ops is lower (the seven that train have models of many parameter tensors). The meta run's
# SDPA math path (every transformer here) counts a few more ops a layer than the GPU's fused kernels, and its attention
# matrices make its meta peak above what the fused kernels hold on the GPU. FFTs, cholesky_ex, cholesky_solve, median,
# topk, sort, multinomial, index_add and scatter_add may take work areas the meta device does not count.
exec bash "$(dirname "$0")/record_batch.sh" new73 looped_abacus_arithmetic_train symbolic_regression_e2e_train \
  proof_search_expert_iteration_train premise_selection_rerank_serve integer_sequence_transformer_train \
  pde_find_sindy_stridge_opt symbolic_integration_beam_serve neurosat_unsupervised_train
