#!/usr/bin/env python3
"""Compare two expanse builds' full allocation histories on every trace.

Replays every trace in `traces/` under the three modes (classic segments,
PyTorch-compatible expandable segments, expanse's default) on the
simulated device with `--snapshot`, once with each binary, and compares
the two snapshots: every segment and block, and the whole allocation
history (every allocation's and free's address, size and stream), with
timestamps left out. This is the strongest check that a change to the
allocator changed no decision: the same address for every allocation, the
same segments, in every mode.

Usage, from the repository root (about 10-20 minutes for all traces on a
2-core machine; `--only NAME` restricts to traces whose name contains it):

    scripts/snapshots_compare.py BEFORE/expanse AFTER/expanse [--only NAME]

Prints one line per run that differs and a summary; exits 1 on any
difference.
"""
import argparse
import glob
import os
import pickle
import subprocess
import sys
import tempfile

MODES = ["expandable_segments:False", "expandable_segments:True,pytorch_compat:True", ""]


def strip_times(x):
    """The snapshot without its timestamps."""
    if isinstance(x, dict):
        return {k: strip_times(v) for k, v in x.items() if k != "time_us"}
    if isinstance(x, list):
        return [strip_times(v) for v in x]
    return x


def snapshot(binary, trace, conf, path):
    """(exit status, snapshot without times, or the error reading it)."""
    args = [binary, "replay", trace, "--backend", "sim", "--snapshot", path]
    if conf:
        args += ["--conf", conf]
    r = subprocess.run(args, capture_output=True)
    try:
        with open(path, "rb") as f:
            return r.returncode, strip_times(pickle.load(f))
    except Exception as e:  # a run that wrote no snapshot still compares
        return r.returncode, repr(e)
    finally:
        if os.path.exists(path):
            os.remove(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    traces = [t for t in sorted(glob.glob("traces/*.trace.csv*")) if args.only in os.path.basename(t)]
    runs = differences = entries = 0
    with tempfile.TemporaryDirectory() as tmp:
        for trace in traces:
            for conf in MODES:
                a = snapshot(args.before, trace, conf, os.path.join(tmp, "a.pickle"))
                b = snapshot(args.after, trace, conf, os.path.join(tmp, "b.pickle"))
                runs += 1
                if a != b:
                    differences += 1
                    print(f"DIFF {trace} '{conf or 'default'}' (exit {a[0]} vs {b[0]})", flush=True)
                elif isinstance(a[1], dict):
                    entries += sum(len(x) for x in a[1]["device_traces"])
    print(f"{runs} runs, {differences} differences, {entries} history entries compared")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
