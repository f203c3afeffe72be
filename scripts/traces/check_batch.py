#!/usr/bin/env python3
"""The fidelity checks of a recorded batch, once it is in traces/ (add_batch.py), from the device call's output:

    python3 scripts/traces/check_batch.py MODES.jsonl [LIVE.jsonl ...] [--binary target/release/expanse]
        [--then CONF] [--device-memory SIZE]

--then CONF: settings that were the default of the binaries that made the files but are no longer this build's
(e.g. `--then grow_fewest:False` for calls made before grow_fewest became the default), put before every
configuration replayed here.
--device-memory SIZE: the capacity of the card the files came from, for the replays here (default: the sim backend's,
an H200). The default's largest page is 1/3578 of the device (policy/pages.rs), so a call on another card (the fiftieth
session's H100: `--device-memory 81559MiB`) is compared with replays on a device of its size.

MODES.jsonl: record_batch.sh's TAG-modes.jsonl (`expanse replay --backend cuda --json` lines, three configurations a
trace). Prints, naming every trace that differs:
- expanse's PyTorch-native and PyTorch-expandable modes on CUDA against PyTorch's own replays (traces/corpus.json);
- the other configuration on CUDA against the same replay on the sim backend here;
- each live native run (corpus.json's `live`) against its native replay;
- each line of the LIVE files (run_workload.py --mode expanse, as batch_call.sh writes them) against the sim replay
  of its trace with its configuration, and whether the live run's peak request was the trace's (a live run that
  requested otherwise was not the recorded run).
Exit status 0 whatever it finds: it reports, it does not judge.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTORCH_MODES = {"expandable_segments:False": "native", "expandable_segments:True,pytorch_compat:True": "expandable"}


def sim_peak(binary, name, conf, cache, device_memory=None):
    key = (name, conf)
    if key not in cache:
        cmd = [binary, "replay", str(ROOT / "traces" / f"{name}.trace.csv.gz"), "--json"]
        if device_memory:
            cmd += ["--device-memory", device_memory]
        if conf:
            cmd += ["--conf", conf]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{name}: replay failed: {out.stderr.strip()}")
        cache[key] = json.loads(out.stdout)["peak_reserved_bytes"]
    return cache[key]


def lines(path):
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if line.startswith("{"):
            try:
                yield json.loads(line)
            except ValueError as e:
                sys.exit(f"{path}:{n}: not a JSON line ({e})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("modes")
    ap.add_argument("live", nargs="*")
    ap.add_argument("--binary", default=str(ROOT / "target/release/expanse"))
    ap.add_argument("--then", default="", help="the default of the binaries that made the files, where it differs")
    ap.add_argument("--device-memory", help="the capacity of the card the files came from (default: an H200's)")
    args = ap.parse_args()
    corpus = json.loads((ROOT / "traces/corpus.json").read_text())["traces"]
    cache, names = {}, []
    counts = {"pytorch": [0, 0], "cuda": [0, 0], "native live": [0, 0], "live": [0, 0]}

    def tally(what, same, message):
        counts[what][0] += same
        counts[what][1] += 1
        if not same:
            print(f"  differs: {message}")

    for d in lines(args.modes):
        name = Path(d["trace"]).name.removesuffix(".trace.csv.gz")
        if name not in corpus:
            sys.exit(f"{name}: not in traces/corpus.json (add the batch first)")
        if name not in names:
            names.append(name)
        got = d["peak_reserved_bytes"]
        if d["conf"] in PYTORCH_MODES:
            want = corpus[name]["replay"][PYTORCH_MODES[d["conf"]]]["peak_reserved_bytes"]
            tally("pytorch", got == want, f"{name} {d['conf']} on cuda {got}, PyTorch {want}")
        else:
            conf = ",".join(c for c in (args.then, d["conf"].removeprefix("expandable_segments:True").lstrip(",")) if c)
            want = sim_peak(args.binary, name, conf, cache, args.device_memory)
            tally("cuda", got == want, f"{name} {d['conf']} on cuda {got}, sim {want}")
    for name in names:
        e = corpus[name]
        got, want = e["live"]["reserved_bytes.all.peak"], e["replay"]["native"]["peak_reserved_bytes"]
        tally("native live", got == want, f"{name} live native {got}, native replay {want}")
    for path in args.live:
        for d in lines(path):
            name, conf = d["workload"], ",".join(c for c in (args.then, d.get("conf") or "") if c)
            want = sim_peak(args.binary, name, conf, cache, args.device_memory)
            same_run = d["requested_bytes.all.peak"] == corpus[name]["peak_requested_bytes"]
            note = "" if same_run else " (its peak request differs from the trace's: not the recorded run)"
            tally("live", d["reserved_bytes.all.peak"] == want,
                  f"{name} live on expanse {conf or 'default'} {d['reserved_bytes.all.peak']}, replay {want}{note}")
    for what, label in (("pytorch", "PyTorch modes on CUDA = PyTorch's replays"),
                        ("cuda", "expanse's other configuration on CUDA = sim"),
                        ("native live", "live native runs = native replays"),
                        ("live", "live on expanse = replays")):
        same, n = counts[what]
        if n:
            print(f"{label}: {same} of {n}")


if __name__ == "__main__":
    main()
