"""Replay an allocation trace through PyTorch's own device allocator.

Runs on a GPU machine. One fresh process per mode, so each starts from an
empty cache:

    python3 torch_replay.py TRACE native|expandable|async

prints one JSON object: PyTorch's peak reserved and allocated bytes and its
retry and OOM counts for the trace. Each trace stream index gets its own
CUDA stream (index 0 is the default stream); allocations go through
`torch.cuda.caching_allocator_alloc` and frees through
`caching_allocator_delete`, exactly in the trace's order.
"""

import gzip
import json
import os
import sys
import time

MODES = {
    "native": "expandable_segments:False",
    "expandable": "expandable_segments:True",
    "async": "backend:cudaMallocAsync",
}


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    events = []
    with opener(path, "rt") as f:
        for line in f:
            if not line or line[0] == "#":
                continue
            p = line.rstrip("\n").split(",")
            if p[0] == "a":
                events.append((int(p[1]), int(p[2]), int(p[3])))
            elif p[0] == "f":
                events.append((int(p[1]),))
    return events


def main():
    path, mode = sys.argv[1], sys.argv[2]
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = MODES[mode]
    os.environ.pop("PYTORCH_ALLOC_CONF", None)
    import torch

    events = read(path)
    torch.cuda.init()
    streams = {0: torch.cuda.default_stream()}
    live = {}
    alloc, delete = torch.cuda.caching_allocator_alloc, torch.cuda.caching_allocator_delete
    requested = peak_requested = 0
    oom = None
    t0 = time.time()
    for e in events:
        if len(e) == 3:
            i, size, s = e
            st = streams.get(s)
            if st is None:
                st = streams[s] = torch.cuda.Stream()
            try:
                live[i] = (alloc(size, 0, st), size)
            except torch.OutOfMemoryError as err:
                oom = str(err).splitlines()[0]
                break
            requested += size
            peak_requested = max(peak_requested, requested)
        else:
            ptr, size = live.pop(e[0])
            requested -= size
            if ptr:
                delete(ptr)
    torch.cuda.synchronize()
    seconds = time.time() - t0
    st = torch.cuda.memory_stats()
    print(
        json.dumps(
            {
                "trace": os.path.basename(path).split(".")[0],
                "mode": mode,
                "conf": MODES[mode],
                "peak_reserved_bytes": st.get("reserved_bytes.all.peak"),
                "peak_allocated_bytes": st.get("allocated_bytes.all.peak"),
                "peak_requested_bytes": peak_requested,
                "num_alloc_retries": st.get("num_alloc_retries"),
                "num_ooms": st.get("num_ooms"),
                "oom": oom,
                "events": len(events),
                "seconds": round(seconds, 2),
                "torch": torch.__version__,
            },
            sort_keys=True,
        )
    )


if __name__ == "__main__":
    main()
