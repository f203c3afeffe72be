#!/usr/bin/env python3
"""Record peak reserved bytes of every trace in traces/ under the three modes.

    python3 scripts/peaks.py [BINARY] > peaks.json       # record
    python3 scripts/peaks.py --compare BEFORE.json AFTER.json

Used to check that a speed change changed no decision: the peaks of every
trace in every mode must stay the same to the byte.
"""
import json
import subprocess
import sys
from pathlib import Path

MODES = {
    "native": "expandable_segments:False",
    "expandable": "expandable_segments:True,pytorch_compat:True",
    "default": "",
}


def record(binary):
    out = {}
    for t in sorted(Path("traces").glob("*.trace.csv*")):
        name = t.name.split(".trace")[0]
        out[name] = {}
        for mode, conf in MODES.items():
            cmd = [binary, "replay", str(t), "--json"] + (["--conf", conf] if conf else [])
            r = subprocess.run(cmd, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
            if r.returncode != 0 and not r.stdout:
                out[name][mode] = {"error": r.stderr.strip()}
            else:
                j = json.loads(r.stdout)
                out[name][mode] = {"peak_reserved_bytes": j["peak_reserved_bytes"], "ns_per_event": j["ns_per_event"]}
            print(name, mode, out[name][mode], file=sys.stderr)
    return out


def compare(a, b):
    bad = 0
    for name in sorted(set(a) | set(b)):
        for mode in MODES:
            x = a.get(name, {}).get(mode, {}).get("peak_reserved_bytes")
            y = b.get(name, {}).get(mode, {}).get("peak_reserved_bytes")
            flag = "same" if x == y else "DIFFERENT"
            bad += x != y
            print(f"{name:20} {mode:10} {x} {y} {flag}")
    print(f"{bad} difference(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        sys.exit(compare(json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))))
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/expanse"
    print(json.dumps(record(binary), indent=1))
