#!/usr/bin/env bash
# The twentieth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch20.py
# and batch20_b.py),
# longest first: $OUT/new20.tar.gz.part00, part01, ...
# Every workload was sized for at most about 25 GB reserved, so that four share one H200, and for 0.5-0.8M events
# (all single-stream):
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new20.sh
# Estimates (peak reserved from sizes; events from CPU smoke counts scaled to the real step and layer counts,
# scripts/traces/smoke_cpu.py; seconds alone on an H200, guessed from FLOPs and Python-side work; none of them
# measured on a GPU):
# awq_quantize 10 GB, 0.67M, 30 s; ig_explain 7 GB, 0.6M, 25 s; hyena_lm 15 GB, 0.71M, 15 s;
# maml_fewshot 3 GB, 0.65M, 15 s; gdas_search 1 GB, 0.64M, 15 s (many small kernels);
# pgd_adv_train 2 GB, 0.61M, 15 s; fedavg_sim 1 GB, 0.68M, 15 s; ffjord_cnf 2 GB, 0.57M (the loosest: the adaptive
# solver takes more steps as the flow trains), 10 s.
exec bash "$(dirname "$0")/record_batch.sh" new20 awq_quantize ig_explain hyena_lm maml_fewshot gdas_search pgd_adv_train fedavg_sim ffjord_cnf
