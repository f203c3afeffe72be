#!/usr/bin/env bash
# The ninth recording of issue 8 (2026-11-30), longest first: $OUT/new9.tar.gz.
exec bash "$(dirname "$0")/record_batch.sh" new9 compiled_gpt_train llm_continuous_batching caption_generate qa_serving sam_serving patchtst_train gnn_sampled_inference
