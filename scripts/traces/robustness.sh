#!/usr/bin/env bash
# Build synthetic and derived traces (into ${DIR:-/tmp/expanse-traces}) and
# compare PyTorch's allocators with expanse on them (sim backend).
# Usage: scripts/traces/robustness.sh   (after cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${DIR:-/tmp/expanse-traces}
mkdir -p "$DIR"
for t in gpt2_train resnet_train; do
  python3 scripts/traces/repeat.py "traces/$t.trace.csv.gz" 5 "$DIR/$t-x6.csv.gz"
  python3 scripts/traces/variants.py "traces/$t.trace.csv.gz" streams "$DIR/$t-streams.csv.gz"
  python3 scripts/traces/variants.py "traces/$t.trace.csv.gz" small "$DIR/$t-small.csv.gz"
done
for k in kvcache random smallmany; do
  python3 scripts/traces/synth.py "$k" "$DIR/$k.csv.gz"
done
./target/release/expanse compare "$DIR"/*.csv.gz --backend sim
