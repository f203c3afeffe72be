#!/usr/bin/env bash
# Session 9, call 3b: call 3's new11.tar.gz (26 MB) was over the device tool's 16 MiB a file, so it did
# not come back; the machine was still warm, and this packed call 3's /tmp/n11/corpus again in two parts.
# (record_batch.sh now splits its tarball itself.)
cd /tmp/n11/corpus && tar -czf $OUT/n11a.tar.gz torch.jsonl *.live.json *.log offload_train.trace.csv.gz evoformer_train.trace.csv.gz deberta_eval_loop.trace.csv.gz dit_train.trace.csv.gz && tar -czf $OUT/n11b.tar.gz schnet_forces.trace.csv.gz gpipe_streams.trace.csv.gz fastspeech2_train.trace.csv.gz streaming_asr.trace.csv.gz && ls -la $OUT
