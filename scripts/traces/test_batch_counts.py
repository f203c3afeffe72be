#!/usr/bin/env python3
"""record_batch.sh and batch_call.sh refuse a bad count before anything is recorded.

    python3 scripts/traces/test_batch_counts.py

A device call's counts (REC_JOBS, REC_LIMIT, REC_STEP, REPLAY_STEP, REPLAY_JOBS, MODES_DEADLINE) are
typed by hand into the call, often cut to fit what device time is left. A typo used to surface only in
the step that read it (xargs refusing `-P x` after the recording), with the call's time spent. Here
each script runs for real with one bad count and a recorder that is not there to run: it must exit 64,
name the count in an Error line of the batch's log, start no recorder (no recorder log in the corpus
folder) and pack nothing. A good count must pass the check: the same run with REPLAY_JOBS=6 goes on to
the recording step and packs its corpus folder, which shows the check can tell the two apart. That
run's clean-up step signals any process whose command line starts `python3 ...traces/record.py` (there
is none on CI's machine): do not run this test beside a real recording.
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
NAME = "no_such_workload_for_the_count_check"


def run(script, env_extra, out):
    env = dict(os.environ, OUT=str(out), **env_extra)
    # No torch is needed: a good run's recorder fails at its import or at the unknown name, and that
    # is enough to see that the recording step was reached.
    p = subprocess.run(["bash", str(ROOT / script), "t", NAME], env=env, cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return p.returncode, (out / "t.log").read_text() if (out / "t.log").exists() else ""


def main():
    failures = []
    cases = [("scripts/traces/record_batch.sh", {"REPLAY_JOBS": "x"}, "REPLAY_JOBS"),
             ("scripts/traces/record_batch.sh", {"REC_STEP": "0"}, "REC_STEP"),
             ("scripts/traces/record_batch.sh", {"MODES_DEADLINE": "-5"}, "MODES_DEADLINE"),
             ("scripts/traces/record_batch.sh", {"REC_LIMIT": "12a"}, "REC_LIMIT"),
             ("scripts/traces/record_batch.sh", {"REPLAY_JOBS": "00"}, "REPLAY_JOBS"),
             ("scripts/gpu/batch_call.sh", {"REPLAY_JOBS": "six"}, "REPLAY_JOBS")]
    for script, env, var in cases:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d)
            rc, log = run(script, env, out)
            recorded = (out / "corpus" / f"{NAME}.log").exists()
            packed = list(out.glob("t.tar.gz.part*"))
            if rc != 64 or f"Error: record_batch.sh: {var} " not in log or recorded or packed:
                failures.append(f"{script} {env}: rc {rc}, recorded {recorded}, packed {len(packed)}, "
                                f"log {log[:200]!r}")
    with tempfile.TemporaryDirectory() as d:
        out = Path(d)
        rc, log = run("scripts/traces/record_batch.sh", {"REPLAY_JOBS": "6", "REC_STEP": "60"}, out)
        # The run goes on to the end: its recording step logged, its (empty) corpus folder packed.
        if rc == 64 or "Error: record_batch.sh" in log or "] recorded" not in log \
                or not list(out.glob("t.tar.gz.part*")):
            failures.append(f"REPLAY_JOBS=6 was refused or not recorded: rc {rc}, log {log[:200]!r}")
    for f in failures:
        print("FAIL", f)
    print(f"batch_counts: {len(cases) + 1 - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
