#!/bin/bash
# Instructions per hot pair (each bench size) and per mixed step, from
# callgrind over crates/expanse-cli/examples/alloc_ops.rs (sim device,
# CachingAllocator called directly), or with --capi over
# crates/expanse-capi/examples/capi_ops.rs (the C ABI's expanse_alloc and
# expanse_free, host backend): a counted run minus a run that counts
# nothing, over the operations.
#   cargo build --release --example alloc_ops -p expanse-cli
#   scripts/alloc_ops_instructions.sh [target/release/examples/alloc_ops]
#   cargo build --release --example capi_ops -p expanse-capi
#   scripts/alloc_ops_instructions.sh --capi [target/release/examples/capi_ops]
set -euo pipefail
if [ "${1:-}" = --capi ]; then
    B=${2:-target/release/examples/capi_ops}
    # The host backend's memory is real: a capacity the mixed pattern's
    # 256 live allocations (up to 64 MiB each) fit in.
    export EXPANSE_BACKEND=host EXPANSE_HOST_MEMORY=$((32 << 30))
    unset EXPANSE_ALLOC_CONF PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF
else
    B=${1:-target/release/examples/alloc_ops}
fi
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
