#!/usr/bin/env python3
"""How sure the held-out verdict is: the blind batches as the unit of evidence.

    python3 scripts/traces/batch_bootstrap.py [--table FILE] [--resamples N] [--seed S]

The traces of one blind batch share a writer, a domain and a recording call, so
they are not independent draws; the batches are. This script takes every recorded
blind batch from N on (--from N, default 25: the first the default as it stands judged
unseen; scripts/traces/record_newNN.sh with a workload in the table; one that
never recorded is named and left out), and for the traces of those batches prints:

- per batch, the geometric means of expanse's default and of PyTorch's best
  allocator per trace (fragmentation = peak reserved / peak requested), and how
  many batches the default's mean is below, level with or above;
- a two-sided sign test on those batches (ties left out);
- a cluster bootstrap: batches drawn with replacement (N resamples, seed S), the
  traces of the drawn batches pooled, the ratio of the default's geometric mean to
  PyTorch's best per trace (and to PyTorch expandable's alone) each time; the 2.5th
  and 97.5th percentiles of that ratio are the interval printed; and the same for the
  driver estimate against expanse in PyTorch-expandable mode (compare's driver column).

--against CONF[=FILE] (repeatable) pairs a setting with the default: per trace the
setting's figure over the default's, the batches where its mean is lower and higher (a
sign test), and the same cluster bootstrap of the pooled ratio (FILE: a saved table of
`expanse compare traces/ --json --conf CONF`; else the script runs it).

--table FILE reads `expanse compare traces/ --json` output (JSON lines); without it
the script runs `target/release/expanse compare traces/ --json --no-capacity`
(about 4 minutes on 2 cores). The figures are expanse's own replays and PyTorch's
recorded replays in traces/corpus.json, as in the README's table.
"""
import argparse
import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import score_batches  # noqa: E402

ROOT = score_batches.ROOT
BINARY = score_batches.BINARY
MODES = ("pytorch_native", "pytorch_expandable", "pytorch_async")
# The first batch the default as it stands judged unseen: its last rule (whole free
# blocks give their pages first, `move_whole_first`) was adopted after batch 24 was
# scored (docs/policy-study.md, twenty-seventh round), and shared segments,
# small_from_large and grow_fewest after batches 15, 18 and 21. Batches before it were
# held out from the rules adopted after them but not from the default now
# (--from 5 counts them all).
FIRST_UNSEEN = 25


def recording_scripts():
    """(number, workload names) of every numbered record_newNN.sh, by number."""
    numbers = []
    for path in (ROOT / "scripts" / "traces").glob("record_new*.sh"):
        m = re.fullmatch(r"record_new(\d+)\.sh", path.name)
        if m:
            numbers.append(int(m.group(1)))
    return [(n, score_batches.batch_names(n)) for n in sorted(numbers)]


def read_table(lines):
    """Per trace: (expanse's default, PyTorch's best, PyTorch expandable) as fragmentation, and
    expanse's driver estimate over its PyTorch-expandable mode's (None where there is none)."""
    rows = {}
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            v = json.loads(line)
        except json.JSONDecodeError as e:
            sys.exit(f"batch_bootstrap: line {number} of the table is not JSON ({e}); was it cut short?")
        if "trace" not in v:
            continue
        f = v.get("fragmentation")
        if not isinstance(f, dict):
            sys.exit(f"batch_bootstrap: line {number} ({v['trace']}) has no fragmentation figures")
        theirs = [f[m] for m in MODES if f.get(m) is not None]
        if not theirs or f.get("expanse") is None:
            continue
        driver = v.get("driver_estimate_ratio")
        rows[v["trace"]] = (f["expanse"], min(theirs), f.get("pytorch_expandable"), driver)
    return rows


def gmean(values):
    return math.exp(sum(math.log(x) for x in values) / len(values))


def batch_means(batches, rows):
    """Per batch: (number, traces, default's mean, best's mean, wins, ties, losses)."""
    out = []
    for number, names in batches:
        ours = [rows[n][0] for n in names]
        best = [rows[n][1] for n in names]
        wins = sum(o < b for o, b in zip(ours, best))
        ties = sum(o == b for o, b in zip(ours, best))
        out.append((number, len(names), gmean(ours), gmean(best), wins, ties, len(names) - wins - ties))
    return out


def sign_test(below, above):
    """Two-sided binomial p-value of `below` against `above` at even odds."""
    n = below + above
    k = min(below, above)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def log_ratios(rows, column):
    """Per trace: log(expanse's default) - log(its figure in `column`), where it has one."""
    return {n: math.log(r[0]) - math.log(r[column]) for n, r in rows.items() if r[column] is not None}


def paired_log_ratios(rows, other):
    """Per trace in both tables: log(other's default) - log(this table's default)."""
    return {n: math.log(other[n][0]) - math.log(r[0]) for n, r in rows.items() if n in other}


def pooled_ratio(chosen, logs):
    """exp of the mean log ratio over the traces of the chosen batches, pooled."""
    values = [logs[n] for names in chosen for n in names]
    return math.exp(sum(values) / len(values))


def bootstrap(batches, logs, resamples, seed):
    """The pooled ratio on the batches as they are and its 2.5/97.5 percentiles over resamples."""
    rng = random.Random(seed)
    groups = [names for _, names in batches]
    ratios = sorted(pooled_ratio([rng.choice(groups) for _ in groups], logs) for _ in range(resamples))
    lo = ratios[int(0.025 * (resamples - 1))]
    hi = ratios[int(math.ceil(0.975 * (resamples - 1)))]
    return pooled_ratio(groups, logs), lo, hi


def load(table, conf=None):
    """Rows of a saved table, or of `expanse compare traces/ --json --no-capacity [--conf CONF]`."""
    if table:
        try:
            return read_table(Path(table).read_text().splitlines())
        except OSError as e:
            sys.exit(f"batch_bootstrap: cannot read {table}: {e}")
    if not BINARY.is_file():
        sys.exit(f"batch_bootstrap: no {BINARY} (build it with `cargo build --release`)")
    cmd = [str(BINARY), "compare", str(ROOT / "traces"), "--json", "--no-capacity"] + (["--conf", conf] if conf else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"batch_bootstrap: {' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    return read_table(out.stdout.splitlines())


def recorded_batches(rows, first):
    """(number, names with a trace) of every batch from `first` with one, and the names without."""
    batches, unrecorded = [], []
    for n, names in recording_scripts():
        if n < first:
            continue
        have = [x for x in names if x in rows]
        if have:
            batches.append((n, have))
            unrecorded += [x for x in names if x not in rows]
    if len(batches) < 2:
        sys.exit(f"batch_bootstrap: {len(batches)} recorded batch(es) in the table; at least 2 are needed")
    return batches, unrecorded


def report_default(batches, rows, a):
    per = batch_means(batches, rows)
    below = sum(o < b for _, _, o, b, *_ in per)
    level = sum(o == b for _, _, o, b, *_ in per)
    above = len(per) - below - level
    traces = sum(t for _, t, *_ in per)
    wins, ties = sum(p[4] for p in per), sum(p[5] for p in per)
    print(f"batches where the default's mean is below PyTorch's best per trace: {below}; level: {level}; "
          f"above: {above}; sign test p = {sign_test(below, above):.2g}")
    print(f"traces: {wins} wins, {ties} ties, {traces - wins - ties} losses")
    print(f"\n| default's geometric mean over | on the batches | 95% interval, {a.resamples} batch resamples |")
    print("|---|---:|---:|")
    for label, column in (("PyTorch's best per trace", 1), ("PyTorch expandable", 2)):
        logs = log_ratios(rows, column)
        if all(n in logs for _, names in batches for n in names):
            point, lo, hi = bootstrap(batches, logs, a.resamples, a.seed)
            print(f"| {label} | {point:.4f} | {lo:.4f}-{hi:.4f} |")
    drivers = {n: math.log(r[3]) for n, r in rows.items() if r[3]}
    if all(n in drivers for _, names in batches for n in names):
        point, lo, hi = bootstrap(batches, drivers, a.resamples, a.seed)
        worst = max(rows[n][3] for _, names in batches for n in names)
        print(f"| driver estimate over expanse in PyTorch-expandable mode's (at most {worst:.2f}x) "
              f"| {point:.4f} | {lo:.4f}-{hi:.4f} |")
    print("\n| batch | traces | default | PyTorch's best per trace | wins / ties / losses |")
    print("|---:|---:|---:|---:|---|")
    for number, t, ours, best, w, ti, lo in per:
        print(f"| {number} | {t} | {ours:.4f} | {best:.4f} | {w} / {ti} / {lo} |")


def report_against(batches, rows, other, label, a):
    """A setting's table against the default's, paired by trace and by batch."""
    missing = [n for _, names in batches for n in names if n not in other]
    if missing:
        sys.exit(f"batch_bootstrap: {label} has no row for {', '.join(missing[:5])}")
    logs = paired_log_ratios(rows, other)
    per = [(n, pooled_ratio([names], logs)) for n, names in batches]
    lower = sum(r < 1 for _, r in per)
    higher = sum(r > 1 for _, r in per)
    point, lo, hi = bootstrap(batches, logs, a.resamples, a.seed)
    paired = [logs[n] for _, names in batches for n in names]
    traces_lower, traces_higher = sum(v < 0 for v in paired), sum(v > 0 for v in paired)
    print(f"\n{label} over the default: {point:.4f} on the batches, 95% interval {lo:.4f}-{hi:.4f} "
          f"({a.resamples} batch resamples); batches lower {lower}, higher {higher}, "
          f"sign test p = {sign_test(lower, higher):.2g}; traces lower {traces_lower}, higher {traces_higher}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--table", help="`expanse compare --json` output (JSON lines) of the default")
    ap.add_argument("--against", action="append", default=[], metavar="CONF[=FILE]",
                    help="a setting's table (FILE, else run with --conf CONF) paired with the default's")
    ap.add_argument("--from", dest="first", type=int, default=FIRST_UNSEEN, metavar="N",
                    help=f"the first batch counted (default {FIRST_UNSEEN}: see FIRST_UNSEEN)")
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    if a.resamples < 2:
        sys.exit("batch_bootstrap: --resamples must be at least 2")
    rows = load(a.table)
    batches, unrecorded = recorded_batches(rows, a.first)
    traces = sum(len(names) for _, names in batches)
    print(f"{len(batches)} blind batches, {traces} traces (batches {batches[0][0]}-{batches[-1][0]} "
          f"with a recorded trace; from {a.first})")
    if unrecorded:
        print(f"written but without a trace in those batches: {', '.join(unrecorded)}")
    report_default(batches, rows, a)
    for spec in a.against:
        conf, _, table = spec.partition("=")
        report_against(batches, rows, load(table or None, conf), conf, a)


if __name__ == "__main__":
    main()
