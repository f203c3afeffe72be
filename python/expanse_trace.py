"""Allocation traces of your own PyTorch workload, in the format `expanse
replay` and `expanse compare` read (traces/README.md):

    a,<id>,<bytes requested>,<stream index>
    f,<id>

Record a few steps of a workload (on a GPU, PyTorch's own allocator or
expanse's, the trace is the same: what the program asked for):

    import expanse_trace
    with expanse_trace.record("mine.trace.csv.gz", title="my model, 20 steps"):
        for _ in range(20):
            step()

or convert a snapshot with allocation history that PyTorch wrote
(`torch.cuda.memory._record_memory_history()` before the workload, then
`torch.cuda.memory._dump_snapshot("snap.pickle")`; expanse's `replay
--snapshot` writes the same format):

    python3 python/expanse_trace.py snap.pickle mine.trace.csv.gz [--device N]

then `cargo run --release -- compare mine.trace.csv.gz` replays it under
expanse in PyTorch-native mode, in PyTorch-expandable mode and under its
default. Only `alloc` and `free_completed` entries count (a free is
complete when the streams that used the block are done with it, which is
when an allocator may reuse it); frees of memory allocated before the
history started, or dropped from a full history ring, are left out and
counted. Stream handles become indices in order of first use, the default
stream (handle 0) being 0. Needs no torch to convert. A pickle can run
code when it is loaded: convert only snapshots you trust.
"""

import contextlib
import gzip
import pickle
import sys

HEADER = "# op,id,size,stream : a=alloc (id, bytes requested, stream index), f=free (id)"


class TraceError(Exception):
    """A snapshot that holds no usable allocation history."""


def trace_lines(entries):
    """The trace lines of one device's history entries (dicts with
    `action`, `addr`, `size`, `stream`), the number of stream indices, and
    how many frees had no allocation in the history."""
    streams = {0: 0}
    live = {}
    next_id = 1
    out = []
    orphans = 0
    for e in entries:
        act = e["action"]
        if act == "alloc":
            s = streams.setdefault(e["stream"], len(streams))
            live[e["addr"]] = next_id
            out.append(f"a,{next_id},{e['size']},{s}")
            next_id += 1
        elif act == "free_completed":
            i = live.pop(e["addr"], None)
            if i is None:
                orphans += 1
            else:
                out.append(f"f,{i}")
    return out, len(streams), orphans


def from_snapshot(snapshot, device=0):
    """Trace lines, stream count and orphan frees of `device` in a
    snapshot dict; a `TraceError` that says what is missing."""
    if not isinstance(snapshot, dict) or "device_traces" not in snapshot:
        raise TraceError(
            "not a memory snapshot with history (no 'device_traces'): record with "
            "torch.cuda.memory._record_memory_history() before the workload, then _dump_snapshot"
        )
    traces = snapshot["device_traces"]
    if not 0 <= device < len(traces):
        raise TraceError(f"no device {device} in the snapshot (it has {len(traces)})")
    lines, streams, orphans = trace_lines(traces[device])
    if not any(line.startswith("a,") for line in lines):
        raise TraceError(
            f"device {device}'s history has no allocation: was _record_memory_history() on while the workload ran?"
        )
    return lines, streams, orphans


def write(path, lines, title):
    """Write the trace to `path` (gzip-compressed when it ends in .gz)."""
    text = "\n".join([f"# {title}", HEADER] + lines) + "\n"
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt") as f:
        f.write(text)


@contextlib.contextmanager
def record(path, title="a PyTorch workload", device=None, max_entries=50_000_000):
    """Record the allocations made inside the block on `device` (the
    current one by default) and write them to `path` on leaving it."""
    import torch

    torch.cuda.synchronize(device)
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=max_entries)
    try:
        yield
        torch.cuda.synchronize(device)
        snapshot = torch.cuda.memory._snapshot()
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    index = torch.cuda.current_device() if device is None else int(device)
    lines, streams, orphans = from_snapshot(snapshot, index)
    write(path, lines, f"{title} (recorded with PyTorch {torch.__version__} on {torch.cuda.get_device_name(index)})")
    print(f"{path}: {len(lines)} events on {streams} stream(s); {orphans} frees of earlier memory left out")


def main(argv):
    import argparse

    p = argparse.ArgumentParser(description="Convert a PyTorch memory snapshot with history to an expanse trace.")
    p.add_argument("snapshot", help="a pickle from torch.cuda.memory._dump_snapshot (or expanse replay --snapshot)")
    p.add_argument("out", help="the trace to write (.trace.csv, or .trace.csv.gz compressed)")
    p.add_argument("--device", type=int, default=0, help="which device's history (default 0)")
    a = p.parse_args(argv)
    try:
        with open(a.snapshot, "rb") as f:
            snapshot = pickle.load(f)
        lines, streams, orphans = from_snapshot(snapshot, a.device)
    except (OSError, pickle.UnpicklingError, EOFError, TraceError, KeyError, TypeError, AttributeError) as e:
        print(f"expanse_trace: {a.snapshot}: {e}", file=sys.stderr)
        return 1
    write(a.out, lines, f"converted from {a.snapshot}, device {a.device}")
    print(f"{a.out}: {len(lines)} events on {streams} stream(s); {orphans} frees of memory allocated before the history left out")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
