#!/usr/bin/env bash
# The thirty-first recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch31.py
# and batch31_b.py),
# longest first: $OUT/new31.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (crnn_ocr_serve uploads every request's pixels and siamrpn_track every frame on a
# side stream; the others are single-stream). Several are small: mod_vit_serve, crnn_ocr_serve, siamrpn_track,
# audio_kd_train, protonet_fewshot_train (fp32) and copynet_semparse_train (fp32) peak under 1 GB in the meta run.
# The helper that wrote them ran the CPU smoke run (RECORD_SMOKE=1) on all eight; the meta runner (every "cuda"
# device mapped to "meta", op outputs counted, peak live bytes tracked) was run whole at real sizes on some of them
# only (see below): it ran out of time. Events are about 1.8x the op outputs counted.
# CAUTION: nn.LSTM / nn.GRU run decomposed per time step on the meta (and CPU) device, one cuDNN call on the GPU,
# so meta counts of crnn_ocr_serve, onsets_frames_train and copynet_semparse_train (its encoder) overstate the GPU's.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new31.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16; none measured on a GPU):
# mod_vit_serve 0.21 GB meta, 328k op outputs (~0.59M events; META OK whole); crnn_ocr_serve 0.03 GB, not finished
# on meta (over 525k with 560 requests, inflated by the per-step LSTM); ~325k estimated on the GPU with 500 requests;
# audio_kd_train 0.88 GB, 234k with 580 steps (META OK whole), ~319k by scaling to 790 steps now (per-step count is
# shape-independent; not re-run); siamrpn_track 0.31 GB, 341k (~0.61M; META OK whole with 16 batches; over 475k
# with 26); copynet_semparse_train 0.41 GB, 394k on meta (META OK whole; its GRU encoder
# decomposed per step there), ~310k estimated on the GPU (66 steps of 8-40 hand-unrolled decoder steps); protonet_fewshot_train 0.52 GB, 253k with 1700 episodes (META OK whole),
# ~318k by scaling to 2150 episodes now (not re-run); bigbird_doc_train 4.74 GB, 294k (~0.53M; META OK whole); onsets_frames_train 2.40 GB meta peak, over 450k on meta with 330 steps (killed; LSTM-inflated; GPU count
# not measured, perhaps 0.3-0.45M op outputs). See the helper's report for which meta runs passed.
exec bash "$(dirname "$0")/record_batch.sh" new31 siamrpn_track mod_vit_serve crnn_ocr_serve audio_kd_train \
  copynet_semparse_train protonet_fewshot_train bigbird_doc_train onsets_frames_train
