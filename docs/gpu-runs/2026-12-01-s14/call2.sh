#!/usr/bin/env bash
# Session 14, call 2 (368 s): scripts/gpu/shared_check.sh as committed, with the multi-stream traces in
# the copied tree (single-stream ones set aside for the 64 MiB limit). Outputs kept here:
# gpu-tests.txt, cuda-default.jsonl, live.jsonl; the threads JSON files did not come back (':' in
# their names), their summary lines are in docs/gpu-results.md section 20.
bash scripts/gpu/shared_check.sh 2>&1 | tail -80
