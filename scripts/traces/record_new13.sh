#!/usr/bin/env bash
# The thirteenth recording of issue 8 (held out, written blind), longest first: $OUT/new13.tar.gz.part00, part01, ...
# Every workload was sized for at most about 30 GB reserved, so that four share one H200:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new13.sh
exec bash "$(dirname "$0")/record_batch.sh" new13 zero_offload raft_flow longformer_doc dpsgd_wrn transfo_xl tacotron2_train sr_tile_serve mtdnn_multitask
