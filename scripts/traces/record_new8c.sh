#!/usr/bin/env bash
# The eighth recording's EfficientNet-B2 workload, which ran past the
# recording limit at 240 steps twice (110 s and 300 s; no figure of it was
# seen), now 120 steps with the default limit: $OUT/new8c.tar.gz.
# (mt_transformer, cut in the first call, was recorded on its own with
# record_batch.sh new8b mt_transformer effnet_varres; 2026-11-30.)
exec bash "$(dirname "$0")/record_batch.sh" new8c effnet_varres
