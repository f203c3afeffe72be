#!/usr/bin/env python3
"""Compare the smallest-capacity columns of two `expanse compare` tables.

    python3 scripts/capacity_diff.py BEFORE.md AFTER.md [--names NAME,NAME,...]

BEFORE and AFTER are the Markdown tables `expanse compare traces/` prints
(README.md works as BEFORE: its table is that command's output). Per split
(tuning, held-out, all) it prints how many traces' smallest capacity for
expanse went up, down or stayed, the geometric means of capacity / peak
requested before and after, how many traces' peak (the expanse column)
changed, and the traces on which AFTER's expanse needs at least as large a
device as expanse in PyTorch-expandable mode (issue 8 asks for less or
equal; equal is listed too, so ties show). --names keeps those traces only
(a blind batch's capacity check).

A probe of a capacity rule is judged this way (docs/policy-study.md):
build it, `target/release/expanse compare traces/ > after.md`, then this
script against README.md.
"""
import math
import re
import sys

SPLITS = ("tuning", "held-out")
COLUMNS = ("expanse", "smallest capacity, expanse in PyTorch-expandable mode", "smallest capacity, expanse")
CAPACITY = re.compile(r"^([\d,]+) MiB \(([\d.]+)\)$")


def capacity(cell):
    """(MiB, ratio to peak requested) from '5,414 MiB (1.0340)'; None for '-'."""
    m = CAPACITY.match(cell)
    return (int(m.group(1).replace(",", "")), float(m.group(2))) if m else None


def parse(path):
    """Trace name -> its split, expanse's fragmentation and both capacities."""
    rows = {}
    header = None
    for line in open(path, encoding="utf-8"):
        if not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "trace":
            # Only a table with the columns read below counts.
            header = cells if set(COLUMNS) <= set(cells) else None
            continue
        if header is None or len(cells) != len(header) or cells[1] not in SPLITS:
            continue
        row = dict(zip(header, cells))
        rows[cells[0]] = {
            "split": cells[1],
            "expanse": row[COLUMNS[0]],
            "pytorch": capacity(row[COLUMNS[1]]),
            "capacity": capacity(row[COLUMNS[2]]),
        }
    if not rows:
        sys.exit(f"{path}: no `expanse compare` table with capacity columns found")
    return rows


def summarize(before, after, split, names=None):
    """One split's comparison, as a dict (also what the test checks)."""
    up = down = same = changed_peaks = 0
    logs_before, logs_after, not_below = [], [], []
    for name, a in sorted(after.items()):
        b = before.get(name)
        if b is None or (split != "all" and a["split"] != split) or (names and name not in names):
            continue
        changed_peaks += a["expanse"] != b["expanse"]
        if a["capacity"] is None or b["capacity"] is None:
            continue
        logs_before.append(math.log(b["capacity"][1]))
        logs_after.append(math.log(a["capacity"][1]))
        delta = a["capacity"][0] - b["capacity"][0]
        up += delta > 0
        down += delta < 0
        same += delta == 0
        if a["pytorch"] and a["capacity"][0] >= a["pytorch"][0]:
            not_below.append((name, a["capacity"][0], a["pytorch"][0]))
    n = len(logs_after)
    mean = lambda logs: math.exp(sum(logs) / len(logs)) if logs else float("nan")
    return {
        "traces": n,
        "up": up,
        "down": down,
        "same": same,
        "mean_before": mean(logs_before),
        "mean_after": mean(logs_after),
        "changed_peaks": changed_peaks,
        "not_below": not_below,
    }


def main(argv):
    names = None
    if "--names" in argv:
        i = argv.index("--names")
        names = set(argv[i + 1].split(","))
        argv = argv[:i] + argv[i + 2 :]
    if len(argv) != 2:
        sys.exit(__doc__)
    before, after = parse(argv[0]), parse(argv[1])
    for split in SPLITS + ("all",):
        s = summarize(before, after, split, names)
        if not s["traces"]:
            continue
        print(
            f"{split}: {s['traces']} traces; smallest capacity up on {s['up']}, down on {s['down']}, "
            f"same on {s['same']}; geometric mean {s['mean_before']:.4f} -> {s['mean_after']:.4f} "
            f"of peak requested; peaks changed on {s['changed_peaks']}"
        )
        for name, ours, theirs in s["not_below"]:
            print(f"  {name}: {ours:,} MiB against {theirs:,} MiB in PyTorch-expandable mode")


if __name__ == "__main__":
    main(sys.argv[1:])
