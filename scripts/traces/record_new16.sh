#!/usr/bin/env bash
# The sixteenth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch16.py and
# batch16_b.py,
# registered into record.py's list), longest first: $OUT/new16.tar.gz.part00, part01, ...
# Every workload was sized for at most about 25 GB reserved, so that four share one H200:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new16.sh
# Estimates (peak reserved from sizes; events from CPU smoke counts at the real layer counts and sizes,
# scripts/traces/smoke_cpu.py; seconds alone on an H200, guessed from FLOPs and Python-side work):
# ivf_index_build 3 GB, 0.55M (2 streams), 40 s; multi_lora_serve 5 GB, 0.8M (2 streams), 35 s;
# musicgen_generate 3 GB, 1.5M, 30 s; gsplat_train 10 GB, 1.25M, 30 s; mod_train 15 GB, 0.95M, 30 s;
# recsys_rank_serve 3 GB, 0.8M (2 streams), 30 s; gradcache_embed 16 GB, 1.1M, 25 s; rwkv_serve 3 GB, 1.4M, 25 s.
exec bash "$(dirname "$0")/record_batch.sh" new16 ivf_index_build multi_lora_serve musicgen_generate gsplat_train mod_train recsys_rank_serve gradcache_embed rwkv_serve
