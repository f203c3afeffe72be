"""Summary of scripts/gpu/issue11.sh's work directory, as Markdown on stdout.

    python3 scripts/gpu/issue11_summary.py WORKDIR

The compatibility table in the README's form (PyTorch native, PyTorch
expandable, expanse), with the DDP and FSDP2 rows taken from the
dist_gpt2.py runs (works: both ranks trained and the losses are within
1e-3 of native's; silently wrong: they are not; raises: the error), then
the GPT-2 reduce-overhead comparison, the record_stream test with the hook
on and off, expanse's start-up device check, and the native stacks of any
crash.
"""

import glob
import json
import os
import sys

W = sys.argv[1]
ALLOCS = ["native", "expandable", "expanse"]


def load(path, default=None):
    try:
        with open(os.path.join(W, path)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def text(path):
    try:
        with open(os.path.join(W, path)) as f:
            return f.read()
    except OSError:
        return ""


def dist_status(a, kind, native):
    r = load(f"dist-{a}.json")
    if r is None:
        tail = text(f"dist-{a}.txt").strip().splitlines()[-3:]
        return f"raises (no result: {' / '.join(tail)[:200]})"
    k = r.get(kind, {})
    if k.get("error"):
        return f"raises ({k['error'][:200]})"
    losses = k.get("losses") or []
    if not losses:
        return "raises (no losses)"
    if a == "native":
        return "works"
    ref = ((native or {}).get(kind) or {}).get("losses") or []
    if len(ref) != len(losses):
        return "works (no native losses to compare)"
    rel = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(ref, losses))
    return "works" if rel <= 1e-3 else f"silently wrong (losses differ from native by {rel:.2e} relative)"


def main():
    table = {}
    for part in ["compat-pt", "compat-expanse"]:
        for row, cols in (load(f"{part}/compat.json", {}) or {}).items():
            table.setdefault(row, {}).update(cols)
    native = load("dist-native.json")
    for kind, row in [("ddp", "DDP (2 GPUs)"), ("fsdp2", "FSDP2 (2 GPUs)")]:
        table[row] = {a: dist_status(a, kind, native) for a in ALLOCS}
    order = [
        "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
        "reset_peak_memory_stats", "empty_cache", "set_per_process_memory_fraction", "mem_get_info",
        "Tensor.record_stream", "torch.cuda.graph capture and replay", 'torch.compile(mode="reduce-overhead")',
        "torch.cuda.MemPool / use_mem_pool", "torch.cuda.memory._snapshot", "DDP (2 GPUs)", "FSDP2 (2 GPUs)",
        "torch.multiprocessing sharing of a CUDA tensor",
    ]
    print("# Issue 11 on the H200s\n")
    print(f"Extension build: {' '.join(text('ext-build.log').strip().splitlines()[-2:])[:300]}\n")
    print("| API | PyTorch native | PyTorch expandable | expanse |")
    print("|---|---|---|---|")
    for row in order + [r for r in table if r not in order]:
        cols = table.get(row, {})
        print(f"| {row} | " + " | ".join(cols.get(a, "not run").replace("|", "/") for a in ALLOCS) + " |")
    print("\nexpanse ran with its defaults (graph capture allowed). With EXPANSE_GRAPHS=0:")
    for row, cols in (load("compat-guard/compat.json", {}) or {}).items():
        print(f"- {row}: {cols.get('expanse')}")

    print("\n## GPT-2 small, torch.compile(mode=\"reduce-overhead\"), native vs expanse\n")
    print("```\n" + (text("compile-compare.txt").strip() or "no comparison") + "\n```")
    for a in ["native", "expanse"]:
        r = load(f"compile-{a}.json")
        if r is None:
            print(f"- {a}: no result; last lines: {' / '.join(text(f'compile-{a}.txt').strip().splitlines()[-4:])[:600]}")
        else:
            print(f"- {a}: {len(r['losses'])} steps, {r['seconds']} s, peak reserved {r['peak_reserved']}, notes {r.get('notes')}")

    print("\n## record_stream (scripts/gpu/record_stream_test.py)\n")
    for h in ["on", "off"]:
        lines = [ln for ln in text(f"rs-{h}.txt").splitlines() if ln.startswith("{")]
        print(f"- hook {h}: {lines[-1] if lines else ' / '.join(text(f'rs-{h}.txt').strip().splitlines()[-3:])}")
    print("  (expected: on PASS, off FAIL; INCONCLUSIVE means the side stream had finished too early)")

    print("\n## DDP / FSDP2 (scripts/gpu/dist_gpt2.py)\n")
    for a in ALLOCS:
        r = load(f"dist-{a}.json")
        if r:
            brief = {k: (v if not isinstance(v, dict) else {kk: vv for kk, vv in v.items() if kk != "losses"})
                     for k, v in r.items()}
            print(f"- {a}: {json.dumps(brief)}")
    for a in ["expandable", "expanse"]:
        print(f"- native vs {a}: {' / '.join(text(f'dist-compare-{a}.txt').strip().splitlines())}")

    crashes = sorted(glob.glob(os.path.join(W, "compat-*", "crash-*.txt")))
    print(f"\n## Crashes ({len(crashes)})\n")
    for c in crashes:
        t = open(c).read()
        lines = t.splitlines()
        at = next((i for i, ln in enumerate(lines) if "received signal" in ln), 0)
        print(f"### {os.path.relpath(c, W)}\n\n```\n" + "\n".join(lines[:2] + lines[at:at + 45]) + "\n```")


main()
