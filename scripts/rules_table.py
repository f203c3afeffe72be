#!/usr/bin/env python3
"""What each rule of expanse's default buys, on every trace of the corpus.

    python3 scripts/rules_table.py [BINARY] > docs/bench/rules.md

Runs `expanse compare traces/ --no-capacity --backend sim --json` once with
the default and once with each of its main decisions turned off by a
setting, and writes one Markdown table: per trace the default's
fragmentation (peak reserved / peak requested) and each variant's, then per
split the geometric mean, the wins (strictly below the best of PyTorch's
three recorded allocators) and the largest driver estimate against PyTorch
expandable's. About 25 s a configuration on two cores.
"""
import json
import math
import subprocess
import sys

# (column, conf, what turning it off means)
VARIANTS = [
    ("default", "", "expanse's default"),
    ("no moving", "move_budget:0", "pages never move to where a segment grows"),
    ("no lending", "lend_across_streams:False", "a stream takes only its own free blocks (and so no shared segments)"),
    ("segment per stream", "share_segments:False", "one segment per stream and pool, lending between them"),
    ("20 MiB pages", "min_grow_size_mb:20,max_page_size_mb:20", "uniform 20 MiB large-pool pages instead of growth-sized ones"),
    ("pools apart", "small_from_large:False", "a small request never takes a large-pool block: the small pool grows instead"),
    ("lowest growth", "grow_fewest:False", "a segment grows at the lowest unmapped stretch with room, not where the fewest new bytes map"),
    ("donors by offset", "move_whole_first:False", "pages move from the highest-offset free block first, whole or not"),
]
SAME = 0.0005  # within this of the default's figure: "="


def run(binary, conf):
    cmd = [binary, "compare", "traces/", "--no-capacity", "--backend", "sim", "--json"]
    if conf:
        cmd += ["--conf", conf]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        d = json.loads(line)
        if "trace" not in d:
            continue  # a split's summary line
        f = d["fragmentation"]
        pt = [f[k] for k in ("pytorch_native", "pytorch_expandable", "pytorch_async") if f.get(k) is not None]
        if len(pt) < 3:
            continue  # no recorded PyTorch figure: not a corpus trace
        rows[d["trace"]] = {"split": d["split"], "frag": f["expanse"], "best": min(pt), "driver": d["driver_estimate_ratio"]}
    return rows


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/expanse"
    results = []
    for name, conf, _ in VARIANTS:
        print(f"running {name} ({conf or 'default'})", file=sys.stderr)
        results.append(run(binary, conf))
    base = results[0]
    order = sorted(base, key=lambda t: (base[t]["split"] != "tuning", t))
    print("| trace | split | best PyTorch | " + " | ".join(f"{n} (`{c}`)" if c else n for n, c, _ in VARIANTS) + " |")
    print("|---|---|---:|" + "---:|" * len(VARIANTS))
    for t in order:
        cells = []
        for i, r in enumerate(results):
            v = r[t]["frag"]
            same = i > 0 and abs(v - base[t]["frag"]) < SAME
            cells.append("=" if same else f"{v:.4f}")
        print(f"| {t} | {base[t]['split']} | {base[t]['best']:.4f} | " + " | ".join(cells) + " |")
    for split in ("tuning", "held-out"):
        names = [t for t in order if base[t]["split"] == split]
        means = [f"{gmean([r[t]['frag'] for t in names]):.4f}" for r in results]
        wins = [str(sum(r[t]["frag"] < r[t]["best"] for t in names)) for r in results]
        drv = [f"{max(r[t]['driver'] for t in names):.2f}x" for r in results]
        print(f"| **{split}: geometric mean** ({len(names)} traces) | | {gmean([base[t]['best'] for t in names]):.4f} | " + " | ".join(means) + " |")
        print(f"| **{split}: wins** | | | " + " | ".join(wins) + " |")
        print(f"| **{split}: driver, at most** | | | " + " | ".join(drv) + " |")
    print()
    for name, conf, what in VARIANTS[1:]:
        print(f"- {name} (`{conf}`): {what}.")


if __name__ == "__main__":
    main()
