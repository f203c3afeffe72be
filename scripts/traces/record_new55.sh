#!/usr/bin/env bash
# The fifty-fifth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch55.py and
# batch55_b.py: particle physics and astronomy on the GPU, collider and detector physics, gravitational waves, radio
# and optical astronomy and cosmology, written in torch alone), longest first (by estimate):
# $OUT/new55.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.5-0.65M events (gw_strain_trigger_serve uploads each request's two-detector strain, 2-16 segments
# of 4-16 s at 2,048 Hz in fp32, from reused pinned host buffers on a side stream, one request ahead, waited on by
# event and record_stream'ed; radio_unrolled_imaging_train uploads each batch's uv-tracks (40k-160k visibilities'
# uv-cells, int64, and weights) the same way, one batch ahead; the others are single-stream). The largest is
# plasticc_lc_transformer_train, near 4.6 GB in the meta run (attention over buckets of up to 384 observations at
# 32-192 light curves, counted on the meta device's math path in fp32, and evaluation batches of twice the token
# budget); particle_transformer_jet_train peaks near 3.9 GB (the pairwise-feature embedding and the attention bias,
# batch x heads x N^2, over jets padded to 128 constituents); trackml_gnn_edge_train 3.56 GB (the interaction
# network's edge activations over up to 165k edges, 8 iterations); strong_lens_cutout_train 3.49 GB (the ResNet over
# 256 cutouts of 64^2, or evaluation batches of 256 at 160^2); pm_nbody_emulator_train 3.18 GB (CIC corner indices
# and weights of 4.1M particles at 160^3, then the 3D UNet over 2-6 crops of up to 64^3);
# radio_unrolled_imaging_train 2.57 GB (6 unrolled CNN priors at 384^2 or 6 skies at 256^2);
# gw_strain_trigger_serve 0.61 GB (a chunk of 32 templates' SNR series over 16 segments of 16 s);
# calo_flow_shower_train 0.55 GB (the couplings' activations over 2,048 showers of 533 voxels).
# The helper that wrote them checked each one on the meta device (its meta runner, kept at /tmp/b55/meta_run.py, a
# copy of /work/notes/meta_run.py with the traces directory pointed at this checkout: every "cuda" device mapped to
# "meta", op outputs that alias no input counted, peak live bytes tracked as the sum of live meta storages freed by
# weakref finalizers, autocast a no-op so fp32 sizes are counted, SDPA on a math path; all eight printed META OK,
# all eight whole at their final sizes) and ran the CPU smoke run (RECORD_SMOKE=1) on all eight at their final
# sizes. Events are about 1.8x the op outputs counted.
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new55.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# pm_nbody_emulator_train 3.18 GB (fp32 where the UNet autocasts), 307,588 (~0.55M events);
# trackml_gnn_edge_train 3.56 GB (fp32 where the MLPs autocast), 340,722 (~0.61M events);
# radio_unrolled_imaging_train 2.57 GB (fp32 where the CNN priors autocast), 328,701 (~0.59M events);
# particle_transformer_jet_train 3.90 GB (fp32 where the transformer autocasts), 319,859 (~0.58M events);
# gw_strain_trigger_serve 0.61 GB (fp32 where the CNN autocasts), 319,243 (~0.57M events);
# plasticc_lc_transformer_train 4.59 GB (fp32 where the transformer autocasts), 302,241 (~0.54M events);
# strong_lens_cutout_train 3.49 GB (fp32 where the ResNet autocasts), 298,735 (~0.54M events);
# calo_flow_shower_train 0.55 GB (fp32), 323,288 (~0.58M events).
# All eight were run whole at their final sizes, each after a first run (whole or cut short once its count or peak
# was clear) that led to a resize: particle_transformer_jet_train (164,579 with 120 steps and an evaluation every
# 40; 240 and every 80 now), trackml_gnn_edge_train (147,108 and a 14.59 GB peak with 600-2,000 tracks, 16
# neighbours, hidden 128 and 70 + 90 events; 400-1,500 tracks, 10 neighbours, hidden 64 and 120 + 220 events now),
# gw_strain_trigger_serve (348,243 with 2,400 requests; 2,200 now), pm_nbody_emulator_train (56,470 with 7
# simulations of 12-24 steps and 150 UNet steps; 10 of 60-120 and 780 now), calo_flow_shower_train (285,188 with
# 110 steps a particle; 125 now), radio_unrolled_imaging_train (94,375 and a 7.58 GB peak with 150 steps and 2-8
# skies of any size; 530 steps and a budget of 6 x 256^2 pixels a batch now); plasticc_lc_transformer_train (cut at
# 88 steps of 170 with a 9.10 GB peak, about 920 op outputs a step; the token budget halved to 12,288, evaluation
# batches cut to twice the budget, 330 steps now) and strong_lens_cutout_train (cut at 59 steps of 200, about 620 op
# outputs a step; 510 steps now) were resized from first runs cut short.
# The machine's two cores were shared (two meta runs at a time, beside another helper's); the final runs took
# 112-409 s each.
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of optimizer ops is lower (particle_transformer_jet_train and plasticc_lc_transformer_train use AdamW,
# pm_nbody_emulator_train's UNet AdamW, strong_lens_cutout_train SGD with Nesterov momentum, the others Adam;
# gw_strain_trigger_serve trains nothing). The meta run's SDPA math path (particle_transformer_jet_train's attention
# with its pairwise bias) and nn.MultiheadAttention inside nn.TransformerEncoder (plasticc_lc_transformer_train) count
# a few more ops a layer than the GPU's fused kernels. The FFTs (torch.fft's rfft, irfft, rfftn, irfftn, fft2, ifft2)
# may take cuFFT work areas on the GPU that the meta device does not count.
exec bash "$(dirname "$0")/record_batch.sh" new55 pm_nbody_emulator_train trackml_gnn_edge_train \
  radio_unrolled_imaging_train particle_transformer_jet_train gw_strain_trigger_serve \
  plasticc_lc_transformer_train strong_lens_cutout_train calo_flow_shower_train
