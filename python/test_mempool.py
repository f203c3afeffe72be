"""torch.cuda.MemPool and torch.cuda.use_mem_pool on expanse, host backend.

    python3 python/test_mempool.py [path/to/libexpanse.so]

Needs PyTorch (CUDA build) and a C++ compiler; prints SKIPPED and exits 0
without them (CI has neither). install() builds the extension and routes
PyTorch's API as in a real process; allocations go through PyTorch's own
CUDAPluggableAllocator::malloc (the extension's probe_malloc), so
use_mem_pool's thread filter, evaluated by the extension at each
allocation, decides the pool. There is no CUDA device on the host:
torch.cuda.current_device is replaced by one that answers 0 (PyTorch only
passes the device number on), torch.cuda.is_current_stream_capturing by
one that answers False (PyTorch 2.15's use_mem_pool asks it, and without a
driver the question raises), and torch._C's empty_cache is called
directly (torch.cuda.empty_cache() does nothing before CUDA starts).
"""

import gc
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402

checks.host_backend()
torch = checks.torch_with_extension_or_skip()

import expanse_compat  # noqa: E402
import expanse_torch as ex  # noqa: E402

mode = ex.install(sys.argv[1] if len(sys.argv) > 1 else None)
assert mode == "extension", f"install() fell back to {mode}: {expanse_compat.extension_error()}"
ext = expanse_compat.build_extension()  # the loaded module: its probe_malloc
torch.cuda.current_device = lambda: 0
torch.cuda.is_current_stream_capturing = lambda: False
MIB = 1 << 20
test = checks.test


def malloc(size):
    p = ext.probe_malloc(size, 0)
    assert p, "probe_malloc returned null"
    return p


def reserved():
    return ex.memory_stats()["reserved_bytes.all.current"]


def empty_cache():
    torch._C._cuda_emptyCache()


def holder(segments, ptr):
    """The segment of `segments` that holds address `ptr`, or None."""
    for s in segments:
        if s["address"] <= ptr < s["address"] + s["total_size"]:
            return s
    return None


@test
def ids_are_pytorchs_user_pool_ids_and_the_object_holds_one_use():
    a = torch.cuda.MemPool()
    handle = torch.cuda.graph_pool_handle()
    b = torch.cuda.memory.MemPool()
    # One counter for user pools and graph_pool_handle(), as in PyTorch.
    assert a.id[0] == 0 and b.id[0] == 0, (a.id, b.id)
    assert a.id[1] < handle[1] < b.id[1], (a.id, handle, b.id)
    assert a.use_count() == 1 and b.use_count() == 1
    assert a.allocator is None


@test
def allocations_inside_use_mem_pool_come_from_the_pool():
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        assert pool.use_count() == 2, pool.use_count()
        inside = malloc(3 * MIB)
    assert pool.use_count() == 1, pool.use_count()
    outside = malloc(3 * MIB)
    mine = pool.snapshot()
    seg = holder(mine, inside)
    assert seg is not None, f"{inside:#x} not in the pool's snapshot {mine}"
    assert tuple(seg["segment_pool_id"]) == pool.id and seg["total_size"] == 20 * MIB, seg
    assert holder(mine, outside) is None, "an allocation outside use_mem_pool is in the pool"
    everything = torch.cuda.memory_snapshot()
    assert holder(everything, inside) is not None
    assert tuple(holder(everything, outside)["segment_pool_id"]) == (0, 0)
    ext.probe_free(inside)
    ext.probe_free(outside)


@test
def another_threads_allocations_stay_out_of_the_pool():
    pool = torch.cuda.MemPool()
    got = []
    with torch.cuda.use_mem_pool(pool):
        t = threading.Thread(target=lambda: got.append(malloc(3 * MIB)))
        t.start()
        t.join()
        mine = malloc(3 * MIB)
    assert holder(pool.snapshot(), got[0]) is None, "another thread's allocation went to the pool"
    assert holder(pool.snapshot(), mine) is not None
    ext.probe_free(got[0])
    ext.probe_free(mine)


@test
def freed_pool_memory_is_reused_by_the_pool_only():
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        first = malloc(4 * MIB)
        ext.probe_free(first)
        before = reserved()
        again = malloc(4 * MIB)
        assert again == first, f"the pool's freed block was not reused: {again:#x} != {first:#x}"
        assert reserved() == before, "reusing the pool's block reserved new memory"
        ext.probe_free(again)
    seg = holder(pool.snapshot(), first)
    outside = malloc(4 * MIB)
    assert not (seg["address"] <= outside < seg["address"] + seg["total_size"]), "a live pool's block was handed out"
    ext.probe_free(outside)


@test
def empty_cache_keeps_a_live_pool_and_its_death_returns_the_memory():
    empty_cache()
    base = reserved()
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        x = malloc(4 * MIB)
    ext.probe_free(x)
    empty_cache()
    assert reserved() == base + 20 * MIB, f"empty_cache released a live pool's memory: {reserved() - base}"
    assert holder(pool.snapshot(), x) is not None
    pool_id = pool.id
    del pool
    gc.collect()
    assert reserved() == base, f"the dead pool kept {reserved() - base} bytes"
    assert torch.cuda.memory_snapshot(pool_id) == []
    assert holder(torch.cuda.memory_snapshot(), x) is None


@test
def a_dead_pools_live_blocks_stay_until_freed():
    empty_cache()
    base = reserved()
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        live = malloc(4 * MIB)
    del pool
    gc.collect()
    assert reserved() == base + 20 * MIB, "a segment with a live block was returned"
    ext.probe_free(live)
    empty_cache()
    assert reserved() == base, f"{reserved() - base} bytes left after the block was freed"


@test
def two_pools_do_not_share_blocks():
    p1 = torch.cuda.MemPool()
    p2 = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(p1):
        a = malloc(4 * MIB)
    ext.probe_free(a)  # p1's cached block
    with torch.cuda.use_mem_pool(p2):
        b = malloc(4 * MIB)
    s1 = {s["address"] for s in p1.snapshot()}
    s2 = {s["address"] for s in p2.snapshot()}
    assert s1 and s2 and not (s1 & s2), (s1, s2)
    assert holder(p1.snapshot(), b) is None, "p2 was handed p1's block"
    ext.probe_free(b)


@test
def nested_pools_the_innermost_gets_the_allocation():
    outer = torch.cuda.MemPool()
    inner = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(outer):
        with torch.cuda.use_mem_pool(inner):
            x = malloc(MIB)
        y = malloc(MIB)
    assert holder(inner.snapshot(), x) is not None, "the inner pool did not get the allocation"
    assert holder(outer.snapshot(), y) is not None, "the outer pool did not get it back"
    ext.probe_free(x)
    ext.probe_free(y)


@test
def nesting_the_same_pool_is_refused_and_routing_goes_on():
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        try:
            with torch.cuda.use_mem_pool(pool):
                pass
        except RuntimeError as e:
            assert "already being allocated to" in str(e), str(e)
        else:
            raise AssertionError("a nested use_mem_pool of the same pool was accepted")
        x = malloc(MIB)
    assert holder(pool.snapshot(), x) is not None, "the refused nesting ended the outer routing"
    assert pool.use_count() == 1
    ext.probe_free(x)


@test
def a_graph_capture_into_the_pool_holds_a_use():
    # torch.cuda.graph(pool=mempool.id) begins, ends, and at reset releases.
    pool = torch.cuda.MemPool()
    torch._C._cuda_beginAllocateCurrentThreadToPool(0, pool.id)
    torch._C._cuda_endAllocateToPool(0, pool.id)
    assert pool.use_count() == 2
    torch._C._cuda_releasePool(0, pool.id)
    assert pool.use_count() == 1


@test
def graph_pools_keep_their_ids_and_isolation():
    graph = (9001, 0)  # CUDAGraph's own pools: (uid, 0)
    torch._C._cuda_beginAllocateCurrentThreadToPool(0, graph)
    try:
        g = malloc(2 * MIB)
    finally:
        torch._C._cuda_endAllocateToPool(0, graph)
    seg = holder(torch.cuda.memory_snapshot(graph), g)
    assert seg is not None and tuple(seg["segment_pool_id"]) == graph, seg
    ext.probe_free(g)
    again = malloc(2 * MIB)
    assert holder(torch.cuda.memory_snapshot(graph), again) is None, "a live graph pool's block was handed out"
    ext.probe_free(again)
    torch._C._cuda_releasePool(0, graph)
    assert torch.cuda.memory_snapshot(graph) == []


@test
def bad_input_is_a_clear_error():
    for bad, words in [(object(), "needs a torch.cuda.MemPool"), ((0, 5), "graph_pool_handle")]:
        try:
            with torch.cuda.use_mem_pool(bad):
                pass
        except TypeError as e:
            assert words in str(e), str(e)
        else:
            raise AssertionError(f"use_mem_pool({bad!r}) was accepted")
    for kwargs, name in [({"allocator": object()}, "allocator="), ({"use_on_oom": True}, "use_on_oom"),
                         ({"no_split": True}, "no_split")]:
        try:
            torch.cuda.MemPool(**kwargs)
        except NotImplementedError as e:
            assert name in str(e) and "expanse" in str(e), str(e)
        else:
            raise AssertionError(f"MemPool({kwargs}) was accepted")


@test
def without_the_extension_mempool_says_why():
    saved = expanse_compat._state["mode"]
    expanse_compat._state["mode"] = "ctypes"
    try:
        torch.cuda.MemPool()
    except RuntimeError as e:
        assert "C++ extension" in str(e), str(e)
    else:
        raise AssertionError("MemPool() in ctypes mode was accepted")
    finally:
        expanse_compat._state["mode"] = saved


@test
def nothing_is_left_allocated():
    gc.collect()
    assert ex.memory_stats()["allocated_bytes.all.current"] == 0, ex.memory_stats()["allocated_bytes.all.current"]
    empty_cache()
    assert reserved() == 0, reserved()


checks.finish()
