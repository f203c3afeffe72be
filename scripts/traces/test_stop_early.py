"""Checks of stop_early.run_until_term in child processes sent real signals (no torch; run by .ci/run):

    python3 scripts/traces/test_stop_early.py
"""

import os
import select
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# The child: runs a workload under run_until_term, prints what it returned, then does "the writing"
# (a second sleep) and prints "written"; READY tells the parent when the workload has started.
CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from stop_early import run_until_term

def forever(log):
    print("READY", flush=True)
    while True:
        try:
            sum(range(10000))
        except Exception:  # a workload's own handler must not swallow the stop
            log.append("swallowed")

def short(n):
    print("READY", flush=True)
    time.sleep(n)

log = []
which = sys.argv[2]
r = run_until_term(forever, log) if which == "forever" else run_until_term(short, 0.2)
print("returned", r, log, flush=True)
time.sleep(float(sys.argv[3]))
print("written", flush=True)
"""


CHILDREN = []


def child(which, write_s):
    p = subprocess.Popen([sys.executable, "-c", CHILD, HERE, which, str(write_s)], stdout=subprocess.PIPE, text=True)
    CHILDREN.append(p)
    return p


def finish(p, timeout=20):
    """The child's remaining output, once it has exited; a failure (and the child killed) if it does not."""
    try:
        out, _ = p.communicate(timeout=timeout)
        return out
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError(f"the child did not exit within {timeout} s") from None


def line_of(p, timeout=20):
    """The child's next line of output; a failure if none comes within `timeout` seconds."""
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    assert ready, f"no output from the child within {timeout} s"
    return p.stdout.readline()


def wait_ready(p):
    line = line_of(p)
    assert line.strip() == "READY", line


def a_stopped_workload_returns_its_seconds_and_the_writing_runs():
    p = child("forever", 0.3)
    wait_ready(p)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    out = finish(p)
    assert p.returncode == 0, (p.returncode, out)
    lines = out.split("\n")
    assert lines[0].startswith("returned ") and lines[0].endswith(" []"), out
    seconds = float(lines[0].split()[1])
    assert 0.4 <= seconds < 20, out
    assert lines[1] == "written", out


def a_workload_that_ends_returns_none():
    p = child("short", 0.0)
    wait_ready(p)
    out = finish(p)
    assert p.returncode == 0 and out.split("\n")[0] == "returned None []", (p.returncode, out)


def a_second_sigterm_does_not_cut_the_writing():
    p = child("forever", 1.0)
    wait_ready(p)
    time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    assert line_of(p).startswith("returned "), "the first SIGTERM did not stop the workload"
    p.send_signal(signal.SIGTERM)
    out = finish(p)
    assert p.returncode == 0 and out == "written\n", (p.returncode, out)


def main():
    checks = [
        a_stopped_workload_returns_its_seconds_and_the_writing_runs,
        a_workload_that_ends_returns_none,
        a_second_sigterm_does_not_cut_the_writing,
    ]
    failed = 0
    for c in checks:
        try:
            c()
            print(f"{c.__name__} ... ok")
        except AssertionError as e:
            failed += 1
            print(f"{c.__name__} ... FAILED: {e}")
        finally:
            for p in CHILDREN:
                if p.poll() is None:
                    p.kill()
                    p.wait()
    print(f"stop_early: {len(checks) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
