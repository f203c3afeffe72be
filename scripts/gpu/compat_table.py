"""torch.cuda's memory API on PyTorch native, PyTorch expandable and expanse (issue 11).

    python3 scripts/gpu/compat_table.py [--only ROW,...] [--skip ROW,...] [--allocators native,expandable,expanse]
        [--single expanse] [--backtraces] [--tag -x]

Rows run in fresh processes per allocator (the allocator is fixed per
process, and a failed capture can poison a context), with a timeout; the
cheap rows share one process, except for the allocators named by --single,
whose every row runs alone, so that a crash hides nothing. A crashed row
(killed by a signal) is run again under gdb with --backtraces, its native
stacks in $OUT/crash-*.txt; children run with faulthandler, and the rows
that crashed before print each step to stderr (in $OUT/compat-*.log). Every
row checks what it returns, not only that it returns: "works", "raises
(message)", "silently wrong (what)", or "needs 2 GPUs". Results go to
$OUT/compat.json and $OUT/compat.md (the README's table); the table is
printed at the end. Needs libexpanse.so: $EXPANSE_LIB, else
.device-bin/libexpanse.so, else target/release/libexpanse.so.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MIB = 1 << 20

ROWS = [
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
    "reset_peak_memory_stats", "empty_cache", "set_per_process_memory_fraction", "mem_get_info",
    "Tensor.record_stream", "torch.cuda.graph capture and replay", 'torch.compile(mode="reduce-overhead")',
    "torch.cuda.MemPool / use_mem_pool", "torch.cuda.memory._snapshot", "out-of-memory observer", "DDP (2 GPUs)",
    "FSDP2 (2 GPUs)", "torch.multiprocessing sharing of a CUDA tensor",
]
# Rows cheap enough to share one process per allocator (each in try/except).
BASIC = ROWS[:9] + ["torch.cuda.MemPool / use_mem_pool", "torch.cuda.memory._snapshot", "out-of-memory observer"]


class Wrong(Exception):
    """The call returned, but the result is wrong."""


def setup(allocator):
    if allocator == "expandable":
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    else:
        os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if allocator == "expanse":
        lib = os.environ.get("EXPANSE_LIB") or next(
            (p for p in [os.path.join(ROOT, ".device-bin", "libexpanse.so"), os.path.join(ROOT, "target", "release", "libexpanse.so")] if os.path.exists(p)),
            None,
        )
        os.environ["EXPANSE_LIB"] = lib or "libexpanse.so"
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import expanse_torch

        mode = expanse_torch.install()
        import expanse_compat

        print(f"expanse mode: {mode}; notes: {expanse_compat.notes()}", file=sys.stderr)


def step(what):
    """Progress on stderr, so that a crash's log shows where it happened."""
    print(f"STEP {what}", file=sys.stderr, flush=True)


def expect(cond, what):
    if not cond:
        raise Wrong(what)


# --- the rows (child side) ---------------------------------------------------------


def row_memory_allocated(torch):
    before = torch.cuda.memory_allocated()
    x = torch.empty(8 * MIB, dtype=torch.uint8, device="cuda")
    d = torch.cuda.memory_allocated() - before
    expect(d == 8 * MIB, f"8 MiB tensor changed memory_allocated by {d}")
    del x


def row_max_memory_allocated(torch):
    base = torch.cuda.memory_allocated()
    x = torch.empty(64 * MIB, dtype=torch.uint8, device="cuda")
    del x
    peak = torch.cuda.max_memory_allocated()
    expect(peak >= base + 64 * MIB, f"peak {peak} < {base} + 64 MiB")


def row_memory_reserved(torch):
    x = torch.empty(32 * MIB, dtype=torch.uint8, device="cuda")
    r = torch.cuda.memory_reserved()
    expect(r >= torch.cuda.memory_allocated() >= 32 * MIB, f"reserved {r} below allocated")
    del x


def row_max_memory_reserved(torch):
    x = torch.empty(32 * MIB, dtype=torch.uint8, device="cuda")
    expect(torch.cuda.max_memory_reserved() >= torch.cuda.memory_reserved() >= 32 * MIB, "max reserved below reserved")
    del x


def row_memory_stats(torch):
    x = torch.empty(4 * MIB, dtype=torch.uint8, device="cuda")
    s = torch.cuda.memory_stats()
    expect(s.get("allocated_bytes.all.current") == torch.cuda.memory_allocated() >= 4 * MIB, "allocated_bytes.all.current disagrees")
    expect("reserved_bytes.large_pool.peak" in s and "num_alloc_retries" in s, "keys missing")
    del x


def row_reset_peak_memory_stats(torch):
    x = torch.empty(64 * MIB, dtype=torch.uint8, device="cuda")
    del x
    torch.cuda.reset_peak_memory_stats()
    expect(torch.cuda.max_memory_allocated() == torch.cuda.memory_allocated(), "peak not reset")


def row_empty_cache(torch):
    # Another process on the GPU can move the free memory in between: three
    # tries before calling it a shortfall.
    gains = []
    for _ in range(3):
        torch.cuda.synchronize()
        x = torch.empty(512 * MIB, dtype=torch.uint8, device="cuda")
        x.fill_(1)
        del x
        torch.cuda.synchronize()
        free_before = torch.cuda.mem_get_info()[0]
        torch.cuda.empty_cache()
        gains.append(torch.cuda.mem_get_info()[0] - free_before)
        if gains[-1] >= 256 * MIB:
            return
    raise Wrong(f"empty_cache returned only {[g >> 20 for g in gains]} MiB of a freed 512 MiB tensor")


def row_set_per_process_memory_fraction(torch):
    total = torch.cuda.mem_get_info()[1]
    step("empty_cache")
    torch.cuda.empty_cache()
    step("set_per_process_memory_fraction(0.05)")
    torch.cuda.set_per_process_memory_fraction(0.05)
    try:
        try:
            step("allocate 20% (must fail)")
            x = torch.empty(int(total * 0.2), dtype=torch.uint8, device="cuda")
            del x
            raise Wrong("a 20% allocation succeeded under a 5% fraction")
        except torch.cuda.OutOfMemoryError:
            step("out of memory, as it should")
        step("allocate 1%")
        y = torch.empty(int(total * 0.01), dtype=torch.uint8, device="cuda")
        step("free 1%")
        del y
    finally:
        step("set_per_process_memory_fraction(1.0)")
        torch.cuda.set_per_process_memory_fraction(1.0)
    step("done")


def row_mem_get_info(torch):
    free, total = torch.cuda.mem_get_info()
    expect(0 < free <= total and total == torch.cuda.get_device_properties(0).total_memory, f"({free}, {total})")


SLEEP_CYCLES = int(2e9)  # about a second on an H200


def warm_up(torch, side):
    """Launch once, on small tensors and on both streams, every kernel
    record_stream_check queues, so that no module loads during the race."""
    a = torch.ones(1024, device="cuda")
    b = torch.empty(1024, device="cuda")
    for s in (torch.cuda.current_stream(), side):
        with torch.cuda.stream(s):
            torch.cuda._sleep(1000)
            torch.mul(a, 2, out=b)
            b.fill_(7.0)
            int((b != 2).sum())
    torch.cuda.synchronize()


def record_stream_check(torch):
    """A tensor x read on a side stream after a long sleep, freed (with
    x.record_stream(side)) on the main stream before that read runs; at
    once a tensor of the same size is allocated and filled with 7 on the
    main stream. Honoured, record_stream keeps x's block from the main
    stream until the side stream's read is done (another block, or the
    same one with the main stream ordered after the read), so the read
    gives 2s; ignored, the block is reused at once and the read sees 7s.

    Every allocation the read needs is made before the sleep is queued, so
    nothing in the allocator waits on the side stream in between; and the
    side stream must still be busy when the overwrite has been queued,
    else the check proves nothing (side_busy False). Returns (reused,
    bad, side_busy): the new tensor got x's block, values the side stream
    read wrong, the side stream was still busy.

    Every kernel of the race is launched once first (warm_up): with CUDA's
    lazy module loading (the default), the first launch of a kernel loads
    its module, and loading may synchronize the context, so a first
    `torch.mul` queued behind the sleep blocked the host until the sleep
    ended and the race never happened (docs/gpu-runs/2026-11-30-s3/
    rs-diag.txt: the side stream idle right after the launch, in every
    allocator)."""
    n = 64 * MIB // 4
    main = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    warm_up(torch, side)
    x = torch.ones(n, device="cuda")
    with torch.cuda.stream(side):
        out = torch.empty(n, device="cuda")
    torch.cuda.synchronize()
    side.wait_stream(main)
    with torch.cuda.stream(side):
        torch.cuda._sleep(SLEEP_CYCLES)
        torch.mul(x, 2, out=out)
    x.record_stream(side)
    ptr = x.data_ptr()
    del x
    y = torch.empty(n, device="cuda")
    y.fill_(7.0)
    side_busy = not side.query()
    torch.cuda.synchronize()
    reused = y.data_ptr() == ptr
    bad = int((out != 2).sum())
    return reused, bad, side_busy


def row_record_stream(torch):
    reused, bad, side_busy = record_stream_check(torch)
    if not side_busy:
        return "inconclusive (the side stream had finished before the overwrite was queued)"
    expect(bad == 0, f"side stream read {bad} overwritten values (block reused: {reused})")


def row_graph(torch):
    x = torch.ones(MIB, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    step("warm-up on a side stream")
    with torch.cuda.stream(s):
        for _ in range(3):
            y = (x * 2) + 1
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    step("capture")
    with torch.cuda.graph(g):
        y = (x * 2) + 1  # x * 2 is a temporary freed inside the capture
    step("allocate after capture")
    z = torch.full((MIB,), 5.0, device="cuda")  # must not get the graph's memory
    x.fill_(3.0)
    step("replay")
    g.replay()
    torch.cuda.synchronize()
    expect(bool((y == 7).all()), "replay result wrong")
    expect(bool((z == 5).all()), "replay overwrote a tensor allocated after capture (graph memory was not private)")
    step("release the graph")
    del g
    torch.cuda.synchronize()
    w = torch.ones(4 * MIB, device="cuda")  # the allocator still works after the pool is released
    expect(float(w.sum()) == 4 * MIB, "allocation after releasing the graph is wrong")
    step("done")


def row_compile(torch):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda()
    f = torch.compile(m, mode="reduce-overhead")
    for i in range(6):
        inp = torch.randn(64, 256, device="cuda")
        with torch.no_grad():
            got = f(inp).clone()
            want = m(inp)
        expect(torch.allclose(got, want, rtol=1e-3, atol=1e-3), f"step {i}: compiled output differs")


def holder(segments, ptr):
    """The segment of a snapshot's `segments` that holds address `ptr`."""
    return next((g for g in segments if g["address"] <= ptr < g["address"] + g["total_size"]), None)


def row_mempool(torch):
    """A user pool's life: its uses, allocations routed to it (and only
    those), reuse of its freed blocks by the pool alone, its memory kept by
    empty_cache while it lives and returned when it dies, and two pools
    apart."""
    step("MemPool()")
    pool = torch.cuda.MemPool()
    expect(pool.id[0] == 0 and pool.use_count() == 1, f"new pool: id {pool.id}, use_count {pool.use_count()}")
    with torch.cuda.use_mem_pool(pool):
        expect(pool.use_count() == 2, f"use_count {pool.use_count()} inside use_mem_pool")
        t = torch.ones(MIB, device="cuda")
    expect(pool.use_count() == 1, f"use_count {pool.use_count()} after use_mem_pool")
    u = torch.ones(MIB, device="cuda")
    expect(float(t.sum()) == MIB and float(u.sum()) == MIB, "wrong contents")
    step("snapshots")
    mine = pool.snapshot()
    expect(holder(mine, t.data_ptr()) is not None, "the tensor made in use_mem_pool is not in the pool's snapshot")
    expect(holder(mine, u.data_ptr()) is None, "a tensor made outside use_mem_pool is in the pool's snapshot")
    seg = holder(torch.cuda.memory_snapshot(), u.data_ptr())
    where = seg and seg["segment_pool_id"]
    expect(seg is not None and tuple(where) == (0, 0), f"the outside tensor's segment is in pool {where}")
    step("reuse in the pool")
    ptr = t.data_ptr()
    del t
    with torch.cuda.use_mem_pool(pool):
        t2 = torch.empty(MIB, device="cuda")
    expect(t2.data_ptr() == ptr, "the pool's freed block was not reused by the pool")
    del t2
    v = torch.empty(MIB, device="cuda")
    expect(holder(pool.snapshot(), v.data_ptr()) is None, "a live pool's free block went to an allocation outside it")
    step("empty_cache with the pool alive")
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    kept = sum(g["total_size"] for g in pool.snapshot())
    expect(kept > 0, "empty_cache released a live pool's memory")
    step("two pools")
    other = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(other):
        w = torch.empty(MIB, device="cuda")
    expect(holder(pool.snapshot(), w.data_ptr()) is None, "a second pool was handed the first pool's block")
    del w, other
    step("the pool dies")
    reserved = torch.cuda.memory_reserved()
    del pool
    import gc

    gc.collect()
    freed = reserved - torch.cuda.memory_reserved()
    expect(freed >= kept, f"the dead pool's {kept >> 20} MiB were not returned ({freed >> 20} MiB were)")
    del u, v
    step("done")


def row_snapshot(torch):
    torch.cuda.memory._record_memory_history(max_entries=10000)
    x = torch.empty(4 * MIB, dtype=torch.uint8, device="cuda")
    s = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    expect(isinstance(s, dict) and len(s.get("segments", [])) > 0, "no segments in the snapshot")
    traced = [e for t in s["device_traces"] for e in t if e["action"] == "alloc" and e["addr"] == x.data_ptr()]
    expect(len(traced) == 1, f"the tensor's allocation is in the history {len(traced)} times, not once")
    del x


def row_oom_observer(torch):
    seen = []

    def observer(device, alloc, device_allocated, device_free):
        # PyTorch calls observers after releasing its lock: a snapshot works.
        seen.append((device, alloc, len(torch.cuda.memory._snapshot()["segments"])))

    torch._C._cuda_attach_out_of_memory_observer(observer)
    keep = torch.empty(MIB, dtype=torch.uint8, device="cuda")  # a segment for the snapshot to show
    try:
        torch.empty(200 << 30, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError:
        pass
    else:
        raise Wrong("a 200 GiB tensor fit")
    ok = len(seen) == 1 and seen[0][0] == torch.cuda.current_device() and seen[0][1] >= 200 << 30 and seen[0][2] > 0
    expect(ok, f"the observer saw {seen}")
    del keep


def dist_worker(rank, world, allocator, kind, port, q):
    try:
        setup(allocator)
        import torch
        import torch.distributed as dist

        torch.cuda.set_device(rank)
        if allocator == "expanse":
            import expanse_torch

            expanse_torch.reset_peak_stats(rank)  # the first call into expanse (issue 11's NCCL bug)
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
        torch.manual_seed(0)
        model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(4)]).cuda()
        if kind == "ddp":
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
        else:
            from torch.distributed.fsdp import fully_shard

            for layer in model:
                fully_shard(layer)
            fully_shard(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        g = torch.Generator(device="cuda").manual_seed(rank)
        losses = []
        for _ in range(3):
            loss = model(torch.randn(32, 1024, device="cuda", generator=g)).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            t = loss.detach().clone()
            dist.all_reduce(t)
            losses.append(float(t))
        peak = torch.cuda.max_memory_allocated()
        dist.destroy_process_group()
        q.put((rank, "ok", losses, peak))
    except Exception as e:
        q.put((rank, "err", f"{type(e).__name__}: {e}", 0))


def row_distributed(torch, kind):
    if torch.cuda.device_count() < 2:
        return "needs 2 GPUs"
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = 29600 + (os.getpid() % 300)
    ps = [ctx.Process(target=dist_worker, args=(r, 2, ALLOCATOR, kind, port, q)) for r in range(2)]
    for p in ps:
        p.start()
    res = [q.get(timeout=240) for _ in ps]
    for p in ps:
        p.join(30)
    errs = [r[2] for r in res if r[1] != "ok"]
    if errs:
        raise RuntimeError(errs[0])
    losses = [r[2] for r in sorted(res)]
    expect(losses[0] == losses[1], f"ranks disagree: {losses}")
    expect(all(r[3] > 0 for r in res), "max_memory_allocated is 0")


def share_child(q):
    t = q.get()
    q.put(float(t.sum()))


def row_multiprocessing(torch):
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=share_child, args=(q,))
    p.start()
    t = torch.ones(1024, device="cuda")
    from multiprocessing.reduction import ForkingPickler

    ForkingPickler.dumps(t)  # raises here (not in the queue's feeder thread) if sharing fails
    q.put(t)
    time.sleep(0.5)
    got = q.get(timeout=60)
    p.join(30)
    expect(got == 1024.0, f"child saw sum {got}")


ALLOCATOR = None
ROW_FNS = {
    "memory_allocated": row_memory_allocated,
    "max_memory_allocated": row_max_memory_allocated,
    "memory_reserved": row_memory_reserved,
    "max_memory_reserved": row_max_memory_reserved,
    "memory_stats": row_memory_stats,
    "reset_peak_memory_stats": row_reset_peak_memory_stats,
    "empty_cache": row_empty_cache,
    "set_per_process_memory_fraction": row_set_per_process_memory_fraction,
    "mem_get_info": row_mem_get_info,
    "Tensor.record_stream": row_record_stream,
    "torch.cuda.graph capture and replay": row_graph,
    'torch.compile(mode="reduce-overhead")': row_compile,
    "torch.cuda.MemPool / use_mem_pool": row_mempool,
    "torch.cuda.memory._snapshot": row_snapshot,
    "out-of-memory observer": row_oom_observer,
    "DDP (2 GPUs)": lambda torch: row_distributed(torch, "ddp"),
    "FSDP2 (2 GPUs)": lambda torch: row_distributed(torch, "fsdp2"),
    "torch.multiprocessing sharing of a CUDA tensor": row_multiprocessing,
}


def run_rows(allocator, rows):
    global ALLOCATOR
    ALLOCATOR = allocator
    setup(allocator)
    import torch

    for row in rows:
        try:
            r = ROW_FNS[row](torch)
            status = r or "works"
        except Wrong as e:
            status = f"silently wrong ({e})"
        except Exception as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            status = f"raises ({type(e).__name__}: {msg[:160]})"
        print("RESULT " + json.dumps({"row": row, "status": status}), flush=True)


def child_cmd(alloc, rows):
    return [sys.executable, "-X", "faulthandler", os.path.abspath(__file__), "--child", alloc, "--rows", json.dumps(rows)]


def backtrace(alloc, rows, timeout):
    """The crash again under gdb (when present): every thread's native stack."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return "gdb not found: no native backtrace (the Python stack from faulthandler is in the log)"
    cmd = [gdb, "-batch", "-nx", "-iex", "set debuginfod enabled off", "-ex", "set pagination off", "-ex", "run",
           "-ex", "info registers rip", "-ex", "bt 60", "-ex", "thread apply all bt 25", "--args"] + child_cmd(alloc, rows)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
        return p.stdout[-60000:] + "\n--- stderr ---\n" + p.stderr[-20000:]
    except subprocess.TimeoutExpired:
        return f"gdb timed out after {timeout} s"


def run_group(alloc, g, args, out, n):
    t0 = time.time()
    try:
        p = subprocess.run(child_cmd(alloc, g), capture_output=True, text=True, timeout=args.timeout, cwd=ROOT)
        text, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        text = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = f"timed out after {args.timeout} s", "timeout"
    got = {}
    for line in text.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            got[r["row"]] = r["status"]
    tag = f"{alloc}-{n:02d}"
    with open(os.path.join(out, f"compat-{tag}.log"), "w") as f:
        f.write(f"rows: {g}\nrc: {rc}\n" + text + "\n--- stderr ---\n" + err)
    crashed = isinstance(rc, int) and rc < 0
    if crashed and args.backtraces:
        # The row that was running: the first without a result.
        row = next(r for r in g if r not in got)
        with open(os.path.join(out, f"crash-{tag}.txt"), "w") as f:
            f.write(f"rows: {g}\nrc: {rc}\n" + backtrace(alloc, [row], 90))
    status = {}
    lines = (err or "").strip().splitlines()
    if crashed:  # what and where: Python's fault line, the last step a row printed
        fatal = [ln for ln in lines if ln.startswith("Fatal Python error")][-1:]
        steps = [ln for ln in lines if ln.startswith("STEP")][-1:]
        lines = [" after ".join(fatal + steps)] if fatal or steps else lines
    last = lines[-1:] or [""]
    for row in g:
        what = f"signal {-rc}" if crashed else f"rc {rc}"
        status[row] = got.get(row, f"raises (process ended, {what}: {last[0][:160]})")
    print(f"[{alloc}] {', '.join(g)[:60]}: {time.time() - t0:.0f} s", flush=True)
    return status


def parent(args):
    out = os.environ.get("OUT", "gpu-out")
    os.makedirs(out, exist_ok=True)
    rows = [r for r in ROWS if not args.only or any(o.lower() in r.lower() for o in args.only.split(","))]
    rows = [r for r in rows if not args.skip or not any(o.lower() in r.lower() for o in args.skip.split(","))]
    allocs = args.allocators.split(",")
    single = args.single.split(",") if args.single else []
    results = {}
    for alloc in allocs:
        if alloc in single:
            groups = [[r] for r in rows]
        else:
            groups = [[r for r in rows if r in BASIC]] + [[r] for r in rows if r not in BASIC]
        for n, g in enumerate([g for g in groups if g]):
            for row, st in run_group(alloc, g, args, out, n).items():
                results.setdefault(row, {})[alloc] = st
            with open(os.path.join(out, f"compat{args.tag}.json"), "w") as f:
                json.dump(results, f, indent=1)
    names = {"native": "PyTorch native", "expandable": "PyTorch expandable", "expanse": "expanse"}
    md = ["| API | " + " | ".join(names.get(a, a) for a in allocs) + " |", "|---|" + "---|" * len(allocs)]
    for row in rows:
        md.append(f"| {row} | " + " | ".join(results[row].get(a, "").replace("|", "/") for a in allocs) + " |")
    table = "\n".join(md)
    with open(os.path.join(out, f"compat{args.tag}.md"), "w") as f:
        f.write(table + "\n")
    print(table)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--rows")
    ap.add_argument("--only", default="")
    ap.add_argument("--allocators", default="native,expandable,expanse")
    ap.add_argument("--skip", default="", help="rows to leave out (substrings, comma-separated)")
    ap.add_argument("--single", default="", help="allocators whose rows each run in a process of their own")
    ap.add_argument("--tag", default="", help="suffix of compat.json / compat.md")
    ap.add_argument("--backtraces", action="store_true", help="rerun a crashed row under gdb for native stacks")
    ap.add_argument("--timeout", type=int, default=300)
    args = ap.parse_args()
    if args.child:
        run_rows(args.child, json.loads(args.rows))
    else:
        parent(args)


if __name__ == "__main__":
    main()
