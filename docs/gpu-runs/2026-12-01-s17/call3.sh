#!/usr/bin/env bash
# Session 17, call 3: the twenty-first blind batch (scripts/traces/record_new21.sh's workloads), recorded four at a
# time, replayed through PyTorch's three allocators and in expanse's three modes on --backend cuda, then live on
# expanse's default while the call has time (scripts/gpu/batch_call.sh).
bash scripts/gpu/batch_call.sh new21 $(sed -n 's/.*record_batch.sh" new21 //p' scripts/traces/record_new21.sh)
