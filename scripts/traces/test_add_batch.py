#!/usr/bin/env python3
"""Checks of scripts/traces/add_batch.py on hand-made batches (no GPU, no torch).

    python3 scripts/traces/test_add_batch.py

A whole batch is added (trace copied, corpus.json entry as written below);
a batch with a missing mode, an out-of-memory replay, a replay that saw
other events, replays that disagree on peak requested, or a trace already
in corpus.json is refused with a message naming the trace and the problem,
and neither traces/ nor corpus.json changes.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "add_batch.py"
MODES = ("native", "expandable", "async")


def make_batch(root: Path, name="tiny", events=4, requested=1024, mutate=None, live_extra=None):
    corpus = root / "corpus"
    corpus.mkdir()
    (corpus / f"{name}.trace.csv.gz").write_bytes(b"not read by add_batch")
    live = {
        "device": "NVIDIA H200",
        "events": events,
        "family": "a hand-made family",
        "seconds": 1.5,
        "streams": 1,
        "torch": "2.11.0+cu130",
        "workload": name,
        "memory_stats": {
            "allocated_bytes.all.peak": 2048,
            "num_alloc_retries": 0,
            "num_ooms": 0,
            "requested_bytes.all.peak": requested,
            "reserved_bytes.all.peak": 2097152,
            "segment.all.peak": 1,
        },
    }
    lines = []
    for i, mode in enumerate(MODES):
        lines.append({
            "mode": mode,
            "trace": name,
            "events": events,
            "oom": None,
            "num_ooms": 0,
            "num_alloc_retries": 0,
            "peak_allocated_bytes": 2048,
            "peak_requested_bytes": requested,
            "peak_reserved_bytes": 2097152 * (i + 1),
        })
    if mutate:
        mutate(lines)
    live |= live_extra or {}
    (corpus / f"{name}.live.json").write_text(json.dumps(live))
    (corpus / "torch.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    traces = root / "traces"
    traces.mkdir()
    index = {"about": "test", "traces": {"old": {"split": "tuning"}}}
    (traces / "corpus.json").write_text(json.dumps(index, indent=1))
    return corpus, traces


def run(corpus, traces):
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(corpus), "--traces", str(traces)], capture_output=True, text=True
    )


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def test_whole_batch():
    with tempfile.TemporaryDirectory() as d:
        corpus, traces = make_batch(Path(d))
        r = run(corpus, traces)
        check(r.returncode == 0, f"a whole batch is added ({r.stderr.strip()})")
        index = json.loads((traces / "corpus.json").read_text())
        check(list(index["traces"]) == ["old", "tiny"], "the new entry follows the old ones")
        e = index["traces"]["tiny"]
        check(e["split"] == "held_out" and e["events"] == 4 and e["peak_requested_bytes"] == 1024,
              "split, events and peak requested as recorded")
        check([e["replay"][m]["peak_reserved_bytes"] for m in MODES] == [2097152, 4194304, 6291456],
              "each mode's peak reserved from its own replay")
        check(e["live"]["reserved_bytes.all.peak"] == 2097152 and e["live"]["seconds"] == 1.5,
              "the live run's memory_stats and seconds")
        check("stopped_after_s" not in e["live"], "a workload that ran to its end is not marked stopped")
        check(e["live"].get("device") == "NVIDIA H200", "the card the live run names")
        check((traces / "tiny.trace.csv.gz").read_bytes() == b"not read by add_batch", "the trace is copied")
        r = run(corpus, traces)
        check(r.returncode != 0 and "tiny: already in" in r.stderr, "adding it twice is refused")


def test_stopped_workload():
    with tempfile.TemporaryDirectory() as d:
        corpus, traces = make_batch(Path(d), live_extra={"stopped_after_s": 230.4})
        r = run(corpus, traces)
        check(r.returncode == 0, f"a workload stopped by the time limit is added ({r.stderr.strip()})")
        e = json.loads((traces / "corpus.json").read_text())["traces"]["tiny"]
        check(e["live"].get("stopped_after_s") == 230.4, "its entry says when it was stopped")

    with tempfile.TemporaryDirectory() as d:
        live = {"device": "NVIDIA H100 80GB HBM3"}
        corpus, traces = make_batch(Path(d), live_extra=live)
        run(corpus, traces)
        e = json.loads((traces / "corpus.json").read_text())["traces"]["tiny"]
        check(e["live"].get("device") == "NVIDIA H100 80GB HBM3", "another card is named as it ran")


def refused(mutate, expect, what):
    with tempfile.TemporaryDirectory() as d:
        corpus, traces = make_batch(Path(d), mutate=mutate)
        before = (traces / "corpus.json").read_text()
        r = run(corpus, traces)
        check(r.returncode != 0 and expect in r.stderr, f"{what} is refused: {r.stderr.strip()}")
        check((traces / "corpus.json").read_text() == before and not (traces / "tiny.trace.csv.gz").exists(),
              f"{what}: nothing written")


def main():
    test_whole_batch()
    test_stopped_workload()
    refused(lambda lines: lines.pop(2), "tiny: no PyTorch replay for async", "a missing mode")

    def oom(lines):
        lines[1]["oom"] = "out of memory"

    refused(oom, "tiny: PyTorch's expandable replay ran out of memory", "an out-of-memory replay")

    def other_events(lines):
        lines[0]["events"] = 3

    refused(other_events, "tiny: native replay saw 3 events, the live run 4", "a replay of other events")

    def disagree(lines):
        lines[2]["peak_requested_bytes"] = 1000

    refused(disagree, "tiny: the replays disagree on peak requested bytes", "replays that disagree")
    with tempfile.TemporaryDirectory() as d:
        corpus, traces = make_batch(Path(d))
        with open(corpus / "torch.jsonl", "a") as f:
            f.write("{not json\n")
        r = run(corpus, traces)
        check(r.returncode != 0 and "torch.jsonl:4: not a replay line" in r.stderr, "a corrupt replay line is refused")
        (corpus / "torch.jsonl").write_text("")
        live = json.loads((corpus / "tiny.live.json").read_text())
        del live["memory_stats"]["num_ooms"]
        (corpus / "tiny.live.json").write_text(json.dumps(live))
        r = run(corpus, traces)
        check(r.returncode != 0 and "tiny.live.json: no num_ooms" in r.stderr, "a live run without num_ooms is refused")
    print("add_batch: all checks passed")


if __name__ == "__main__":
    main()
