#!/usr/bin/env bash
# The twenty-fifth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch25.py
# and batch25_b.py),
# longest first: $OUT/new25.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.6-0.7M events (all single-stream):
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new25.sh
# Estimates (peak requested from sizes and from a whole run at the real sizes on the meta device, which counts fp32
# where the GPU run autocasts to bf16; events from op outputs counted in that meta run, scripts/traces/smoke_cpu.py's
# counting with "cuda" mapped to "meta", scaled where a step or request count was changed after it; seconds alone on
# an H200, guessed from FLOPs, kernel launches and Python-side work; none of them measured on a GPU):
# calm_early_exit 1.5 GB (0.47 GB of bf16 weights, static KV caches up to 0.7 GB), 0.59M, 25 s (launch-bound: about
# 2100 decode steps of 16 layers with exit tests); switch_capacity_serve 2 GB (1.1 GB of bf16 weights, the (tokens,
# experts, capacity) dispatch tensors of 8192-token prefills), 0.6M, 20 s; dccrn_enhance 6 GB (fp32), 0.61M, 20 s;
# lama_inpaint 5.5 GB (fp32), 0.62M, 20 s; psmnet_stereo 5 GB (fp32; the 4-D cost volume and 3-D hourglasses), 0.62M,
# 20 s; electra_pretrain 5 GB (8.4 GB counted in fp32 on the meta device), 0.6M, 15 s; nrc_render 1 GB (2^20-query
# chunks of the hash-grid encoding), 0.6M, 15 s; fno_ns_train 2.8 GB (fp32), 0.6M, 12 s.
exec bash "$(dirname "$0")/record_batch.sh" new25 calm_early_exit switch_capacity_serve dccrn_enhance lama_inpaint psmnet_stereo electra_pretrain nrc_render fno_ns_train
