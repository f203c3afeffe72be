"""Checks of stream_backlog.py on small traces written here (no torch; run by .ci/run):

    python3 scripts/traces/test_stream_backlog.py
"""

import gzip
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stream_backlog  # noqa: E402

failures = []
checks = []


def check(name, ok, detail=""):
    print(f"{name}: {'ok' if ok else 'FAILED ' + detail}")
    checks.append(name)
    if not ok:
        failures.append(name)


# Stream 1 holds three uploads at once (300 bytes) before any is freed; stream 0 two blocks (5000 bytes).
# The peak of all streams together (5100: blocks 3, 4 and 5) is not the sum of the per-stream
# peaks (5300).
TRACE = """# a small trace
# op,id,size,stream
a,1,100,1
a,2,100,1
a,3,100,1
f,1
a,4,1000,0
f,2
a,5,4000,0
f,3
a,6,100,1
f,4
f,5
f,6
"""
events, peak, most = stream_backlog.backlog(TRACE.splitlines())
check("events", events == 12, str(events))
check("peak requested", peak == 5100, str(peak))
check("stream 1 most live", most.get(1) == (3, 300), str(most.get(1)))
check("stream 0 most live", most.get(0) == (2, 5000), str(most.get(0)))

with tempfile.TemporaryDirectory() as d:
    gz = os.path.join(d, "t.trace.csv.gz")
    with gzip.open(gz, "wt") as f:
        f.write(TRACE)
    r = subprocess.run([sys.executable, os.path.join(HERE, "stream_backlog.py"), gz], capture_output=True, text=True)
    check(
        "gzip file through the command",
        r.returncode == 0 and "peak requested 5,100" in r.stdout and "stream 1: 3 blocks, 300 bytes" in r.stdout,
        r.stdout + r.stderr,
    )
    for label, text, want in [
        ("double allocation", "a,1,10,0\na,1,10,0\n", "allocated twice"),
        ("free of a dead id", "a,1,10,0\nf,2\n", "not live"),
        ("malformed line", "a,1,10\n", "malformed line"),
        ("negative size", "a,1,-5,0\n", "malformed line"),
    ]:
        bad = os.path.join(d, "bad.trace.csv")
        with open(bad, "w") as f:
            f.write(text)
        r = subprocess.run([sys.executable, os.path.join(HERE, "stream_backlog.py"), bad], capture_output=True, text=True)
        check(
            label,
            r.returncode == 1 and want in r.stderr and "bad.trace.csv:" in r.stderr and "Traceback" not in r.stderr,
            r.stderr,
        )
    r = subprocess.run([sys.executable, os.path.join(HERE, "stream_backlog.py"), os.path.join(d, "missing")], capture_output=True, text=True)
    check("missing file", r.returncode == 1 and "missing" in r.stderr and "Traceback" not in r.stderr, r.stderr)

print(f"stream_backlog: {len(checks) - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
