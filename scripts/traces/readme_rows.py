#!/usr/bin/env python3
"""traces/README.md's table rows, made from traces/corpus.json.

    python3 scripts/traces/readme_rows.py NAME...   # print the rows of these traces
    python3 scripts/traces/readme_rows.py --check   # every row in the README equals its corpus.json entry

A row: name, split, the family description, events, peak requested bytes and
PyTorch's three fragmentations (peak reserved over peak requested, native,
expandable, cudaMallocAsync), from the replays recorded in corpus.json.
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODES = ("native", "expandable", "async")


def row(name, entry):
    split = "held-out" if entry["split"] == "held_out" else entry["split"]
    family = (entry["family"] or "").replace("|", "\\|")
    req = entry["peak_requested_bytes"]
    frag = " | ".join(f"{entry['replay'][m]['peak_reserved_bytes'] / req:.4f}" for m in MODES)
    return f"| {name} | {split} | {family} | {entry['events']:,} | {req:,} | {frag} |"


def check(corpus, readme):
    """The README's rows that differ from corpus.json, and the traces without a row.

    A row may add a note after the family description (a stopped run's), nothing else; a |
    in the description must be escaped, or the row differs.
    """
    rows = {}
    for line in readme.splitlines():
        cells = line.split(" | ")
        if len(cells) > 2 and cells[0].lstrip("| ") in corpus and cells[1] in ("held-out", "tuning"):
            rows[cells[0].lstrip("| ")] = line
    bad = []
    for name, line in rows.items():
        want = row(name, corpus[name])
        head, _, figures = want.rpartition(" | " + f"{corpus[name]['events']:,} | ")
        if not (line.startswith(head) and line.endswith(" | " + f"{corpus[name]['events']:,} | " + figures)):
            bad.append(f"{name}: row differs from corpus.json")
    bad += [f"{n}: no row" for n in corpus if n not in rows]
    return bad


def main(argv):
    corpus = json.loads((ROOT / "traces/corpus.json").read_text())["traces"]
    if argv == ["--check"]:
        bad = check(corpus, (ROOT / "traces/README.md").read_text())
        print("\n".join(bad) or f"readme_rows: {len(corpus)} rows equal corpus.json")
        return 1 if bad else 0
    unknown = [n for n in argv if n not in corpus]
    if unknown or not argv:
        print(f"not in corpus.json: {' '.join(unknown)}" if unknown else __doc__, file=sys.stderr)
        return 2
    print("\n".join(row(n, corpus[n]) for n in argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
