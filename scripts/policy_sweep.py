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
A first pair of lines gives PyTorch's own figures per split (the best of its three
per trace, and each allocator's geometric mean). This is for trying policies;
`expanse compare traces/` makes the README's table.

    python3 scripts/policy_sweep.py --paired SPEC

compares SPEC with the default under seven small perturbations of page sizes
and the move budget (largest page 36, 38 and 40 MiB; move budget 1.65 to
1.85), each with and without SPEC's configuration, and prints both halves'
means per pair. The default's per-trace figures move by several percent when
only its page sizes change (docs/policy-study.md, thirtieth round), so a
candidate is judged by how often it is lower across the pairs, not by one
comparison.

    python3 scripts/policy_sweep.py --batch NAME,NAME,... [SPEC...]

prints the table a blind batch is scored with (docs/policy-study.md): per
trace of the batch, PyTorch's best and the default's and each SPEC's
fragmentation (bold: below PyTorch's best; "(tie)": equal to it), then per
column the wins, the geometric mean and the largest driver estimate against
expanse's PyTorch-expandable mode, and PyTorch's own means on the batch.
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


def geomean(ratios):
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios))


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
        fractions = []
        for n in names:
            best, req = pytorch(n)
            p = res[n]["peak"]
            wins += p < best
            ties += p == best
            fractions.append(p / req)
            better += p < base[n]["peak"] * 0.9995
            worse += p > base[n]["peak"] * 1.0005
        ratios = [res[n]["driver"] / reference[n]["driver"] for n in names if reference[n].get("driver")]
        print(
            f"{spec:44s} {split:8s} n={len(names):3d} wins={wins:3d} ties={ties} "
            f"mean={geomean(fractions):.4f} vs default {better} better {worse} worse; "
            f"driver at most {max(ratios):.2f}x, {sum(r > 2 for r in ratios)} above 2x"
        )
    errors = [n for n in res if "peak" not in res[n]]
    if errors:
        print("  errors:", errors[:5])


def pytorch_summary():
    """PyTorch's own figures per split, the bar the summaries' wins are counted against."""
    for split in ("tuning", "held_out"):
        names = [n for n in CORPUS if CORPUS[n]["split"] == split]
        if not names:
            continue
        req = {n: CORPUS[n]["peak_requested_bytes"] for n in names}
        mode = {
            m: geomean([CORPUS[n]["replay"][m]["peak_reserved_bytes"] / req[n] for n in names])
            for m in ("native", "expandable", "async")
        }
        best = geomean([pytorch(n)[0] / req[n] for n in names])
        print(
            f"{'PyTorch':44s} {split:8s} n={len(names):3d} best per trace {best:.4f}, "
            f"expandable {mode['expandable']:.4f}, cudaMallocAsync {mode['async']:.4f}, native {mode['native']:.4f}"
        )


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
    return geomean([res[n]["peak"] / pytorch(n)[1] for n in names])


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


def batch_table(names, specs):
    specs = ["default"] + [s for s in specs if s != "default"]
    missing = [n for n in names if n not in CORPUS]
    if missing:
        sys.exit(f"policy_sweep: not in traces/corpus.json: {', '.join(missing)}")
    res = {s: results(s) for s in specs}
    reference = results(PYTORCH_EXPANDABLE)
    head = " | ".join("**default**" if s == "default" else f"`{s}`" for s in specs)
    print(f"| trace | PyTorch best | {head} |")
    print("|---|---:|" + "---:|" * len(specs))
    cols = {s: {"wins": 0, "ties": 0, "fractions": [], "driver": 0.0} for s in specs}
    for n in names:
        best, req = pytorch(n)
        cells = []
        for s in specs:
            r, c = res[s][n], cols[s]
            if "peak" not in r:
                sys.exit(f"policy_sweep: {s} failed on {n}: {r.get('error', '')}")
            f = r["peak"] / req
            c["fractions"].append(f)
            if reference[n].get("driver"):
                c["driver"] = max(c["driver"], r["driver"] / reference[n]["driver"])
            c["wins"] += r["peak"] < best
            c["ties"] += r["peak"] == best
            cells.append(f"**{f:.4f}**" if r["peak"] < best else f"{f:.4f} (tie)" if r["peak"] == best else f"{f:.4f}")
        print(f"| {n} | {best / req:.4f} | " + " | ".join(cells) + " |")

    def wins(c):
        ties = {0: "", 1: " and a tie"}.get(c["ties"], f" and {c['ties']} ties")
        return f"{c['wins']} of {len(names)}{ties}"

    best_mean = geomean([pytorch(n)[0] / pytorch(n)[1] for n in names])
    print("| **wins** | | " + " | ".join(wins(cols[s]) for s in specs) + " |")
    print(f"| **geometric mean** | {best_mean:.4f} | " + " | ".join(f"{geomean(cols[s]['fractions']):.4f}" for s in specs) + " |")
    print("| **driver vs PyTorch expandable, at most** | | " + " | ".join(f"{cols[s]['driver']:.2f}x" for s in specs) + " |")
    modes = {m: geomean([CORPUS[n]["replay"][m]["peak_reserved_bytes"] / CORPUS[n]["peak_requested_bytes"]
                         for n in names]) for m in ("expandable", "async", "native")}
    print(f"PyTorch on the batch: expandable {modes['expandable']:.4f}, cudaMallocAsync {modes['async']:.4f}, "
          f"native {modes['native']:.4f}")


def main():
    args = sys.argv[1:]
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return
    unknown = [a for a in args if a.startswith("-") and a not in ("--paired", "--batch", "--detail")]
    if unknown:
        sys.exit(f"policy_sweep: unknown option {unknown[0]} (see --help)")
    if args[:1] == ["--paired"] and len(args) == 2:
        paired(args[1])
        return
    if args[:1] == ["--batch"] and len(args) >= 2:
        batch_table(args[1].split(","), args[2:])
        return
    detail = "--detail" in args
    specs = [a for a in args if a != "--detail"]
    base = results("default")
    reference = results(PYTORCH_EXPANDABLE)
    pytorch_summary()
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
