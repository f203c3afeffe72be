"""How much memory each stream holds at once in a trace: a live run whose frees came in another order than
the recording's (a side stream's uploads waiting longer for the compute stream's events before their free
completes) shows here as more blocks of that stream live at once.

    python3 scripts/traces/stream_backlog.py TRACE [TRACE...]

For each trace (the format of traces/README.md, gzip-compressed or not): its events, its peak requested
(the most bytes live at once; what `expanse replay` reports), and per stream index the most blocks and the
most bytes of that stream live at once. Used on rsvd_pca_stream (docs/policy-study.md, forty-first round):
its upload stream held at most 40 blocks (252 MB) at once in the run recorded under PyTorch native, and 149
(937 MB) in a live run on expanse's default. A malformed trace is an error naming its file and line.
"""

import gzip
import sys


class TraceError(Exception):
    """A line that is not a trace event, or an event that contradicts the ones before it."""


def backlog(lines, name="trace"):
    """(events, peak requested, {stream: (most blocks live at once, most bytes live at once)})."""
    live = {}  # id -> (stream, bytes)
    blocks, nbytes, most = {}, {}, {}
    total = peak = events = 0
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        p = line.split(",")
        try:
            if p[0] == "a" and len(p) == 4:
                i, size, s = p[1], int(p[2]), int(p[3])
                if i in live:
                    raise TraceError(f"{name}:{n}: id {i} allocated twice (still live)")
                if size < 0 or s < 0:
                    raise ValueError
                live[i] = (s, size)
                blocks[s] = blocks.get(s, 0) + 1
                nbytes[s] = nbytes.get(s, 0) + size
                total += size
                b, m = most.get(s, (0, 0))
                most[s] = (max(b, blocks[s]), max(m, nbytes[s]))
                peak = max(peak, total)
            elif p[0] == "f" and len(p) == 2:
                if p[1] not in live:
                    raise TraceError(f"{name}:{n}: free of id {p[1]}, which is not live")
                s, size = live.pop(p[1])
                blocks[s] -= 1
                nbytes[s] -= size
                total -= size
            else:
                raise ValueError
        except ValueError:
            raise TraceError(f"{name}:{n}: malformed line {line[:80]!r}: expected 'a,<id>,<size>,<stream>' or 'f,<id>'")
        events += 1
    return events, peak, most


def read(path):
    """The trace at `path`, its lines (gzip-compressed when it starts with gzip's magic bytes)."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    with opener(path, "rt") as f:
        return f.read().splitlines()


def main(paths):
    if not paths:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    for path in paths:
        try:
            events, peak, most = backlog(read(path), path)
        except (OSError, EOFError, UnicodeDecodeError, TraceError) as e:
            print(f"stream_backlog: {path}: {e}", file=sys.stderr)
            return 1
        streams = "; ".join(f"stream {s}: {b} blocks, {m:,} bytes" for s, (b, m) in sorted(most.items()))
        print(f"{path}: {events} events, peak requested {peak:,}; most live at once: {streams}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
