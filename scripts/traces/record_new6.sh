#!/usr/bin/env bash
# The sixth recording of issue 8 (2026-11-30), longest first: $OUT/new6.tar.gz.
exec bash "$(dirname "$0")/record_batch.sh" new6 mixtral_gen ppo_rl unet3d_seg wav2vec2_ctc neox_train vit_mae bart_train nerf_mlp
