#!/usr/bin/env bash
# The seventh recording of issue 8 (2026-11-30), longest first: $OUT/new7.tar.gz.
exec bash "$(dirname "$0")/record_batch.sh" new7 mamba_lm packed_llama spec_decode hifigan_gan pointnet2_seg dino_multicrop swin_varres sd_vae_decode
