#!/usr/bin/env python3
"""Checks of scripts/traces/batch_bootstrap.py on hand-computed tables (no replay run)."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import batch_bootstrap as bb  # noqa: E402


def line(name, ours, native, expandable, asynch, driver=0.8):
    f = {"pytorch_native": native, "pytorch_expandable": expandable, "pytorch_async": asynch, "expanse": ours}
    return json.dumps({"trace": name, "split": "held-out", "fragmentation": f, "driver_estimate_ratio": driver})


def test_reads_rows_and_skips_summaries():
    lines = [line("a", 1.05, 1.3, 1.1, 1.2), json.dumps({"group": "all", "traces": 1}), "not json", ""]
    rows = bb.read_table(lines)
    assert rows == {"a": (1.05, 1.1, 1.1, 0.8)}, rows


def test_a_cut_table_is_named_not_a_traceback():
    for lines, words in (([line("a", 1.0, 1.1, 1.1, 1.1), '{"trace": "b", "fragm'], "line 2 of the table is not JSON"),
                         (['{"trace": "c"}'], "line 1 (c) has no fragmentation figures")):
        try:
            bb.read_table(lines)
        except SystemExit as e:
            assert words in str(e), e
        else:
            raise AssertionError(f"no error for {lines}")


def test_best_is_the_lowest_of_the_three_and_a_missing_mode_is_skipped():
    rows = bb.read_table([line("a", 1.0, 1.4, None, 1.2, None)])
    assert rows["a"] == (1.0, 1.2, None, None), rows


def test_batch_means_and_counts():
    rows = {"a": (1.0, 1.21, 1.3), "b": (1.44, 1.0, 1.0), "c": (1.1, 1.1, 1.2)}
    per = bb.batch_means([(7, ["a", "b", "c"])], rows)
    # default: (1.0 * 1.44 * 1.1)^(1/3) = 1.1655; best: (1.21 * 1.0 * 1.1)^(1/3) = 1.1000
    number, traces, ours, best, wins, ties, losses = per[0]
    assert (number, traces, wins, ties, losses) == (7, 3, 1, 1, 1), per
    assert abs(ours - 1.58400 ** (1 / 3)) < 1e-9 and abs(best - 1.331 ** (1 / 3)) < 1e-9, per


def test_sign_test_by_hand():
    # 1 of 4 below at even odds: P(X <= 1) = 5/16, two-sided 10/16.
    assert abs(bb.sign_test(1, 3) - 0.625) < 1e-12
    assert abs(bb.sign_test(3, 1) - 0.625) < 1e-12
    # 10 of 10: 2 / 1024.
    assert abs(bb.sign_test(10, 0) - 2 / 1024) < 1e-12
    assert bb.sign_test(2, 2) == 1.0


def test_identical_batches_give_a_point_interval():
    rows = {f"t{i}": (1.1, 1.21, 1.3) for i in range(6)}
    batches = [(1, ["t0", "t1"]), (2, ["t2", "t3"]), (3, ["t4", "t5"])]
    point, lo, hi = bb.bootstrap(batches, bb.log_ratios(rows, 1), 200, 1)
    assert abs(point - 1 / 1.1) < 1e-12 and abs(lo - point) < 1e-12 and abs(hi - point) < 1e-12


def test_interval_spans_the_batches_own_ratios():
    # Two batches of one trace: ratios 0.5 and 2.0. A resample pools 2 draws, so its
    # ratio is 0.5, 1.0 or 2.0 (odds 1:2:1); the 2.5/97.5 percentiles of 4,000 draws
    # are the two extremes, and the batches as they are give sqrt(0.5 * 2.0) = 1.0.
    rows = {"x": (1.0, 2.0, 2.0), "y": (2.0, 1.0, 1.0)}
    point, lo, hi = bb.bootstrap([(1, ["x"]), (2, ["y"])], bb.log_ratios(rows, 1), 4000, 3)
    assert abs(point - 1.0) < 1e-12 and abs(lo - 0.5) < 1e-12 and abs(hi - 2.0) < 1e-12, (point, lo, hi)


def test_a_setting_pairs_with_the_default_trace_by_trace():
    rows = {"a": (1.10, 1.2, 1.2), "b": (1.20, 1.3, None)}
    other = {"a": (1.21, 1.2, 1.2), "b": (1.08, 1.3, None), "c": (9.0, 1.0, 1.0)}
    logs = bb.paired_log_ratios(rows, other)
    # a: 1.21 / 1.10 = 1.1, b: 1.08 / 1.20 = 0.9; c has no default row and is left out.
    assert set(logs) == {"a", "b"}, logs
    assert abs(bb.pooled_ratio([["a"]], logs) - 1.1) < 1e-12 and abs(bb.pooled_ratio([["b"]], logs) - 0.9) < 1e-12
    assert abs(bb.pooled_ratio([["a", "b"]], logs) - (1.1 * 0.9) ** 0.5) < 1e-12
    # PyTorch expandable is missing for b: only a has a ratio against it.
    assert set(bb.log_ratios(rows, 2)) == {"a"}


def test_batches_before_the_first_are_left_out_and_unrecorded_names_named():
    scripts = dict(bb.recording_scripts())
    rows = {n: (1.0, 1.0, 1.0) for n in scripts[54] + scripts[55][:-1] + scripts[56]}
    batches, unrecorded = bb.recorded_batches(rows, 55)
    assert [n for n, _ in batches] == [55, 56], batches
    assert batches[0][1] == scripts[55][:-1] and unrecorded == scripts[55][-1:], (batches, unrecorded)


def test_recording_scripts_name_the_batches_in_order():
    scripts = bb.recording_scripts()
    numbers = [n for n, _ in scripts]
    assert numbers == sorted(numbers) and 54 in numbers, numbers[:5]
    names = dict(scripts)[54]
    assert names[0] == "cxr_multilabel_asl_train" and len(names) == 8, names


if __name__ == "__main__":
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            print(f"ok {name}")
