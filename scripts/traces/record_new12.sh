#!/usr/bin/env bash
# The twelfth recording of issue 8 (held out, written blind on 2026-11-30), longest first: $OUT/new12.tar.gz.
exec bash "$(dirname "$0")/record_batch.sh" new12 t5_span marian_beam esm_mlm llm_distill yolo_mosaic qat_resnet perceiver_bytes graphormer_mol
