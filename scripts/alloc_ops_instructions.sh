#!/bin/bash
# Instructions per hot pair (each bench size) and per mixed step, from
# callgrind over crates/expanse-cli/examples/alloc_ops.rs (sim device):
# a counted run minus a run that counts nothing, over the operations.
#   cargo build --release --example alloc_ops
#   scripts/alloc_ops_instructions.sh [target/release/examples/alloc_ops]
set -euo pipefail
B=${1:-target/release/examples/alloc_ops}
N=20000
ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | grep -o "refs: *[0-9,]*" | tr -dc 0-9; }
for size in 512 65536 1048576 8388608 67108864; do
    a=$(ir "$B" pair $size $N)
    b=$(ir "$B" pair $size 0)
    echo "pair $size: $(((a - b) / N))"
done
a=$(ir "$B" mixed $N)
b=$(ir "$B" mixed 0)
echo "mixed step: $(((a - b) / N))"
