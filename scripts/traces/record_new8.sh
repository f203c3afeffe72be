#!/usr/bin/env bash
# The eighth recording of issue 8 (2026-11-30), longest first: $OUT/new8.tar.gz.
exec bash "$(dirname "$0")/record_batch.sh" new8 two_tower effnet_varres mt_transformer esrgan_sr video_diffusion vision_serving dcgan_train
