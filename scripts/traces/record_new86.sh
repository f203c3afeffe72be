#!/usr/bin/env bash
# The eighty-sixth recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch86.py and
# batch86_b.py: cultural heritage, archaeology and the digital humanities), a damaged-document inpainting diffusion
# trainer (a 4-level U-Net, 64-128-192-256 channels with self-attention at the lowest level, over the noisy page, the
# damaged page and a mask of 1-8 drawn rectangles per page, 4-8 pages a step at 128-256 pixels, epsilon loss weighted
# inside the damage, 25-step RePaint-style DDIM restorations at evaluation points), handwritten text recognition
# training for manuscripts (a 4-stage CNN and a 6-block transformer encoder over 64-pixel lines of 256-1536 pixels
# padded per step under a frame mask, a 384-row position table for the widest padded line's 384 frames, CTC loss with
# each line's own frame and label lengths of 8-90 characters, greedy decoding of 48 lines at evaluation points),
# archival photograph super-resolution training (an RCAN of 4 groups x 6 channel-attention blocks with x2 and x4
# pixel-shuffle tails, the scale drawn per step, 8-32 patches of 32-64 pixels degraded on the device by a per-image
# Gaussian blur, area downsampling, grain and fading, L1 and FFT-amplitude loss, a 384 x 512 x4 evaluation), sherd
# classification training from 3-D scans (a DGCNN of 4 edge convolutions over k = 20 feature-space neighbours by topk,
# 8-16 scans of 512-1,024 points a step, ware, vessel-part and fabric heads, a 4-rotation voted evaluation), a museum
# collection search service (a CLIP-style dual encoder, text queries of 1-64 x 3-77 tokens padded to a multiple of 8
# with an 80-row position table, image queries of 1-24 photographs at 224 and ingestion requests written into the
# catalogue by index_copy, top-20 of a 200,000-object bf16 catalogue under a department-visibility torch.where),
# named-entity tagging and dating training for historical texts (a 6-block encoder, width 384, over documents of
# 48-512 tokens under a 12,288-token budget, a 512-row position table, 9 BIO tags and a Gaussian soft decade label over
# 1200-1950), archaeological survey site dating training (a 4-layer GATv2 over 3,000-10,000 sites linked to 8 spatial
# neighbours by a chunked cdist and topk, softmax over incoming edges by scatter_reduce amax and index_add, 14 period
# heads on a drawn 25-40% labelled share) and an artwork attribution service (a 12-block ViT-S/16 over 1-16 paintings
# at 224-384 pixels with its 14 x 14 position grid resized bicubically, 1,500 artists masked by the claimed school,
# top-5 read back), written in torch alone), longest first (by estimate): $OUT/new86.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). artwork_attribution_vit_serve uploads each request's uint8
# pixels (up to 16 x 3 x 384 x 384) and the claimed school ids (two spans of one buffer) from two reused pinned host
# buffers on a side stream, one request ahead, waited on by event and record_stream'ed; museum_clip_search_serve
# uploads int32 token ids, query lengths and department-visibility bits (three spans of one buffer) and uint8 pixels
# (up to 24 x 3 x 224 x 224) the same way from two pairs of reused pinned buffers, one request ahead; the other six are
# single-stream.
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, again
# after the resizing below). It had 45 minutes in all on a shared 2-core machine, so most meta device runs
# (scripts/traces/meta_run.py, one at a time) were stopped by a 45-110 s timeout: each workload's ops per step or per
# request were read from the op counts at its readbacks, and the step and request counts were then set from them. Two
# ran whole at their first sizes; no figure below was measured whole at the final sizes; all are estimates, and none
# was measured on a GPU:
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new86.sh
# manuscript_htr_ctc_train's CTC backward has no meta kernel in PyTorch (aten::_ctc_loss_backward), so the workload
# registers a shape-only one for the Meta dispatch key alone (torch.library, once, a gradient shaped like log_probs);
# the CUDA kernel is untouched. Its first meta run had also failed on a bf16 attention mask against fp32 queries (the
# meta run has no autocast); the mask now takes the activations' dtype.
# Figures (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs):
# document_inpaint_diffusion_train ~6.8 GB (6.77 GB in a stopped run), ~321,000 (~0.58M events; ~1,150 a step and
#   ~5,460 an evaluation of 25 DDIM steps from the readbacks of a run stopped after 68 s at 110,230, about step 88; a
#   first run at 8-20 pages a step reached 16.65 GB, so 4-8 pages now (ops per step unchanged); 260 steps, not resized);
# manuscript_htr_ctc_train ~6.4 GB (6.37 GB in a stopped run), ~315,000 (~0.57M events; ~872 a step and ~280 an
#   evaluation from the readbacks of a run stopped after 88 s at 158,852; lines a step 16-40 -> 12-32 before it for
#   memory, 300 -> 360 steps, evaluations every 75 -> 90);
# archival_photo_sr_train ~3.9 GB (3.93 GB in a stopped run), ~315,000 (~0.57M events; ~1,483 a step and ~290 an
#   evaluation from the readbacks of a run stopped after 98 s at 269,093; 420 -> 212 steps);
# sherd_pointcloud_dgcnn_train ~3.3 GB (3.27 GB, META OK whole at 220 steps: 84,095), ~307,000 (~0.55M events; ~372
#   a step from the readbacks of a second run stopped after 43 s, ~535 an evaluation of 4 rotations from the whole
#   run; 220 -> 820 steps, evaluations every 55 -> 205);
# museum_clip_search_serve ~1.4 GB (1.43 GB in a stopped run), ~316,000 (~0.57M events; ~502 a request over the drawn
#   mix of text, image and ingestion requests from the readbacks of a run stopped after 88 s at 175,758 over 348
#   requests; 1,250-1,350 -> 600-660 requests);
# historical_ner_dating_train ~3.2 GB (3.21 GB in a stopped run), ~316,000 (~0.57M events; ~724 a step and ~254 an
#   evaluation from the readbacks of a run stopped after 98 s at 165,452; 330 -> 435 steps, evaluations every
#   110 -> 145);
# survey_site_gnn_train ~1.1 GB (1.13 GB, META OK whole at 300 steps: 181,705), ~315,000 (~0.57M events; ~600 a step
#   by scaling the whole run; 300 -> 520 steps, evaluations every 75 -> 130; not re-run);
# artwork_attribution_vit_serve ~0.5 GB (0.45 GB in a stopped run), ~316,000 (~0.57M events; ~400 a request from the
#   readbacks of a run stopped after 88 s at 132,547 over 329 requests; 1,100-1,200 -> 760-820 requests; a first run
#   read its results back by .cpu(), which meta_run.py does not log as a readback, so both services read back by
#   .tolist() / .item() now).
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of those ops is lower. The meta run's SDPA math path counts a few more ops a layer than the GPU's fused
# kernels, and its attention matrices make its meta peak above what the fused kernels hold on the GPU. cuDNN
# convolutions, CTC loss, topk, cdist, poisson, scatter_reduce and index_add may take work areas the meta device does
# not count. The figures are estimates from op counts at the readbacks of runs stopped early (ops per step include a
# share of start-up), and the peaks of the stopped runs may not have reached the largest draws.
exec bash "$(dirname "$0")/record_batch.sh" new86 document_inpaint_diffusion_train manuscript_htr_ctc_train \
  archival_photo_sr_train sherd_pointcloud_dgcnn_train museum_clip_search_serve historical_ner_dating_train \
  survey_site_gnn_train artwork_attribution_vit_serve
