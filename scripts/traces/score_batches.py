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
   both geometric means of the smallest capacity over the peak requested;
5. unless --no-compare, each batch's losses at their peaks (a table): the default's
   figure against PyTorch's best, then from `expanse replay --peak-snapshot` (sim
   backend, the pickles into DIR) the event of the peak, the request that raised it,
   the free memory then (MiB in blocks, the largest), the page moves over the whole
   replay, and whether the request was more than any one free block but not more than
   all of them (replay's own words, shortened).

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


def table_rows(table):
    """compare's table as {trace: its 11 cells}, the header and summary rows included."""
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) == 11:
            rows[cells[0]] = cells
    return rows


def capacity(table, names):
    """Per batch: expanse's and its PyTorch-expandable mode's smallest capacity over peak requested."""
    rows = table_rows(table)
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


PYTORCH_MODES = ("native", "expandable", "cudaMallocAsync")
PEAK_EVENT = re.compile(r"after event (\d+) of (\d+)")
PEAK_REQUEST = re.compile(r"a request of ([\d.]+) MiB when ([\d.]+) MiB was free in (\d+) blocks?, "
                          r"the largest ([\d.]+) MiB: ([^\n]+)")
MOVES = re.compile(r"^pages\s.*\bmoved (\d+)", re.M)


def losses(table, names):
    """The batch's traces compare's table marks `loss`: (name, expanse, PyTorch's best, its mode)."""
    out = []
    rows = table_rows(table)
    for cells in (rows[n] for n in names if n in rows):
        if cells[7] == "loss":
            theirs = [(float(v.split()[0]), m) for v, m in zip(cells[3:6], PYTORCH_MODES) if v not in ("-", "")]
            best, mode = min(theirs)
            out.append((cells[0], float(cells[6]), best, mode))
    return out


def peak_state(replay_text):
    """What `expanse replay --peak-snapshot` says of the peak, as the loss table's cells."""
    ev, req, mv = PEAK_EVENT.search(replay_text), PEAK_REQUEST.search(replay_text), MOVES.search(replay_text)
    event = f"{int(ev.group(1)):,} ({int(ev.group(2)):,})" if ev else "-"
    moves = mv.group(1) if mv else "-"
    if not req:
        return [event, "-", "-", moves, "no request raised it"]
    verdict = req.group(5).strip()
    if verdict.startswith("more than any one free block but not more than all"):
        verdict = "fragmented: more than any block, not more than all"
    return [event, f"{req.group(1)} MiB", f"{req.group(2)} in {req.group(3)}, {req.group(4)}",
            moves, verdict]


def loss_table(traces, work, table, names):
    """Step 5 for one batch: a markdown table of its losses at their peaks."""
    rows = ["| loss | default / PyTorch's best | peak at event (of) | request | free then: MiB in blocks, "
            "the largest | page moves | at the peak |", "|---|---|---:|---:|---|---:|---|"]
    for name, ours, best, mode in losses(table, names):
        trace = next(traces.glob(f"{name}.trace.csv*"), None)
        cells = ["-", "-", "-", "-", "no trace in the copy"]
        if trace:
            out = subprocess.run([str(BINARY), "replay", str(trace), "--backend", "sim", "--peak-snapshot",
                                  str(work / f"peak-{name}.pickle")], capture_output=True, text=True)
            cells = peak_state(out.stdout) if out.returncode == 0 else ["-"] * 4 + [out.stderr.strip()[-200:]]
        rows.append(f"| {name} | {ours:.4f} / {best:.4f} ({mode}) | " + " | ".join(cells) + " |")
    return "\n".join(rows) if len(rows) > 2 else "no losses"


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
    for n, ns in names.items():
        print(f"== batch {n} losses at their peaks\n{loss_table(traces, a.work, table, ns)}", flush=True)
    if a.candidate:
        table = compare(traces, a.work / "compare-candidate.md", a.candidate)
        for n, ns in names.items():
            print(f"batch {n} capacity, {a.candidate}: {capacity(table, ns)}")


if __name__ == "__main__":
    main()
