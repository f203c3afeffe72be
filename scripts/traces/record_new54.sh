#!/usr/bin/env bash
# The fifty-fourth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch54.py and
# batch54_b.py: medicine and clinical data on the GPU, medical imaging, computational pathology, health records and
# clinical text, written in torch alone), longest first (by estimate):
# $OUT/new54.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (wsi_mil_feat_stream_train uploads each slide's fp16 tile embeddings, 300-16,000
# tiles of 1,024 dims, from reused pinned host buffers on a side stream, one slide ahead, waited on by event and
# record_stream'ed; echo_lv_ef_video_serve uploads each echo video, 32-240 uint8 frames of 3 x 112 x 112, the same
# way, one video ahead; the others are single-stream). The largest is icd_labelattn_notes_train, near 5.59 GB in
# the meta run (the label-wise attention of 8,922 codes over up to 3,072 tokens a note, batches of 4 notes, and the
# encoder's attention over 24 chunks of 512 on the meta run's SDPA math path, fp32 where the model autocasts);
# behrt_ehr_risk_train peaks near 3.71 GB (a 12k-token budget of sequences up to 512 through 6 layers of 12
# heads on the math path; a first version that evaluated 256 patients of length 512 in one batch peaked at 7.17 GB
# and now evaluates under the token budget), eeg_seizure_window_train 2.90 GB (64 windows of up to 23 channels
# as STFT images through the CNN, the recordings held on the device), cxr_multilabel_asl_train 2.56 GB (ResNet-34
# at 224 x 224 with batch 64 to 448 x 448 with batch 16, fp32 where it autocasts), cxr_report_gen_train 1.70 GB;
# the others are small: echo_lv_ef_video_serve 0.93 GB, cox_multimodal_survival_cv 0.82 GB (the Kronecker
# fusion of 512 patients and the cohorts' features), wsi_mil_feat_stream_train 0.44 GB.
# The helper that wrote them checked each one on the meta device (its meta runner, kept at /tmp/b54/meta_run.py, a
# copy of /work/notes/meta_run.py with the traces directory pointed at this checkout: every "cuda" device mapped to
# "meta", op outputs that alias no input counted, peak live bytes tracked as the sum of live meta storages freed by
# weakref finalizers, autocast a no-op so fp32 sizes are counted, SDPA on a math path; all eight printed META OK,
# all eight whole at their final sizes, icd_labelattn_notes_train's before a change of 3 op outputs a batch, below)
# and ran the CPU smoke run (RECORD_SMOKE=1) on all eight at their final sizes. Events are about 1.8x the op outputs
# counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new54.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# cxr_multilabel_asl_train 2.56 GB (fp32 where the CNN autocasts), 314,297 (~0.57M events);
# eeg_seizure_window_train 2.90 GB (fp32 where the networks autocast), 305,021 (~0.55M events);
# echo_lv_ef_video_serve 0.93 GB (fp32 where the networks autocast), 316,419 (~0.57M events);
# icd_labelattn_notes_train 5.59 GB (fp32 where the model autocasts), 313,671 in the run, about 315,039 since
#   (~0.57M events);
# cxr_report_gen_train 1.70 GB (fp32 where the transformers autocast), 351,943 (~0.63M events);
# behrt_ehr_risk_train 3.71 GB (fp32 where the encoder autocasts), 337,630 (~0.61M events);
# wsi_mil_feat_stream_train 0.44 GB (fp32), 315,473 (~0.57M events);
# cox_multimodal_survival_cv 0.82 GB (fp32), 311,910 (~0.56M events).
# All eight were run whole at their final sizes; all eight after first runs (whole, or cut short once the count a
# step was clear) that led to resizes: wsi_mil_feat_stream_train (174,598 with 300 training slides and 5 epochs; 340
# and 8 now), cxr_multilabel_asl_train (about 555 op outputs a step with a ResNet-18, cut at 76k, made a ResNet-34;
# then 277,355 with 110, 100 and 90 steps at the three resolutions; 125, 115 and 100 now), icd_labelattn_notes_train
# (150,963 with 210 steps; 440 with an evaluation every 110 now; after its final meta run, 313,671, each chunk's
# first token was made always valid so that an all-padding chunk's attention has a key, 3 op outputs a batch more,
# 1,368 in all, about 315,039 now, counted by the smoke run's change, 586 to 595, not by another meta run),
# cox_multimodal_survival_cv (175,920 with 3 cohorts and 60 steps a fold; 4 cohorts and 80 now),
# echo_lv_ef_video_serve (a first try failed at indexing the area curve by a 0-d argmax tensor, which the meta
# device cannot take, since taken from max and min; then 280,689 with 900 videos; 1,020 now),
# behrt_ehr_risk_train (a first try at a 16k-token budget peaked at 4.9 GB within 46 steps, cut; the budget made 12k
# and the steps raised from 170 and 70 to 280 and 90 from its count a step; that whole run gave 325,102 but 7.17 GB,
# from an evaluation of 256 sequences of 512 in one batch, since batched under the token budget), cxr_report_gen_train
# (a first try failed at the view embeddings' broadcast, which the smoke run's batch of 2 hid; the next, cut at 52k
# after 50 steps, showed about 1,000 a step, and 150 steps became 250), eeg_seizure_window_train (cut at 115k after
# 255 steps, about 450 a step; 360 steps with a scan every 120 became 680 with a scan every 170).
# The machine's two cores were shared (up to three meta runs of this batch and two of another at a time); the final
# runs took 300-450 s each.
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of optimizer ops is lower (cxr_multilabel_asl_train, icd_labelattn_notes_train, behrt_ehr_risk_train,
# cxr_report_gen_train and eeg_seizure_window_train use AdamW, wsi_mil_feat_stream_train and
# cox_multimodal_survival_cv Adam; echo_lv_ef_video_serve trains nothing). The meta run's SDPA math path (the note
# encoder, BEHRT, the ViT and the report decoder) and nn.TransformerEncoder's composite path (the EEG model's
# transformer across channels) count a few more ops a layer than the GPU's fused kernels.
exec bash "$(dirname "$0")/record_batch.sh" new54 cxr_multilabel_asl_train eeg_seizure_window_train \
  echo_lv_ef_video_serve icd_labelattn_notes_train cxr_report_gen_train behrt_ehr_risk_train \
  wsi_mil_feat_stream_train cox_multimodal_survival_cv
