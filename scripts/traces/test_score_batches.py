#!/usr/bin/env python3
"""Checks of scripts/traces/score_batches.py's two parsers: the names a recording script
records, and the capacity figures of `expanse compare`'s table (no replay run)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import score_batches  # noqa: E402

HEADER = "| trace | split | peak requested | n | e | a | expanse | below | driver | cap pt | cap ours |\n"


def row(name, theirs, ours):
    return f"| {name} | held-out | 100 MiB | 1.2 | 1.1 | 1.3 | 1.05 | win | 0.9x | {theirs} | {ours} |\n"


def test_names_follow_the_recording_order():
    names = score_batches.batch_names(54)
    assert names[0] == "cxr_multilabel_asl_train" and names[-1] == "cox_multimodal_survival_cv", names
    assert len(names) == 8 and len(set(names)) == 8, names


def test_capacity_counts_smaller_and_takes_geometric_means():
    table = HEADER + row("a", "110 MiB (1.1000)", "102 MiB (1.0200)") + row("b", "140 MiB (1.4000)", "140 MiB (1.4000)")
    got = score_batches.capacity(table, ["a", "b"])
    # sqrt(1.02 * 1.4) = 1.1950, sqrt(1.1 * 1.4) = 1.2410; b is equal, not smaller.
    assert got == ("smaller than PyTorch-expandable mode on 1 of 2; geometric mean 1.1950 of the peak "
                   "requested against 1.2410"), got


def test_capacity_names_what_the_table_lacks():
    table = HEADER + row("a", "110 MiB (1.1000)", "102 MiB (1.0200)") + row("b", "-", "-")
    assert score_batches.capacity(table, ["a", "b", "c"]) == "no capacity figures for b, c"


def test_an_unknown_batch_is_refused_by_name():
    try:
        score_batches.batch_names(9999)
    except SystemExit as e:
        assert "record_new9999.sh" in str(e), e
    else:
        raise AssertionError("batch 9999 was accepted")


if __name__ == "__main__":
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    for t in tests:
        t()
    print(f"{len(tests)} score_batches checks passed")
