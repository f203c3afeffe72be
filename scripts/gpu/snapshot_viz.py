"""expanse's snapshots through PyTorch's own memory tools, on a GPU.

Run on the device machine from the repository root, with the binaries in
.device-bin/ (libexpanse.so, expanse):

    python3 scripts/gpu/snapshot_viz.py [--steps 4] [--replay-backend cuda]

1. A real workload (GPT-2 small training steps from a config, random
   data; a plain MLP if transformers is missing) runs on expanse through
   PyTorch (python/expanse_torch.py), with the history recorded and under
   torch.profiler(profile_memory=True); expanse dumps a snapshot.
2. PyTorch's torch.cuda._memory_viz renders it: segments, memory (the
   flamegraph text; flamegraph.pl is not downloaded), segsum, trace,
   trace_plot (allocations and segments), segment_plot, profile_plot (of
   the profile), and `python -m torch.cuda._memory_viz trace_plot
   snapshot.pickle -o out.html`.
3. The same workload on PyTorch's own allocator gives PyTorch's snapshot:
   the keys it has that expanse's lacks are listed.
4. Every trace in traces/ is replayed by `expanse replay --snapshot` and
   its snapshot rendered the same way (profile_plot aside), and checked by
   scripts/check_snapshot.py.

Prints one line per check ('ok' or 'FAILED: why') and 'N passed, N failed';
writes $OUT/snapshot-viz.json, the workload's snapshot and HTML to $OUT.
"""

import argparse
import glob
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.abspath(os.environ.get("OUT", "gpu-out"))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
os.environ.setdefault("EXPANSE_LIB", os.path.join(ROOT, ".device-bin", "libexpanse.so"))

results = {}


def check(name, fn):
    """Run fn; record ok (with what it returned, briefly) or the failure."""
    t = time.time()
    try:
        detail = fn()
        results[name] = {"ok": True, "detail": detail, "seconds": round(time.time() - t, 2)}
        print(f"{name}: ok ({detail})", flush=True)
    except Exception as e:  # report and go on
        results[name] = {"ok": False, "detail": repr(e)[:500]}
        print(f"{name}: FAILED: {e!r}"[:600], flush=True)


def text_of(out):
    assert isinstance(out, str) and out, f"empty output ({type(out).__name__})"
    return f"{len(out)} characters"


def workload(steps):
    """A few GPT-2 small training steps (or an MLP's), under the profiler."""
    import torch

    dev = torch.device("cuda:0")
    torch.manual_seed(0)
    try:
        from transformers import GPT2Config, GPT2LMHeadModel

        model = GPT2LMHeadModel(GPT2Config(n_layer=12, n_head=12, n_embd=768, vocab_size=50257)).to(dev)

        def batch(i):
            ids = torch.randint(0, 50257, (4 + i % 4, 256 + 64 * (i % 3)), device=dev)
            return model(input_ids=ids, labels=ids).loss

        kind = "gpt2-small"
    except ImportError:
        model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(8)]).to(dev)

        def batch(i):
            return model(torch.randn(64 * (1 + i % 4), 4096, device=dev)).square().mean()

        kind = "mlp"
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, profile_memory=True, record_shapes=True, with_stack=True) as prof:
        for i in range(steps):
            opt.zero_grad(set_to_none=True)
            batch(i).backward()
            opt.step()
        torch.cuda.synchronize()
    return kind, prof


def render(tag, path, prof=None, keep_html=False):
    """Every _memory_viz function on the snapshot at path."""
    from torch.cuda import _memory_viz as mv

    def load():
        with open(path, "rb") as f:
            return pickle.load(f)

    snap = load()
    ident = lambda s: s  # noqa: E731  (flamegraph text, no flamegraph.pl)
    check(f"{tag} segments", lambda: text_of(mv.segments(snap, format_flamegraph=ident)))
    check(f"{tag} memory", lambda: text_of(mv.memory(snap, format_flamegraph=ident)))
    check(f"{tag} segsum", lambda: text_of(mv.segsum(load())))
    check(f"{tag} trace", lambda: text_of(mv.trace(load())))
    check(f"{tag} trace_plot", lambda: text_of(mv.trace_plot(load())))
    check(f"{tag} trace_plot segments", lambda: text_of(mv.trace_plot(load(), plot_segments=True)))
    check(f"{tag} segment_plot", lambda: text_of(mv.segment_plot(load())))
    if prof is not None:
        check(f"{tag} profile_plot", lambda: text_of(mv.profile_plot(prof)))

    def cli():
        html = os.path.join(OUT if keep_html else tempfile.gettempdir(), f"{tag}-trace_plot.html")
        p = subprocess.run([sys.executable, "-m", "torch.cuda._memory_viz", "trace_plot", path, "-o", html],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr[-800:]
        size = os.path.getsize(html)
        if not keep_html:
            os.remove(html)
        assert size > 0
        return f"{html if keep_html else 'out.html'}: {size} bytes"

    check(f"{tag} python -m torch.cuda._memory_viz trace_plot", cli)
    import check_snapshot

    check(f"{tag} check_snapshot.py", lambda: check_snapshot.check(path)[:80])


def child_native(steps, out):
    """PyTorch's own snapshot of the workload: its key sets, as JSON."""
    import torch

    torch.cuda.memory._record_memory_history(max_entries=1_000_000)
    workload(steps)
    s = torch.cuda.memory._snapshot()
    keys = {
        "top": sorted(s),
        "segment": sorted({k for g in s["segments"] for k in g}),
        "block": sorted({k for g in s["segments"] for b in g["blocks"] for k in b}),
        "entry": sorted({k for t in s["device_traces"] for e in t for k in e}),
    }
    with open(out, "w") as f:
        json.dump(keys, f)


def compare_keys(ours_path, steps):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "keys.json")
        env = dict(os.environ)
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        p = subprocess.run([sys.executable, __file__, "--child-native", out, "--steps", str(steps)], env=env,
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr[-800:]
        theirs = json.load(open(out))
    with open(ours_path, "rb") as f:
        s = pickle.load(f)
    ours = {
        "top": set(s),
        "segment": {k for g in s["segments"] for k in g},
        "block": {k for g in s["segments"] for b in g["blocks"] for k in b},
        "entry": {k for t in s["device_traces"] for e in t for k in e},
    }
    lacking = {k: sorted(set(v) - ours[k]) for k, v in theirs.items()}
    return f"keys PyTorch's snapshot has that expanse's lacks: {lacking}"


def replays(backend):
    exe = os.path.join(ROOT, ".device-bin", "expanse")
    if not os.path.exists(exe):
        exe = os.path.join(ROOT, "target", "release", "expanse")
    traces = sorted(glob.glob(os.path.join(ROOT, "traces", "*.trace.csv*")))
    only = os.environ.get("SNAPSHOT_TRACES")
    if only:
        traces = [t for t in traces if os.path.basename(t).split(".trace.csv")[0] in only.split(",")]
    with tempfile.TemporaryDirectory() as d:
        for t in traces:
            name = os.path.basename(t).split(".trace.csv")[0]
            path = os.path.join(d, f"{name}.pickle")

            def run():
                p = subprocess.run([exe, "replay", t, "--backend", backend, "--snapshot", path, "--json"],
                                   capture_output=True, text=True)
                assert p.returncode == 0, p.stderr[-800:]
                r = json.loads(p.stdout)
                return f"peak reserved {r['peak_reserved_bytes']}, {os.path.getsize(path)} bytes of snapshot"

            check(f"replay {name} --snapshot", run)
            if os.path.exists(path):
                render(f"replay {name}", path)
                os.remove(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--replay-backend", default="cuda")
    ap.add_argument("--skip-replays", action="store_true")
    ap.add_argument("--child-native", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child_native:
        child_native(a.steps, a.child_native)
        return 0
    os.makedirs(OUT, exist_ok=True)
    import torch
    import expanse_torch

    expanse_torch.install()
    expanse_torch.record_history(True, 0)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}, expanse backend {expanse_torch.backend()}")
    snap_path = os.path.join(OUT, "workload-snapshot.pickle")
    state = {}

    def run_workload():
        state["kind"], state["prof"] = workload(a.steps)
        expanse_torch.dump_snapshot(snap_path)
        return f"{state['kind']}, {a.steps} steps, {os.path.getsize(snap_path)} bytes of snapshot"

    check("workload on expanse + dump_snapshot", run_workload)
    if os.path.exists(snap_path):
        render("workload", snap_path, prof=state.get("prof"), keep_html=True)
        check("workload keys against PyTorch's own snapshot", lambda: compare_keys(snap_path, a.steps))
    if not a.skip_replays:
        replays(a.replay_backend)
    passed = sum(r["ok"] for r in results.values())
    failed = len(results) - passed
    with open(os.path.join(OUT, "snapshot-viz.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
