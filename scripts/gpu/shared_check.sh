#!/usr/bin/env bash
# Shared segments (the default since the fifteenth round) on the H200, in one device call of
# about 6 minutes; nothing of this ran on a GPU when they were adopted. From the repository
# root, with this tree's binaries in .device-bin/ (expanse, libexpanse.so, gpu-tests:
# `cargo build --release && cargo test --release -p expanse-cuda --no-run`, then copy
# target/release/expanse, target/release/libexpanse.so and the gpu test binary there):
#   1. the GPU tests (their random-operations test runs the default, so shares segments);
#   2. the default replayed on --backend cuda over every trace with more than one stream,
#      its peak against the host backend's (docs/bench/peaks.json, "default"): they must agree
#      to the byte, as they did with a segment per stream;
#   3. the threaded pattern (8 threads, each on its own stream) with and without shared
#      segments: steps/s and cross-stream waits a malloc (docs/speed.md, shared segments);
#   4. the four-stream server of the fourteenth batch live with the default, and with a
#      segment per stream, wall time and peak reserved (gpu-results 19, call 3, ran it with a
#      segment per stream: 124 s, 4.88 GB);
#   5. python/expanse_trace.py's record() around a small training loop under PyTorch's own
#      allocator, the trace then replayed by expanse on CUDA (not yet run on a GPU);
#   6. scripts/gpu/capture_other_stream.py: a stream outside a CUDA graph capture allocates
#      while it runs, and must not be handed the capture stream's cached memory.
# Output: $OUT (or ./gpu-out).
set -uo pipefail
export OUT=${OUT:-$PWD/gpu-out} PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export EXPANSE_LIB=$PWD/.device-bin/libexpanse.so
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.used,driver_version --format=csv,noheader
echo "== 1. GPU tests"
EXPANSE_CUDA_TESTS=1 timeout 200 .device-bin/gpu-tests --include-ignored --test-threads 1 > "$OUT/gpu-tests.txt" 2>&1
echo "rc $?"; grep -E "test result|FAILED|panicked" "$OUT/gpu-tests.txt"
echo "== 2. the default on CUDA, traces with more than one stream"
for t in traces/*.trace.csv*; do
    streams=$(zcat -f "$t" | awk -F, '$1 == "a" { s[$4] = 1 } END { print length(s) }')
    [ "${streams:-0}" -gt 1 ] || continue
    timeout 60 .device-bin/expanse replay "$t" --backend cuda --json >> "$OUT/cuda-default.jsonl" 2>> "$OUT/cuda-default.err"
done
python3 - "$OUT/cuda-default.jsonl" <<'EOF'
import json, sys
host = json.load(open("docs/bench/peaks.json"))
same = differ = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    name = d["trace"].split("/")[-1].split(".trace")[0]
    want = host[name]["default"]["peak_reserved_bytes"]
    got = d["peak_reserved_bytes"]
    ok = got == want
    same += ok
    differ += not ok
    print(f"{name:28} cuda {got:>14} host {want:>14} {'same' if ok else 'DIFFERENT'} waits {d['cross_stream_waits']}")
print(f"{same} the same, {differ} different")
EOF
echo "== 3. threads, shared segments on and off"
for conf in share_segments:True share_segments:False; do
    for i in 1 2; do
        timeout 60 .device-bin/expanse bench --backend cuda --only threads --threads 8 --conf "$conf" --json \
            > "$OUT/threads-${conf//:/-}-$i.json" 2> "$OUT/threads-${conf//:/-}-$i.err"
        python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))['threads']
print(sys.argv[2], {n: (round(v['own_streams_ops_per_s'] / 1e3), round(v['own_streams_speedup'], 2)) for n, v in t.items()})" \
            "$OUT/threads-${conf//:/-}-$i.json" "$conf" || tail -3 "$OUT/threads-${conf//:/-}-$i.err"
    done
done
echo "== 4. the four-stream server live"
for conf in expandable_segments:True expandable_segments:True,share_segments:False; do
    timeout 170 python3 scripts/gpu/run_workload.py multistream_server --mode expanse --conf "$conf" \
        2> "$OUT/live-err-${conf//[:,]/-}.txt" | tail -1 | tee -a "$OUT/live.jsonl"
done
echo "== 5. expanse_trace.record on the GPU"
timeout 120 python3 - "$OUT/own.trace.csv.gz" <<'EOF'
import sys
sys.path.insert(0, "python")
import torch
import expanse_trace
m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.AdamW(m.parameters())
with expanse_trace.record(sys.argv[1], title="MLP, 20 steps of growing batches"):
    for i in range(20):
        x = torch.randn(64 * (i + 1), 1024, device="cuda")
        m(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
print("PyTorch's peak allocated", torch.cuda.max_memory_allocated())
EOF
.device-bin/expanse replay "$OUT/own.trace.csv.gz" --backend cuda --json
echo "== 6. a stream outside a capture"
timeout 120 python3 scripts/gpu/capture_other_stream.py 2>&1 | tail -6
ls "$OUT"
