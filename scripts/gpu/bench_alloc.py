#!/usr/bin/env python3
"""The allocation fast path of expanse, PyTorch (native and expandable
segments), cudaMallocAsync and a mutex-guarded exact-size cache (the
floor), in ONE process on one H200, on the sequences of `expanse bench`.

Run on the device machine from the repository root, with
.device-bin/libexpanse.so built from this tree:

    python3 scripts/gpu/bench_alloc.py [--quick] [--baseline-lib OLD/libexpanse.so]

(--baseline-lib also measures another build of the library in the same
process, e.g. one from before a speed change, and prints the speed-ups.)

Builds scripts/gpu/bench_alloc.cpp with torch.utils.cpp_extension, prints
a table and the ratios, and writes bench_alloc.json under $OUT (or
./gpu-out). PyTorch reads PYTORCH_CUDA_ALLOC_CONF once, so the expandable
phase is switched on at run time with
torch.cuda.memory._set_allocator_settings("expandable_segments:True") after
an empty_cache (as PyTorch's own test_cuda_expandable_segments.py does).
"""
import argparse
import datetime
import json
import os
import sys

import torch
from torch.utils.cpp_extension import load

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SIZES = ["512", "65536", "1048576", "8388608", "67108864"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    ap.add_argument("--lib", default=os.path.join(ROOT, ".device-bin", "libexpanse.so"))
    ap.add_argument("--baseline-lib", help="another libexpanse.so (e.g. built from an older commit), measured "
                    "the same way in the same process as 'expanse baseline', for a before/after comparison")
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure expanse (and the baseline) this many times, alternating which goes first, "
                    "and keep each figure's best: the first library measured after other GPU work can run "
                    "slow for reasons of the machine, not of the code")
    ap.add_argument("--pin", type=int, default=-1, metavar="CPU",
                    help="run the pair and mixed sequences with the measuring thread pinned to this CPU "
                    "(the threaded ones get its former CPUs back); default: not pinned")
    args = ap.parse_args()
    pairs, steps, tsteps = (20_000, 20_000, 5_000) if args.quick else (200_000, 200_000, 40_000)
    os.environ.setdefault("EXPANSE_BACKEND", "cuda")
    os.environ.pop("EXPANSE_ALLOC_CONF", None)  # expanse's default config
    ext = load(
        name="expanse_bench_alloc",
        sources=[os.path.join(HERE, "bench_alloc.cpp")],
        extra_ldflags=["-ldl"],
        extra_cflags=["-O2"],
        with_cuda=True,
        verbose=False,
    )
    torch.zeros(1, device="cuda")  # the primary context, PyTorch's allocator
    counts = [1, 2, 4, 8]
    res = {}

    def run(label, kind, lib=args.lib):
        print(f"== {label}", file=sys.stderr, flush=True)
        r = ext.run(kind, lib, pairs, steps, tsteps, counts, args.pin)
        th = {str(k): v for k, v in r["threads"].items()}
        own = " / ".join(f"{th[c][0]:.0f}" for c in ("1", "8") if c in th)
        print(f"   pairs {' / '.join(f'{v:.0f}' for v in r['pair_ns'].values())} ns, mixed {r['mixed_ns']:.0f} ns"
              + (f", 1 / 8 threads own streams {own} steps/s" if own else ""), file=sys.stderr, flush=True)
        res[label] = best_of(res[label], r) if label in res else r

    libs = [("expanse", args.lib)]
    if args.baseline_lib:
        # dlopen'ed RTLD_LOCAL: a second, independent allocator.
        libs.append(("expanse baseline", args.baseline_lib))
    for r in range(max(1, args.rounds)):
        for label, lib in libs if r % 2 == 0 else libs[::-1]:
            run(label, "expanse", lib)
    torch.cuda.memory._set_allocator_settings("expandable_segments:False")
    run("pytorch native", "torch")
    torch.cuda.empty_cache()
    torch.cuda.memory._set_allocator_settings("expandable_segments:True")
    run("pytorch expandable", "torch")
    torch.cuda.empty_cache()
    run("cudaMallocAsync", "async")
    run("floor", "floor")
    report(res, counts)


def best_of(a, b):
    """Each figure's best of two measurements: the lower time, the higher
    throughput."""
    out = dict(a)
    out["mixed_ns"] = min(a["mixed_ns"], b["mixed_ns"])
    out["pair_ns"] = {k: min(v, b["pair_ns"][k]) for k, v in a["pair_ns"].items()}
    out["threads"] = {k: [max(x, y) for x, y in zip(v, b["threads"][k])] for k, v in a["threads"].items()}
    return out


def report(res, counts):
    names = list(res)
    print("| ns per operation | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for s in SIZES:
        print(f"| alloc+free pair, {int(s)} B | " + " | ".join(f"{res[n]['pair_ns'][s]:.0f}" for n in names) + " |")
    print("| mixed (256 live) | " + " | ".join(
        f"{res[n]['mixed_ns']:.0f}" if res[n]["mixed_ns"] >= 0 else "-" for n in names) + " |")
    print("\n| threads | " + " | ".join(f"{n} own streams (steps/s) | {n} one stream" for n in names[:-1]) + " |")
    print("|---:|" + "---:|---:|" * (len(names) - 1))
    for c in counts:
        cells = []
        for n in names[:-1]:
            own, one = res[n]["threads"][str(c)]
            cells += [f"{own:.0f}", f"{one:.0f}"]
        print(f"| {c} | " + " | ".join(cells) + " |")
    e, x = res["expanse"], res["pytorch expandable"]
    checks = {
        "hot_pair_max_ns": max(e["pair_ns"][s] for s in SIZES),
        "mixed_ns": e["mixed_ns"],
        "pair_speedup_vs_expandable_min": min(x["pair_ns"][s] / e["pair_ns"][s] for s in SIZES),
        "mixed_speedup_vs_expandable": x["mixed_ns"] / e["mixed_ns"],
        "threads8_own_over_1": e["threads"]["8"][0] / e["threads"]["1"][0],
    }
    if "expanse baseline" in res:
        b = res["expanse baseline"]
        checks.update({
            f"pair_{s}_speedup_vs_baseline": b["pair_ns"][s] / e["pair_ns"][s] for s in SIZES
        })
        checks["mixed_speedup_vs_baseline"] = b["mixed_ns"] / e["mixed_ns"]
        checks["threads8_own_vs_baseline"] = e["threads"]["8"][0] / b["threads"]["8"][0]
    print("\nexpanse against the issue's targets (hot pair <= 80 ns, mixed <= 250 ns, >= 8x / 4x PyTorch"
          " expandable, 8 threads on 8 streams >= 3x one thread):")
    for k, v in checks.items():
        print(f"  {k}: {v:.2f}")
    out = os.environ.get("OUT", "gpu-out")
    os.makedirs(out, exist_ok=True)
    doc = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(0), "results": res, "checks": checks}
    with open(os.path.join(out, "bench_alloc.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
