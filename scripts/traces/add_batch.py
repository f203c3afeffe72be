#!/usr/bin/env python3
"""Add a recorded batch (record_batch.sh's corpus folder, unpacked) to traces/.

    python3 scripts/traces/add_batch.py CORPUS_DIR [--split held_out|tuning] [--dry-run]

For every NAME.trace.csv.gz in CORPUS_DIR that has a NAME.live.json and three
lines (native, expandable, async) in CORPUS_DIR/torch.jsonl: copies the trace
into traces/ and writes its traces/corpus.json entry (PyTorch's replay figures,
the live run's memory_stats and card, the family, the split). Refuses, naming the trace,
when a trace is already in corpus.json, when a mode is missing or ran out of
memory, or when the replays disagree on the peak requested bytes; nothing is
written unless every trace of the batch is whole.
"""
import argparse
import json
import shutil
import sys
from pathlib import Path

LIVE_KEYS = (
    "allocated_bytes.all.peak",
    "num_alloc_retries",
    "num_ooms",
    "requested_bytes.all.peak",
    "reserved_bytes.all.peak",
)
MODES = ("native", "expandable", "async")


def entries(corpus: Path, split: str):
    replays = {}
    path = corpus / "torch.jsonl"
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            d = json.loads(line)
            replays.setdefault(d["trace"], {})[d["mode"]] = d
        except (ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"{path}:{n}: not a replay line ({e!r})") from None
    for trace in sorted(corpus.glob("*.trace.csv.gz")):
        name = trace.name.removesuffix(".trace.csv.gz")
        live_path = corpus / f"{name}.live.json"
        if not live_path.exists():
            raise SystemExit(f"{name}: no {live_path.name}")
        try:
            live = json.loads(live_path.read_text())
            missing = [k for k in ("events", "family", "seconds", "streams", "memory_stats") if k not in live]
            missing += [k for k in LIVE_KEYS if k not in live.get("memory_stats", {})]
        except ValueError as e:
            raise SystemExit(f"{live_path}: not JSON ({e})") from None
        if missing:
            raise SystemExit(f"{live_path}: no {', '.join(missing)}")
        modes = replays.get(name, {})
        missing = [m for m in MODES if m not in modes]
        if missing:
            raise SystemExit(f"{name}: no PyTorch replay for {', '.join(missing)} in torch.jsonl")
        for m in MODES:
            if modes[m]["oom"] is not None or modes[m]["num_ooms"]:
                raise SystemExit(f"{name}: PyTorch's {m} replay ran out of memory")
            if modes[m]["events"] != live["events"]:
                raise SystemExit(f"{name}: {m} replay saw {modes[m]['events']} events, the live run {live['events']}")
        requested = {modes[m]["peak_requested_bytes"] for m in MODES}
        if len(requested) != 1:
            raise SystemExit(f"{name}: the replays disagree on peak requested bytes: {sorted(requested)}")
        stats = live["memory_stats"]
        entry = {
            "events": live["events"],
            "family": live["family"],
            "live": {k: stats[k] for k in LIVE_KEYS}
            | {"events": live["events"], "family": live["family"], "seconds": live["seconds"], "streams": live["streams"]}
            # a workload stopped by the recording's time limit (record.py) says so
            | ({"stopped_after_s": live["stopped_after_s"]} if "stopped_after_s" in live else {})
            # the card it ran on, where record.py wrote it (corpus.json's "about": H200 unless named)
            | ({"device": live["device"]} if "device" in live else {}),
            "peak_requested_bytes": requested.pop(),
            "replay": {
                m: {k: modes[m][k] for k in ("num_alloc_retries", "num_ooms", "peak_allocated_bytes", "peak_reserved_bytes")}
                for m in MODES
            },
            "split": split,
        }
        yield name, trace, entry


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--split", choices=("held_out", "tuning"), default="held_out")
    ap.add_argument("--traces", type=Path, default=Path(__file__).resolve().parents[2] / "traces")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    index_path = args.traces / "corpus.json"
    index = json.loads(index_path.read_text())
    new = list(entries(args.corpus, args.split))
    if not new:
        raise SystemExit(f"{args.corpus}: no *.trace.csv.gz")
    for name, _, _ in new:
        if name in index["traces"]:
            raise SystemExit(f"{name}: already in {index_path}")
    for name, trace, entry in new:
        r = entry["replay"]
        print(
            f"{name:24} {entry['events']:>8} events  requested {entry['peak_requested_bytes']:>12}  "
            + "  ".join(f"{m} {r[m]['peak_reserved_bytes'] / entry['peak_requested_bytes']:.4f}" for m in MODES)
        )
        if not args.dry_run:
            shutil.copyfile(trace, args.traces / trace.name)
            index["traces"][name] = entry
    if not args.dry_run:
        index_path.write_text(json.dumps(index, indent=1))
        print(f"{len(new)} traces added to {args.traces}", file=sys.stderr)


if __name__ == "__main__":
    main()
