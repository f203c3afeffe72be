#!/usr/bin/env bash
# The eleventh recording of issue 8 (2026-11-30), longest first: $OUT/new11.tar.gz.
exec bash "$(dirname "$0")/record_batch.sh" new11 offload_train evoformer_train deberta_eval_loop dit_train schnet_forces gpipe_streams fastspeech2_train streaming_asr
