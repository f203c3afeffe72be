#!/usr/bin/env bash
# The thirteenth recording of issue 8 (held out, written blind), longest first: $OUT/new13.tar.gz.part00, part01, ...
# Every workload was sized for at most about 30 GB reserved, so that four share one H200:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new13.sh
# Estimates (peak reserved from sizes; events from CPU smoke counts, scripts/traces/smoke_cpu.py):
# zero_offload 14 GB, 0.3M (its time is the host AdamW: about 1-2 s a step); raft_flow 10 GB, 1.2M;
# longformer_doc 16 GB, 1.5M; dpsgd_wrn 8 GB, 0.8M; transfo_xl 12 GB, 1.65M; tacotron2_train 15 GB, 1.6M;
# sr_tile_serve 3 GB, 0.9M; mtdnn_multitask 7 GB, 1.5M.
exec bash "$(dirname "$0")/record_batch.sh" new13 zero_offload raft_flow longformer_doc dpsgd_wrn transfo_xl tacotron2_train sr_tile_serve mtdnn_multitask
