#!/usr/bin/env python3
"""Score recorded blind batches as docs/policy-study.md registers them, in one command.

    python3 scripts/traces/score_batches.py [--work DIR] [--no-compare] [--candidate CONF] NN [NN...]

NN is a batch number whose scripts/traces/record_newNN.sh names its workloads, and
whose traces are already in traces/ (scripts/traces/add_batch.py). The steps, each
printed as it ends:

1. copies traces/ (every *.trace.csv.gz and *.trace.csv, five_streams included, and
   corpus.json) to DIR/traces (default /tmp/expanse-score), so that the replays do not
   read the checkout while it changes;
2. scripts/policy_sweep.py over the whole corpus for the default and the six settings
   of the thirty-third round (SETTINGS below), per split;
3. scripts/policy_sweep.py --batch for each batch: the table a round prints;
4. unless --no-compare, `expanse compare DIR/traces` into DIR/compare.md (the README's
   table, several minutes), then per batch the registered capacity figures: on how
   many traces expanse needs a smaller device than its PyTorch-expandable mode, and
   both geometric means of the smallest capacity over the peak requested.

--candidate CONF (a registered candidate's keys) adds CONF to the settings of steps 2
and 3, and to step 4 a second `expanse compare --conf CONF` (DIR/compare-candidate.md)
with the candidate's capacity figures per batch.

Needs target/release/expanse (`cargo build --release`).
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
BINARY = ROOT / "target" / "release" / "expanse"
SETTINGS = (
    "move_whole_first:False",
    "grow_fewest:False",
    "small_from_large:False",
    "move_reuse_window:128",
    "move_budget:0",
    "overshoot_share:32",
)


def batch_names(number):
    """The workloads record_newNN.sh records, in its order."""
    path = ROOT / "scripts" / "traces" / f"record_new{number}.sh"
    if not path.is_file():
        sys.exit(f"score_batches: no {path.relative_to(ROOT)} (is {number} a recorded batch?)")
    text = path.read_text().replace("\\\n", " ")
    m = re.search(rf'record_batch\.sh"\s+new{number}\s+([^\n]+)', text)
    if not m:
        sys.exit(f"score_batches: {path.name} has no `record_batch.sh\" new{number} NAME...` line")
    return m.group(1).split()


def copy_traces(dest):
    dest.mkdir(parents=True, exist_ok=True)
    src = ROOT / "traces"
    files = [src / "corpus.json", *sorted(src.glob("*.trace.csv.gz")), *sorted(src.glob("*.trace.csv"))]
    for f in files:
        d = dest / f.name
        if not d.exists() or d.stat().st_size != f.stat().st_size or d.stat().st_mtime < f.stat().st_mtime:
            shutil.copy2(f, d)
    return len(files) - 1


def compare(traces, dest, conf=None):
    """`expanse compare` over the copied corpus (with `--conf conf`), its table saved in dest."""
    args = [str(BINARY), "compare", str(traces)] + (["--conf", conf] if conf else [])
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"score_batches: {' '.join(args[1:])} failed:\n{out.stderr[-2000:]}")
    dest.write_text(out.stdout)
    print(f"== compare{' --conf ' + conf if conf else ''}: {dest}", flush=True)
    return out.stdout


def sweep(traces, *args):
    env = {**os.environ, "TRACES": str(traces)}
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "policy_sweep.py"), *args], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"score_batches: policy_sweep.py {' '.join(args)} failed:\n{out.stderr[-2000:]}")
    return out.stdout


def capacity(table, names):
    """Per batch: expanse's and its PyTorch-expandable mode's smallest capacity over peak requested."""
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) == 11:
            rows[cells[0]] = cells
    cap = re.compile(r"([\d,]+) MiB \(([\d.]+)\)")
    ours, theirs, smaller, missing = [], [], 0, []
    for n in names:
        if n not in rows:
            missing.append(n)
            continue
        a, b = cap.match(rows[n][9]), cap.match(rows[n][10])
        if not (a and b):
            missing.append(n)
            continue
        theirs.append(float(a.group(2)))
        ours.append(float(b.group(2)))
        smaller += int(b.group(1).replace(",", "")) < int(a.group(1).replace(",", ""))
    if missing:
        return f"no capacity figures for {', '.join(missing)}"

    def gmean(v):
        return math.exp(sum(map(math.log, v)) / len(v))

    return (f"smaller than PyTorch-expandable mode on {smaller} of {len(names)}; geometric mean "
            f"{gmean(ours):.4f} of the peak requested against {gmean(theirs):.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("batches", nargs="+", type=int, metavar="NN")
    ap.add_argument("--work", type=Path, default=Path("/tmp/expanse-score"))
    ap.add_argument("--no-compare", action="store_true")
    ap.add_argument("--candidate", metavar="CONF", help="a registered candidate's keys")
    a = ap.parse_args()
    settings = SETTINGS + ((a.candidate,) if a.candidate else ())
    if not BINARY.is_file():
        sys.exit(f"score_batches: no expanse binary at {BINARY} (build it with `cargo build --release`)")
    names = {n: batch_names(n) for n in a.batches}
    traces = a.work / "traces"
    print(f"== {copy_traces(traces)} traces copied to {traces}", flush=True)
    print(sweep(traces, *settings), flush=True)
    for n, ns in names.items():
        print(f"== batch {n}\n" + sweep(traces, "--batch", ",".join(ns), *settings), flush=True)
    if a.no_compare:
        return
    table = compare(traces, a.work / "compare.md")
    for n, ns in names.items():
        print(f"batch {n} capacity: {capacity(table, ns)}")
    if a.candidate:
        table = compare(traces, a.work / "compare-candidate.md", a.candidate)
        for n, ns in names.items():
            print(f"batch {n} capacity, {a.candidate}: {capacity(table, ns)}")


if __name__ == "__main__":
    main()
