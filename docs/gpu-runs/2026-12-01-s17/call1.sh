#!/usr/bin/env bash
# Session 17, call 1: the twentieth blind batch, recorded four at a time, replayed through PyTorch's three
# allocators and in expanse's three modes on --backend cuda, then live on expanse's default. It ran as a copy of
# session 16's call2.sh with these names and limits; scripts/gpu/batch_call.sh was then made from it, with the
# same steps and these limits as its defaults, so this is that call in one line.
bash scripts/gpu/batch_call.sh new20 $(sed -n 's/.*record_batch.sh" new20 //p' scripts/traces/record_new20.sh)
