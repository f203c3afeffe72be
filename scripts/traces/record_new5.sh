#!/usr/bin/env bash
# The fifth recording of issue 8 (2026-11-30), longest first: $OUT/new5.tar.gz.
exec bash "$(dirname "$0")/record_batch.sh" new5 gen_mistral t5_generate detect_frcnn segment_deeplab embed_serving distill_vit video_r3d lstm_lm
