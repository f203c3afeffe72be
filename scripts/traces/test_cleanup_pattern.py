#!/usr/bin/env python3
"""record_batch.sh's clean-up after the recording step stops the recorders and nothing else.

    python3 scripts/traces/test_cleanup_pattern.py

The clean-up runs `pkill -f "$rec"` with the pattern of record_batch.sh's `rec=` line. With a bare
"traces/record.py" it also matched the shell that ran the device call whenever that call's command line
named the file (docs/gpu-results.md 31, call 1: two calls killed once their recordings were done). Here
the pattern is read from the script and sent, with the real pkill, to two processes started for the test:
a stand-in recorder whose command line is a recorder's (python3, then scripts/traces/record.py, a name
and an output folder, as record_corpus.sh starts them) must stop; a shell whose command line names
scripts/traces/record.py must live. A third check shows the test can fail: the old bare pattern matches
that shell.
"""
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def cleanup_pattern():
    lines = [line for line in (ROOT / "scripts/traces/record_batch.sh").read_text().splitlines()
             if line.startswith("rec=")]
    if len(lines) != 1:
        sys.exit(f"test_cleanup_pattern: expected one rec= line in record_batch.sh, found {len(lines)}")
    return shlex.split(lines[0].split("=", 1)[1])[0]


def started(args):
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    return p


def gone_within(p, seconds):
    try:
        p.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


def matched_by(pattern, pid):
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    return str(pid) in out


def main():
    pattern = cleanup_pattern()
    recorder = started(["python3", "-c", "import time; time.sleep(60)",
                        "scripts/traces/record.py", "some_workload", "/tmp/out/corpus"])
    caller = started(["bash", "-c", "sleep 60; : scripts/traces/record.py; : python3 scripts/traces/record.py x"])
    failures = []
    try:
        if not matched_by("traces/record.py", caller.pid):
            failures.append("the old bare pattern no longer matches the stand-in caller: the test shows nothing")
        subprocess.run(["pkill", "-TERM", "-f", pattern])
        if not gone_within(recorder, 10):
            failures.append(f"the clean-up pattern {pattern!r} did not stop a recorder")
        if gone_within(caller, 1):
            failures.append(f"the clean-up pattern {pattern!r} stopped a caller that only names record.py")
    finally:
        for p in (recorder, caller):
            if p.poll() is None:
                p.kill()
                p.wait()
    for f in failures:
        print("FAILED:", f)
    print(f"cleanup_pattern: {3 - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
