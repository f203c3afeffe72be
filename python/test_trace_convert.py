"""python/expanse_trace.py without a GPU or torch: a hand-worked history,
round trips through expanse's own snapshots of real traces, and bad input.

Usage: python3 python/test_trace_convert.py [path/to/expanse]
"""

import gzip
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import checks  # noqa: E402
import expanse_trace  # noqa: E402

EXPANSE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/expanse")
TMP = tempfile.mkdtemp(prefix="expanse-trace-test-")
test = checks.test


def entry(action, addr, size=0, stream=0):
    return {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": 0, "frames": []}


@test
def a_hand_worked_history():
    # Stream handles 0 (default), 0x77 and 0x55 in order of first use; a
    # free of memory allocated before the history started; segment and
    # free_requested entries, which an allocator's user does not cause.
    history = [
        entry("segment_alloc", 0x1000, 2 << 20),
        entry("free_completed", 0x9000),
        entry("alloc", 0x1000, 512, 0x77),
        entry("alloc", 0x2000, 1000),
        entry("free_requested", 0x1000, 512, 0x77),
        entry("alloc", 0x3000, 4096, 0x55),
        entry("free_completed", 0x1000, 512, 0x77),
        entry("alloc", 0x1000, 256, 0x55),
        entry("free_completed", 0x2000, 1000),
    ]
    lines, streams, orphans = expanse_trace.from_snapshot({"segments": [], "device_traces": [history]})
    assert lines == ["a,1,512,1", "a,2,1000,0", "a,3,4096,2", "f,1", "a,4,256,2", "f,2"], lines
    assert (streams, orphans) == (3, 1), (streams, orphans)


def trace_events(path):
    """(op, id, size, stream) of every event line of a trace file."""
    opener = gzip.open if path.endswith(".gz") else open
    out = []
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            p = line.strip().split(",")
            out.append((p[0], int(p[1]), int(p[2]) if p[0] == "a" else 0, int(p[3]) if p[0] == "a" else 0))
    return out


def same_up_to_names(a, b):
    """Whether two event lists are the same but for a one-to-one renaming
    of ids and of stream indices."""
    if len(a) != len(b):
        return False
    ids, streams = {}, {}
    for (op1, i1, s1, st1), (op2, i2, s2, st2) in zip(a, b):
        if op1 != op2 or s1 != s2 or ids.setdefault(i1, i2) != i2:
            return False
        if op1 == "a" and streams.setdefault(st1, st2) != st2:
            return False
    return len(set(ids.values())) == len(ids) and len(set(streams.values())) == len(streams)


def replay(path):
    r = subprocess.run([EXPANSE, "replay", path, "--json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


@test
def real_traces_round_trip_through_expanses_own_snapshots():
    for name in ["resnet_train.trace.csv.gz", "five_streams.trace.csv", "prefetch_streams.trace.csv.gz"]:
        src = os.path.join(ROOT, "traces", name)
        snap = os.path.join(TMP, "s.pickle")
        subprocess.run([EXPANSE, "replay", src, "--snapshot", snap], capture_output=True, check=True)
        out = os.path.join(TMP, "t.trace.csv.gz")
        r = subprocess.run([sys.executable, os.path.join(HERE, "expanse_trace.py"), snap, out], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "0 frees" in r.stdout, r.stdout
        assert same_up_to_names(trace_events(src), trace_events(out)), name
        a, b = replay(src), replay(out)
        for k in ["events", "peak_requested_bytes", "peak_reserved_bytes"]:
            assert a[k] == b[k], (name, k, a[k], b[k])


def convert_fails(payload, expect, *extra):
    src = os.path.join(TMP, "bad.pickle")
    with open(src, "wb") as f:
        f.write(payload)
    r = subprocess.run(
        [sys.executable, os.path.join(HERE, "expanse_trace.py"), src, os.path.join(TMP, "x.csv"), *extra],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert expect in r.stderr and "Traceback" not in r.stderr, r.stderr


@test
def bad_snapshots_are_named_errors():
    convert_fails(b"not a pickle at all", "bad.pickle")
    convert_fails(pickle.dumps({"segments": []}), "no 'device_traces'")
    convert_fails(pickle.dumps([1, 2, 3]), "no 'device_traces'")
    convert_fails(pickle.dumps({"segments": [], "device_traces": [[]]}), "has no allocation")
    history = {"segments": [], "device_traces": [[entry("alloc", 1, 512)]]}
    convert_fails(pickle.dumps(history), "no device 3 in the snapshot (it has 1)", "--device", "3")
    convert_fails(pickle.dumps({"segments": [], "device_traces": [[{"addr": 1}]]}), "action")


shutil.rmtree(TMP, ignore_errors=True)
checks.finish()
