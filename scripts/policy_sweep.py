#!/usr/bin/env python3
"""Score allocator configurations over the corpus, per split, against PyTorch's best.

    python3 scripts/policy_sweep.py [--detail] SPEC...

SPEC is CONF or CONF@BINARY: an allocator configuration ('default' for none)
and the expanse binary to replay with (target/release/expanse unless given; a
wrapper script that sets an experiment build's environment works too). Every
trace of traces/ (with its entry in traces/corpus.json) is replayed on the sim
backend, JOBS at a time (default 2); results are cached per configuration,
binary and binary mtime in $SWEEP_CACHE (default /tmp/expanse-sweep-cache), so
a second run of the same SPEC is instant. For the default and each SPEC it
prints, per split, the wins against the best of PyTorch's three recorded
allocators, ties, the geometric mean of peak reserved / peak requested, how
many traces moved by more than 0.05% against the default, and the driver
estimate against expanse's PyTorch-expandable mode (at most, and how many
traces above issue 8's 2x). --detail lists the traces each SPEC changed most.
This is for trying policies; `expanse compare traces/` makes the README's table.

    python3 scripts/policy_sweep.py --paired SPEC

compares SPEC with the default under seven small perturbations of page sizes
and the move budget (largest page 36, 38 and 40 MiB; move budget 1.65 to
1.85), each with and without SPEC's configuration, and prints both halves'
means per pair. The default's per-trace figures move by several percent when
only its page sizes change (docs/policy-study.md, thirtieth round), so a
candidate is judged by how often it is lower across the pairs, not by one
comparison.
"""
import hashlib
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACES = Path(os.environ.get("TRACES", ROOT / "traces"))
CORPUS = json.loads((TRACES / "corpus.json").read_text())["traces"]
DEFAULT_BINARY = ROOT / "target" / "release" / "expanse"
CACHE = Path(os.environ.get("SWEEP_CACHE", "/tmp/expanse-sweep-cache"))
PYTORCH_EXPANDABLE = "expandable_segments:True,pytorch_compat:True"


def replay(conf, binary, name):
    args = [str(binary), "replay", str(TRACES / f"{name}.trace.csv.gz"), "--backend", "sim", "--json"]
    if conf:
        args += ["--conf", conf]
    out = subprocess.run(args, capture_output=True, text=True)
    try:
        j = json.loads(out.stdout)
    except json.JSONDecodeError:
        return {"trace": name, "error": out.stderr[-300:]}
    return {"trace": name, "peak": j["peak_reserved_bytes"], "driver": j["driver_us_estimate"]}


def results(spec):
    conf, _, binary = spec.partition("@")
    binary = Path(binary) if binary else DEFAULT_BINARY
    conf = "" if conf == "default" else conf
    if not binary.is_file():
        sys.exit(f"policy_sweep: no expanse binary at {binary} (build it with `cargo build --release`)")
    key = hashlib.md5(f"{conf}|{binary}|{binary.stat().st_mtime}|{TRACES}".encode()).hexdigest()[:12]
    CACHE.mkdir(parents=True, exist_ok=True)
    cache = CACHE / f"{key}.jsonl"
    have = {}
    if cache.exists():
        for line in cache.read_text().splitlines():
            r = json.loads(line)
            have[r["trace"]] = r
    todo = [n for n in CORPUS if n not in have and (TRACES / f"{n}.trace.csv.gz").exists()]
    todo.sort(key=lambda n: -CORPUS[n]["events"])
    if todo:
        with ThreadPoolExecutor(int(os.environ.get("JOBS", 2))) as ex, cache.open("a") as f:
            for r in ex.map(lambda n: replay(conf, binary, n), todo):
                have[r["trace"]] = r
                f.write(json.dumps(r) + "\n")
                f.flush()
    return have


def pytorch(name):
    """(best of PyTorch's three, requested) peaks of a trace."""
    c = CORPUS[name]
    peaks = [c["replay"][m]["peak_reserved_bytes"] for m in ("native", "expandable", "async")]
    return min(peaks), c["peak_requested_bytes"]


def summary(spec, res, base, reference):
    for split in ("tuning", "held_out"):
        names = [n for n in res if CORPUS[n]["split"] == split and "peak" in res[n]]
        if not names:
            continue
        wins = ties = better = worse = 0
        logs = []
        for n in names:
            best, req = pytorch(n)
            p = res[n]["peak"]
            wins += p < best
            ties += p == best
            logs.append(math.log(p / req))
            better += p < base[n]["peak"] * 0.9995
            worse += p > base[n]["peak"] * 1.0005
        ratios = [res[n]["driver"] / reference[n]["driver"] for n in names if reference[n].get("driver")]
        print(
            f"{spec:44s} {split:8s} n={len(names):3d} wins={wins:3d} ties={ties} "
            f"mean={math.exp(sum(logs) / len(logs)):.4f} vs default {better} better {worse} worse; "
            f"driver at most {max(ratios):.2f}x, {sum(r > 2 for r in ratios)} above 2x"
        )
    errors = [n for n in res if "peak" not in res[n]]
    if errors:
        print("  errors:", errors[:5])


PERTURBATIONS = [
    "max_page_size_mb:36",
    "max_page_size_mb:38",
    "",
    "move_budget:1.65",
    "move_budget:1.7",
    "move_budget:1.8",
    "move_budget:1.85",
]


def split_mean(res, split):
    names = [n for n in res if CORPUS[n]["split"] == split and "peak" in res[n]]
    logs = [math.log(res[n]["peak"] / pytorch(n)[1]) for n in names]
    return math.exp(sum(logs) / len(logs))


def paired(spec):
    conf, _, binary = spec.partition("@")
    conf = "" if conf == "default" else conf
    rows = []
    for p in PERTURBATIONS:
        base = results(p or "default")
        cand_conf = ",".join(x for x in (p, conf) if x) or "default"
        cand = results(cand_conf + ("@" + binary if binary else ""))
        rows.append((p or "(none: the default)", *(split_mean(r, s) for s in ("held_out", "tuning") for r in (base, cand))))
    print("| perturbation | held-out, default | held-out, candidate | tuning, default | tuning, candidate |")
    print("|---|---:|---:|---:|---:|")
    for name, hb, hc, tb, tc in rows:
        print(f"| {name} | {hb:.4f} | {hc:.4f} | {tb:.4f} | {tc:.4f} |")
    for label, i in (("held-out", 1), ("tuning", 3)):
        lower = sum(r[i + 1] < r[i] for r in rows)
        avg = [sum(r[j] for r in rows) / len(rows) for j in (i, i + 1)]
        print(f"{label}: candidate lower in {lower} of {len(rows)} pairs; averages {avg[0]:.4f} -> {avg[1]:.4f}")


def main():
    args = sys.argv[1:]
    if args[:1] == ["--paired"] and len(args) == 2:
        paired(args[1])
        return
    detail = "--detail" in args
    specs = [a for a in args if a != "--detail"]
    base = results("default")
    reference = results(PYTORCH_EXPANDABLE)
    summary("default", base, base, reference)
    for spec in specs:
        res = results(spec)
        summary(spec, res, base, reference)
        if detail:
            changed = sorted((res[n]["peak"] / base[n]["peak"], n) for n in res if "peak" in res[n])
            for _, n in changed[:8] + changed[-8:]:
                best, req = pytorch(n)
                print(f"   {n:28s} {base[n]['peak'] / req:.4f} -> {res[n]['peak'] / req:.4f} "
                      f"(PyTorch's best {best / req:.4f}, {CORPUS[n]['split']})")


if __name__ == "__main__":
    main()
