#!/usr/bin/env bash
# The forty-eighth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch48.py
# and batch48_b.py: combinatorial optimization, operations research and optimal transport on the GPU, written in
# torch alone), longest first: $OUT/new48.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (sinkhorn_pc_autoencode uploads its target point clouds from reused pinned host
# buffers on a side stream, one batch ahead, waited on by event and record_stream'ed; am_cvrp_beam_serve uploads
# each request batch's coordinates and demands the same way; the others are single-stream). Several are small:
# am_cvrp_beam_serve peaks near 0.2 GB, l2d_jobshop_ppo near 0.8 GB, pdhg_lp_batch near 1.4 GB and
# gcnn_branch_imitate under 2 GB in the meta run; none above about 3.1 GB.
# The helper that wrote them checked each one on the meta device (its meta runner, kept at /tmp/b48/meta_run.py, a
# copy of batch 47's /work/notes/meta_run.py: every "cuda" device mapped to "meta", op outputs that alias no input
# counted, peak live bytes tracked as the sum of live meta storages freed by weakref finalizers, autocast a no-op
# so fp32 sizes are counted, SDPA on a math path; all eight printed META OK, all eight whole at their final sizes)
# and ran the CPU smoke run (RECORD_SMOKE=1) on all eight at their final sizes. Events are about 1.8x the op
# outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new48.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# sinkhorn_pc_autoencode 2.25 GB (fp32), 321,300 (~0.58M events);
# pdhg_lp_batch 1.37 GB, 311,551 (~0.56M events);
# pomo_tsp_train 2.66 GB (fp32), 316,186 (~0.57M events);
# dfl_admm_shortpath 2.40 GB, 299,765 (~0.54M events);
# erdos_gnn_mis_maxcut 3.06 GB, 318,036 (~0.57M events);
# gcnn_branch_imitate 1.80 GB, 320,234 (~0.58M events);
# l2d_jobshop_ppo 0.81 GB (fp32 where the rollouts autocast), 305,277 (~0.55M events);
# am_cvrp_beam_serve 0.20 GB (fp32), 324,488 (~0.58M events).
# All eight were run whole at their final sizes, most after a first whole run that led to a resize:
# pdhg_lp_batch (as first written: 311,551), pomo_tsp_train (410,974 and 1.49 GB with 8 steps an epoch and batches of
# 64 down to 16 instances; 6 steps and 64 down to 32 now), gcnn_branch_imitate (346,647 with 560 training steps; 520
# now), sinkhorn_pc_autoencode (376,477 with 420 steps; 360 now), l2d_jobshop_ppo (350,091 and 1.35 GB with 24 PPO
# iterations and an evaluation every 8; 22 and every 7 now, and the draws that follow changed), erdos_gnn_mis_maxcut
# (a first attempt stopped on the meta device at repeat_interleave without output_size, which the code now passes, as
# it saves a device-to-host sync on the GPU too; then 245,219 and 2.81 GB with 300 steps a task and an evaluation every
# 60; 390 and every 65 now), dfl_admm_shortpath (349,541 and 4.57 GB with 80 portfolio steps and 3 shortest-path
# phases of 40 steps; 40 and 32 now, the later phases drawing smaller grids), am_cvrp_beam_serve (242,685 with 34
# request batches; 45 now).
# The machine's two cores were shared (two meta runs at once); the final runs took 2-4 minutes each.
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of Adam ops is lower (pomo_tsp_train, gcnn_branch_imitate, sinkhorn_pc_autoencode, l2d_jobshop_ppo,
# erdos_gnn_mis_maxcut and dfl_admm_shortpath use Adam; pdhg_lp_batch and am_cvrp_beam_serve have no optimizer).
exec bash "$(dirname "$0")/record_batch.sh" new48 sinkhorn_pc_autoencode pdhg_lp_batch pomo_tsp_train \
  dfl_admm_shortpath erdos_gnn_mis_maxcut \
  gcnn_branch_imitate l2d_jobshop_ppo am_cvrp_beam_serve
