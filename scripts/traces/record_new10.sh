#!/usr/bin/env bash
# The tenth recording of issue 8 (2026-11-30), longest first: $OUT/new10.tar.gz.
exec bash "$(dirname "$0")/record_batch.sh" new10 compiled_vision_serving llava_train rlhf_rloo dpo_train detr_train whisper_generate paged_kv_serving vq_image_gen
