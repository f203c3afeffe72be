#!/usr/bin/env bash
# Pack $OUT/DIR into parts of at most 15 MiB (the device tool returns at
# most 8 files of 16 MiB), then remove DIR.   scripts/traces/pack.sh DIR
set -eu
OUT=${OUT:-gpu-out}
tar -C "$OUT" -cf - "$1" | split -b 15M - "$OUT/$1.tar.part-"
rm -rf "${OUT:?}/$1"
ls -la "$OUT"
