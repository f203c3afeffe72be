#!/usr/bin/env python3
"""Checks of scripts/capacity_diff.py on hand-made tables (no GPU, no Rust).

    python3 scripts/test_capacity_diff.py

Two three-trace tables in `expanse compare`'s format, whose counts and
means are worked out by hand below; a table without capacity columns is
refused with a message naming the file.
"""
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "capacity_diff.py"
HEADER = (
    "| trace | split | peak requested | PyTorch native (GPU) | PyTorch expandable (GPU) "
    "| PyTorch cudaMallocAsync (GPU) | expanse | expanse below the best "
    "| driver estimate vs expanse in PyTorch-expandable mode "
    "| smallest capacity, expanse in PyTorch-expandable mode | smallest capacity, expanse |\n"
    "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|\n"
)


def row(name, split, expanse, pytorch, ours):
    return f"| {name} | {split} | 100 MiB | 1.5 | 1.2 | 1.3 | {expanse} | win | 1.00x | {pytorch} | {ours} |\n"


BEFORE = HEADER + (
    row("a", "tuning", "1.1000", "120 MiB (1.2000)", "110 MiB (1.1000)")
    + row("b", "held-out", "1.0500", "104 MiB (1.0400)", "102 MiB (1.0200)")
    + row("c", "held-out", "1.0100", "101 MiB (1.0100)", "100 MiB (1.0000)")
)
# a: capacity down 110 -> 105 (peak unchanged); b: up 102 -> 104, now equal
# to PyTorch-expandable mode's 104 (listed); c: the same capacity, its peak
# changed.
AFTER = HEADER + (
    row("a", "tuning", "1.1000", "120 MiB (1.2000)", "105 MiB (1.0500)")
    + row("b", "held-out", "1.0500", "104 MiB (1.0400)", "104 MiB (1.0400)")
    + row("c", "held-out", "1.0090", "101 MiB (1.0100)", "100 MiB (1.0000)")
)


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as d:
        before, after, empty = Path(d, "before.md"), Path(d, "after.md"), Path(d, "empty.md")
        before.write_text(BEFORE)
        after.write_text(AFTER)
        empty.write_text("| trace | split |\n|---|---|\n| a | tuning |\n")
        out = run(str(before), str(after))
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        # tuning: a alone, 1.1 -> 1.05.
        assert lines[0] == (
            "tuning: 1 traces; smallest capacity up on 0, down on 1, same on 0; "
            "geometric mean 1.1000 -> 1.0500 of peak requested; peaks changed on 0"
        ), lines[0]
        # held-out: b and c; sqrt(1.02 * 1.00) = 1.00995, sqrt(1.04 * 1.00) = 1.01980.
        assert lines[1] == (
            "held-out: 2 traces; smallest capacity up on 1, down on 0, same on 1; "
            "geometric mean 1.0100 -> 1.0198 of peak requested; peaks changed on 1"
        ), lines[1]
        assert lines[2] == "  b: 104 MiB against 104 MiB in PyTorch-expandable mode", lines[2]
        # all three: (1.1 * 1.02 * 1.0) ** (1/3) = 1.122 ** (1/3) = 1.03912,
        # (1.05 * 1.04 * 1.0) ** (1/3) = 1.092 ** (1/3) = 1.02977.
        assert lines[3].startswith("all: 3 traces; smallest capacity up on 1, down on 1, same on 1; ")
        assert "geometric mean 1.0391 -> 1.0298" in lines[3], lines[3]
        # A batch's traces only.
        out = run(str(before), str(after), "--names", "a,c")
        assert out.returncode == 0, out.stderr
        assert "held-out: 1 traces; smallest capacity up on 0, down on 0, same on 1" in out.stdout, out.stdout
        assert "b:" not in out.stdout, out.stdout
        # No capacity columns: refused, naming the file.
        out = run(str(before), str(empty))
        assert out.returncode != 0 and "empty.md: no `expanse compare` table" in out.stderr, out.stderr
    print("capacity_diff: checks passed")


if __name__ == "__main__":
    main()
