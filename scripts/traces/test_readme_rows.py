#!/usr/bin/env python3
"""readme_rows.py's check: a row equal to corpus.json passes; a changed figure, an unescaped |
in the family and a missing row are each named."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from readme_rows import check, row  # noqa: E402

ENTRY = {
    "split": "held_out",
    "family": "a model of |x| over 3 layers",
    "events": 1234,
    "peak_requested_bytes": 1000,
    "replay": {"native": {"peak_reserved_bytes": 1500}, "expandable": {"peak_reserved_bytes": 1100},
               "async": {"peak_reserved_bytes": 1250}},
}
CORPUS = {"a_train": ENTRY, "b_serve": dict(ENTRY, split="tuning")}
GOOD_A = "| a_train | held-out | a model of \\|x\\| over 3 layers | 1,234 | 1,000 | 1.5000 | 1.1000 | 1.2500 |"
GOOD_B = GOOD_A.replace("a_train | held-out", "b_serve | tuning")

cases = [
    ("rows as made", row("a_train", ENTRY) == GOOD_A and check(CORPUS, GOOD_A + "\n" + GOOD_B) == []),
    ("a note after the family",
     check(CORPUS, GOOD_A.replace(" layers |", " layers (stopped at 200 s) |") + "\n" + GOOD_B) == []),
    ("a changed figure", check(CORPUS, GOOD_A.replace("1.1000", "1.1001") + "\n" + GOOD_B)
     == ["a_train: row differs from corpus.json"]),
    ("an unescaped |", check(CORPUS, GOOD_A.replace("\\|", "|") + "\n" + GOOD_B)
     == ["a_train: row differs from corpus.json"]),
    ("a missing row", check(CORPUS, GOOD_A) == ["b_serve: no row"]),
]
failed = [name for name, ok in cases if not ok]
print(f"readme_rows: {len(cases) - len(failed)} passed, {len(failed)} failed {failed or ''}")
sys.exit(1 if failed else 0)
