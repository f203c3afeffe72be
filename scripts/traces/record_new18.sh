#!/usr/bin/env bash
# The eighteenth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch18.py and
# batch18_b.py,
# registered into record.py's list), longest first: $OUT/new18.tar.gz.part00, part01, ...
# Every workload was sized for at most about 25 GB reserved, so that four share one H200:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new18.sh
# Estimates (peak reserved from sizes, for basicvsr_train, painn_md and pointpillars_train from the bytes autograd
# saves, summed on CPU at small sizes and scaled; events from CPU smoke counts at the real layer counts, scaled to the
# real step counts, scripts/traces/smoke_cpu.py; seconds alone on an H200, guessed from FLOPs, PCIe copies and
# Python-side work; none of them measured on a GPU):
# layer_offload_gen 11 GB, 1.0M (2 streams; about 1.3 GB over PCIe a token, slower if the four jobs share the link),
# 25 s; colbert_rerank 2 GB, 1.2M, 25 s; prefix_cache_chat 5 GB, 1.2M, 20 s; painn_md 8 GB, 1.3M, 20 s;
# asha_sweep_cifar 5 GB, 1.1M, 20 s; pointpillars_train 8 GB, 1.2M, 20 s; alphazero_selfplay 2 GB, 1.2M, 20 s;
# basicvsr_train 12 GB (15 GB if it draws a lone 30-frame 128x128 clip, over its batch budget), 1.25M, 15 s.
exec bash "$(dirname "$0")/record_batch.sh" new18 layer_offload_gen colbert_rerank prefix_cache_chat painn_md asha_sweep_cifar pointpillars_train alphazero_selfplay basicvsr_train
