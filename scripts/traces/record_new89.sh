#!/usr/bin/env bash
# The eighty-ninth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch89.py and
# batch89_b.py: human resources, recruiting and workplace analytics, résumé entity tagging training (a BERT-style
# 6-block transformer, width 384, over 8-32 résumés of 64-512 tokens, padded to a multiple of 32, with a 512-row
# position table (the longest padded résumé) and a 12-row section table, BIO tagging of 19 entity types and a
# seniority head), interview speech analysis training (8-24 interview answers of 3-15 s of 80-band log-mel features
# padded and masked, a 4x convolutional subsampler, 6 conformer blocks under a key mask, attention pooling into 6
# competency scores and frame-level filler-word tagging), candidate-job matching training (two 3-block transformer
# towers over 32-128 candidate-posting pairs plus one extra negative posting each, texts of 32-256 tokens padded to a
# multiple of 16 with 256-row position tables, categorical side features from offset tables, InfoNCE both ways with a
# learned temperature, recall@10 evaluations), skill-graph link prediction training (a 3-layer relational GCN by
# index_select and index_add over drawn subgraphs of 20,000-60,000 nodes of a 150,000-row skill and job-title table,
# 5 relations, DistMult scoring of 8,192-32,768 held-out links against 4 corrupted tails each, MRR evaluations),
# shift-roster policy training (worker, shift and cross attention over 8-32 sites of 20-120 workers and 40-240
# shifts, padded and masked, 8 rosters sampled per site by Gumbel-max, REINFORCE against their mean with a reward of
# skill coverage, overtime, contracted hours, night fairness and availability), employee attrition survival training
# (256-1,536 employees of 3-48 months each, padded and masked, a GRU written out month by month, competing-risk
# discrete-time hazards for voluntary and involuntary exits, cumulative incidence at evaluation points), a
# job-recommendation service (a seeker tower over 50 application slots and 8 profile fields for 1-512 seekers a
# request, a 150,001-row job table whose last row is the pad, scored against 150,000 catalogue jobs, applied jobs
# masked by scatter, top-200 re-ranked by an MLP to top-20) and a video-interview expression service (1-6 clips of
# 8-48 frames of 112 x 112 uint8 face crops a request, a residual convnet per frame, a 48-row frame-position table,
# 2 temporal blocks under a key mask, expression probabilities and engagement per clip), written in torch alone),
# longest first (by estimate): $OUT/new89.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). job_recommend_serve uploads each request's int32
# application slots and profile fields (up to 512 seekers, two spans of one buffer) from two reused pinned host buffers
# on a side stream, one request ahead, waited on by event and record_stream'ed; interview_expression_serve uploads
# each request's uint8 pixels (up to 6 clips x 48 frames x 3 x 112 x 112, one span) the same way; the other six are
# single-stream.
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, again
# after the resizing below). It had 40 minutes in all on a shared 2-core machine; each meta device run
# (scripts/traces/meta_run.py, one at a time, 80-150 s timeout) either ran whole or was stopped, and then the ops per
# step or per request were read from the op counts at its readbacks and the step and request counts set from them.
# None was measured on a GPU:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new89.sh
# Figures (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs):
# resume_entity_tagging_train ~4.2 GB (4.20 GB in a stopped run), ~318,000 (~0.57M events; ~744 a step and a few
#   hundred an evaluation from the readbacks of a run stopped after 90 s at about 165,000, about step 220 of 400;
#   400 -> 425 steps);
# interview_speech_conformer_train ~2.9 GB (2.94 GB in a stopped run), ~314,000 (~0.57M events; ~1,488 a step and
#   ~450 an evaluation from the readbacks of a run stopped after 98 s at 189,418, about step 125 of 180; 180 -> 210
#   steps, evaluations every 45 -> 52);
# candidate_job_two_tower_train ~5.9 GB (5.86 GB in a stopped run after the resizing), ~314,000 (~0.57M events;
#   ~1,164 a step and ~1,380 an evaluation from the readbacks of runs stopped after 88 s at about 169,000; the first
#   run, at 64-256 pairs a step, peaked at 12.18 GB: 64-256 -> 32-128 pairs a step (5.86 GB), 560 -> 265 steps,
#   evaluations every 140 -> 66);
# skill_graph_linkpred_train ~2.2 GB (2.21 GB measured whole), 313,762 measured whole after the resizing (~0.56M
#   events; ~386 a step from a first whole run at 300 steps, 115,865 op outputs, 2.13 GB; 300 -> 815 steps,
#   evaluations every 75 -> 163);
# shift_roster_policy_train ~0.8 GB (0.76 GB in a stopped run), ~317,000 (~0.57M events; ~1,085 a step and ~400-1,100
#   an evaluation from the readbacks of a run stopped after 148 s at 320,747, about step 295 of 300; 300 -> 290 steps,
#   evaluations every 60 -> 58);
# attrition_survival_train ~1.7 GB (1.73 GB in a stopped run), ~315,000 (~0.57M events; ~1,750 a step (the
#   written-out GRU over up to 48 months, forward and backward) and ~800 an evaluation from the readbacks of a run
#   stopped after 88 s at 206,310, about step 110 of 120; 120 -> 178 steps, evaluations every 30 -> 44);
# job_recommend_serve ~0.7 GB (0.74 GB measured whole), 318,301 measured whole after the resizing (~0.57M events;
#   ~47 a request from a first whole run at 2,100-2,200 requests, 100,409 op outputs; 2,100-2,200 -> 6,700-6,900
#   requests);
# interview_expression_serve ~0.3 GB (0.30 GB measured whole), 310,361 measured whole after the resizing (~0.56M
#   events; ~181 a request from the readbacks of a first run stopped after 78 s at 174,387 over 972 requests;
#   1,150-1,250 -> 1,700-1,800 requests).
# The meta run counts optimizers per parameter (the meta device has no foreach kernels), so the GPU's count of those
# ops is lower. The meta run's SDPA math path (the transformers of resume_entity_tagging_train,
# candidate_job_two_tower_train, interview_speech_conformer_train, shift_roster_policy_train and
# interview_expression_serve) counts a few more ops a layer than the GPU's fused kernels, and its attention matrices
# make its meta peak above what the fused kernels hold on the GPU. cuDNN convolutions, topk, sort, multinomial and
# index_add may take work areas the meta device does not count. Figures estimated from stopped runs include a share
# of start-up in the ops per step, and the peaks of stopped or resized runs may not have reached the largest draws.
exec bash "$(dirname "$0")/record_batch.sh" new89 resume_entity_tagging_train interview_speech_conformer_train \
  candidate_job_two_tower_train skill_graph_linkpred_train shift_roster_policy_train attrition_survival_train \
  job_recommend_serve interview_expression_serve
