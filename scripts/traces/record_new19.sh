#!/usr/bin/env bash
# The nineteenth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch19.py),
# longest first: $OUT/new19.tar.gz.part00, part01, ...
# Every workload was sized for at most about 25 GB reserved, so that four share one H200:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new19.sh
# Estimates (peak reserved from sizes; events from CPU smoke counts at small layer counts scaled to the real layer
# and step counts, maskrcnn_serve's counted on CPU at full size, scripts/traces/smoke_cpu.py; seconds alone on an
# H200, guessed from FLOPs, PCIe copies and Python-side work; none of them measured on a GPU):
# emb_offload_rec 2 GB (plus 2 GB pinned host table; 2 streams), 0.95M, 40 s (host-side unique and gathers);
# gat_linkpred 10 GB, 1.0M, 40 s; zoo_eval_sweep 4 GB, 1.1M, 30 s (ten models built one after another);
# sae_topk_train 3 GB, 1.26M, 25 s; rvq_codec_train 5 GB, 1.35M, 20 s; ctc_asr_serve 3 GB, 1.15M, 20 s;
# longdoc_chunked_prefill 5 GB (17 GB if SDPA falls back to its math kernel for the 2048 x 32k masked chunks),
# 1.3M, 20 s; maskrcnn_serve 6 GB, 1.2M, 15 s.
exec bash "$(dirname "$0")/record_batch.sh" new19 emb_offload_rec gat_linkpred zoo_eval_sweep sae_topk_train rvq_codec_train ctc_asr_serve longdoc_chunked_prefill maskrcnn_serve
