#!/usr/bin/env python3
"""Checks of scripts/traces/score_batches.py's parsers: the names a recording script
records, the capacity figures and the losses of `expanse compare`'s table, and what
`expanse replay --peak-snapshot` says of the peak (no replay run)."""
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


def loss_row(name, native, expandable, asynch, ours, verdict):
    return f"| {name} | held-out | 100 MiB | {native} | {expandable} | {asynch} | {ours} | {verdict} | 1.2x | - | - |\n"


def test_losses_are_the_batchs_loss_rows_with_pytorchs_best_and_its_mode():
    table = (HEADER + loss_row("a", "1.5000", "1.0400", "1.0300", "1.0600", "loss")
             + loss_row("b", "1.5000", "1.0400", "1.0300", "1.0200", "win")
             + loss_row("c", "1.2000", "1.0500", "-", "1.0900", "loss")
             + loss_row("d", "1.2000", "1.0500", "1.0600", "1.0900", "loss"))
    assert score_batches.losses(table, ["a", "b", "c"]) == [
        ("a", 1.06, 1.03, "cudaMallocAsync"), ("c", 1.09, 1.05, "expandable")], score_batches.losses(table, ["a"])


# Backslash-newlines join the peak line as replay prints it (one line).
REPLAY = """pages            created 152 mapped 229 moved 77 unmapped 77 released 0 access sets 229
peak snapshot    p.pickle (after event 370981 of 815116, trace line 370984): reserved 4316.0 MiB in 13 segments: \
allocated 4126.4 MiB, free 189.6 MiB in 31 blocks (largest 48.0 MiB, small pool 0.0 MiB), waiting for streams 0.0 \
MiB; the peak came with a request of 96.0 MiB when 271.6 MiB was free in 31 blocks, the largest 84.0 MiB: more \
than any one free block but not more than all of them
"""


def test_peak_state_reads_replays_peak_line():
    assert score_batches.peak_state(REPLAY) == [
        "370,981 (815,116)", "96.0 MiB", "271.6 in 31, 84.0", "77",
        "fragmented: more than any block, not more than all"], score_batches.peak_state(REPLAY)


def test_peak_state_without_a_request_says_so():
    text = REPLAY.split("; the peak came")[0] + "\n"
    assert score_batches.peak_state(text) == ["370,981 (815,116)", "-", "-", "77", "no request raised it"]


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
