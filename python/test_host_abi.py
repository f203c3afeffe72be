"""The C ABI through Python's ctypes on the host backend (no GPU, no torch).

Usage: python3 python/test_host_abi.py [path/to/libexpanse.so]
"""

import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402

checks.host_backend()
import expanse_torch as ex  # noqa: E402

if len(sys.argv) > 1:
    ex.lib(sys.argv[1])
l = ex.lib()
test = checks.test


@test
def backend_is_host():
    assert ex.backend() == "host", ex.backend()


@test
def alloc_write_read_free():
    p = l.expanse_alloc(3 << 20, 0, None)
    assert p, ex.last_error()
    # Host-backend memory is real: write through the pointer, read it back.
    ctypes.memset(p, 0x5A, 3 << 20)
    assert ctypes.string_at(p + (3 << 20) - 4, 4) == b"\x5a" * 4
    stats = ex.memory_stats()
    assert stats["allocated_bytes.all.current"] == 3 << 20, stats["allocated_bytes.all.current"]
    assert stats["reserved_bytes.all.current"] >= 3 << 20
    assert stats["requested_bytes.all.current"] == 3 << 20
    l.expanse_free(p, 3 << 20, 0, None)
    assert ex.memory_stats()["allocated_bytes.all.current"] == 0


@test
def free_with_a_bad_device_frees_and_says_so():
    # Device -1 and device 5 (of 1) alike: the block is freed on its owner
    # (allocated bytes back to where they were), and the error names the
    # bad index.
    before = ex.memory_stats()["allocated_bytes.all.current"]
    for bad in (-1, 5):
        p = l.expanse_alloc(1 << 20, 0, None)
        assert p, ex.last_error()
        l.expanse_clear_last_error()
        l.expanse_free(p, 1 << 20, bad, None)
        assert f"bad device index {bad}" in ex.last_error(), ex.last_error()
        assert ex.memory_stats()["allocated_bytes.all.current"] == before, bad
        l.expanse_free(p, 1 << 20, 0, None)
        assert "already freed" in ex.last_error(), ex.last_error()


@test
def stats_have_pytorch_keys():
    s = ex.memory_stats()
    for k in ["reserved_bytes.all.peak", "active_bytes.small_pool.current", "num_alloc_retries", "num_ooms", "segment.large_pool.current"]:
        assert k in s, k


@test
def empty_cache_returns_memory():
    ps = [l.expanse_alloc(n, 0, None) for n in (100, 5000, 2 << 20, 30 << 20)]
    assert all(ps), ex.last_error()
    for p in ps:
        l.expanse_free(p, 0, 0, None)
    assert ex.memory_stats()["reserved_bytes.all.current"] > 0
    ex.empty_cache()
    assert ex.memory_stats()["reserved_bytes.all.current"] == 0


@test
def bad_free_sets_last_error():
    l.expanse_clear_last_error()
    assert ex.last_error() is None
    l.expanse_free(0xDEADBEEF000, 0, 0, None)
    e = ex.last_error()
    assert e and "unknown pointer" in e, e
    p = l.expanse_alloc(1000, 0, None)
    l.expanse_free(p, 0, 0, None)
    l.expanse_free(p, 0, 0, None)
    assert "already freed" in ex.last_error()


@test
def out_of_memory_returns_null_with_message():
    l.expanse_clear_last_error()
    assert not l.expanse_alloc(8 << 30, 0, None)
    assert "Tried to allocate" in ex.last_error(), ex.last_error()
    assert not l.expanse_alloc(2**63, 0, None)
    assert "1 EiB" in ex.last_error()
    assert not l.expanse_alloc(1 << 20, 7, None)
    assert "device index 7" in ex.last_error()
    p = l.expanse_alloc(1 << 20, 0, None)
    assert p, "usable after errors"
    l.expanse_free(p, 0, 0, None)


@test
def small_buffer_reports_needed_length():
    buf = ctypes.create_string_buffer(8)
    n = l.expanse_memory_stats_json(0, buf, 8)
    assert n > 8 and buf.value == b"", (n, buf.value)


@test
def peak_reset_and_fraction():
    p = l.expanse_alloc(10 << 20, 0, None)
    l.expanse_free(p, 0, 0, None)
    ex.reset_peak_stats()
    assert ex.memory_stats()["allocated_bytes.all.peak"] == 0
    ex.set_memory_fraction(0.25)
    assert not l.expanse_alloc(512 << 20, 0, None)
    ex.set_memory_fraction(1.0)
    ex.empty_cache()


# --- issue 11: private pools (CUDA graphs) and the stats routing helpers ---
import expanse_compat  # noqa: E402

expanse_compat.declare_pools(l)


@test
def private_pool_isolation_and_release():
    ex.empty_cache()
    base = ex.memory_stats()["reserved_bytes.all.current"]
    assert l.expanse_begin_allocate_to_pool(0, 7, 0) == 0, ex.last_error()
    g = l.expanse_alloc_in_pool(4 << 20, 0, None, 7, 0)
    assert g, ex.last_error()
    assert ex.memory_stats()["reserved_bytes.all.current"] == base + (20 << 20), "one private 20 MiB segment"
    l.expanse_free(g, 0, 0, None)
    assert l.expanse_end_allocate_to_pool(0, 7, 0) == 0
    p = l.expanse_alloc(4 << 20, 0, None)
    assert p and not (g <= p < g + (20 << 20)), "a live pool's block was handed out"
    l.expanse_free(p, 0, 0, None)
    ex.empty_cache()
    assert ex.memory_stats()["reserved_bytes.all.current"] == base + (20 << 20), "empty_cache kept the pool"
    assert l.expanse_release_pool(0, 7, 0) == 0
    ex.empty_cache()
    assert ex.memory_stats()["reserved_bytes.all.current"] == base, "released pool returned"
    assert l.expanse_release_pool(0, 7, 0) == -1 and "unknown private pool" in ex.last_error()
    assert not l.expanse_alloc_in_pool(1 << 20, 0, None, 7, 0)


@test
def stream_routed_pool():
    assert l.expanse_begin_allocate_stream_to_pool(0, 8, 1, None) == 0, ex.last_error()
    g = l.expanse_alloc(1 << 20, 0, None)
    assert l.expanse_end_allocate_to_pool(0, 8, 1) == 0
    p = l.expanse_alloc(1 << 20, 0, None)
    assert g and p and p != g
    l.expanse_free(g, 0, 0, None)
    l.expanse_free(p, 0, 0, None)
    assert l.expanse_release_pool(0, 8, 1) == 0
    ex.empty_cache()


@test
def user_pool_use_count_snapshot_id_and_death():
    # A torch.cuda.MemPool's life through the C ABI: its use (begin and
    # end), a use_mem_pool (begin, allocate, end, release), its death.
    ex.empty_cache()
    base = ex.memory_stats()["reserved_bytes.all.current"]
    assert l.expanse_pool_use_count(0, 0, 9) == -1 and "unknown private pool" in ex.last_error()
    assert l.expanse_begin_allocate_to_pool(0, 0, 9) == 0 and l.expanse_end_allocate_to_pool(0, 0, 9) == 0
    assert l.expanse_pool_use_count(0, 0, 9) == 1, ex.last_error()
    assert l.expanse_begin_allocate_to_pool(0, 0, 9) == 0
    assert l.expanse_pool_use_count(0, 0, 9) == 2
    g = l.expanse_alloc_in_pool(4 << 20, 0, None, 0, 9)
    assert g, ex.last_error()
    assert l.expanse_end_allocate_to_pool(0, 0, 9) == 0 and l.expanse_release_pool(0, 0, 9) == 0
    assert l.expanse_pool_use_count(0, 0, 9) == 1
    segs = ex.snapshot()["segments"]
    mine = [s["segment_pool_id"] for s in segs if s["address"] <= g < s["address"] + s["total_size"]]
    assert mine == [(0, 9)], mine
    l.expanse_free(g, 0, 0, None)
    ex.empty_cache()
    assert ex.memory_stats()["reserved_bytes.all.current"] == base + (20 << 20), "empty_cache kept the live pool"
    assert l.expanse_release_pool_and_empty_cache(0, 0, 9) == 0, ex.last_error()
    assert ex.memory_stats()["reserved_bytes.all.current"] == base, "the dead pool's free segment went back"
    assert l.expanse_pool_use_count(0, 0, 9) == -1 and "unknown private pool" in ex.last_error()
    assert l.expanse_release_pool_and_empty_cache(0, 0, 9) == -1 and "unknown private pool" in ex.last_error()
    assert l.expanse_pool_use_count(-1, 0, 9) == -1 and "bad device index" in ex.last_error()


@test
def nested_stats_match_pytorch_shape():
    flat = ex.memory_stats()
    nested = expanse_compat.nest(flat)
    assert nested["allocated_bytes"]["all"]["peak"] == flat["allocated_bytes.all.peak"]
    assert nested["num_ooms"] == flat["num_ooms"]
    # memory_stats() in torch/cuda/memory.py flattens with "." joins.
    def flatten(prefix, obj, out):
        if isinstance(obj, dict):
            for k, v in obj.items():
                flatten(f"{prefix}.{k}" if prefix else k, v, out)
        else:
            out[prefix] = obj
        return out
    assert flatten("", nested, {}) == flat


@test
def history_and_snapshot():
    import pickle
    import tempfile

    ex.record_history(True, 1000)
    p = l.expanse_alloc(5 << 20, 0, None)
    assert p, ex.last_error()
    l.expanse_free(p, 0, 0, None)
    q = l.expanse_alloc(700, 0, None)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.pickle")
        ex.dump_snapshot(path)
        with open(path, "rb") as f:
            s = pickle.load(f)
    assert set(s) == {"segments", "device_traces"}, sorted(s)
    trace = s["device_traces"][0]
    actions = [(e["action"], e["addr"], e["size"]) for e in trace]
    assert ("alloc", p, 5 << 20) in actions, actions
    assert ("free_requested", p, 5 << 20) in actions
    assert ("free_completed", p, 5 << 20) in actions
    assert actions[-2] == ("alloc", q, 700) and actions[-1][0] == "snapshot", actions[-3:]
    blocks = [b for seg in s["segments"] for b in seg["blocks"] if b["state"] == "active_allocated"]
    assert [(b["address"], b["requested_size"]) for b in blocks] == [(q, 700)], blocks
    ex.record_history(False)
    assert ex.snapshot()["device_traces"][0] == [], "history forgotten when disabled"
    l.expanse_free(q, 0, 0, None)


@test
def dump_snapshot_errors_are_reported():
    try:
        ex.dump_snapshot("/nonexistent/dir/s.pickle")
    except RuntimeError as e:
        assert "/nonexistent/dir/s.pickle" in str(e), e
    else:
        raise AssertionError("dump to a missing directory succeeded")
    assert l.expanse_dump_snapshot(None) == -1 and "null" in ex.last_error()


KEEP = []  # callbacks expanse may still call: alive to the end


@test
def oom_observer_through_the_c_abi():
    seen = []
    proto = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p)

    def observer(device, alloc, allowed, free, user):
        # Told after the allocator's lock is released: calling back works.
        seen.append((device, alloc, allowed, user, ex.memory_stats(device)["num_ooms"]))

    cb = proto(observer)
    KEEP.append(cb)
    l.expanse_attach_oom_observer.restype = ctypes.c_int
    l.expanse_attach_oom_observer.argtypes = [proto, ctypes.c_void_p]
    assert l.expanse_attach_oom_observer(cb, 1234) == 0, ex.last_error()
    before = ex.memory_stats()["num_ooms"]
    assert not l.expanse_alloc(4 << 30, 0, None), "4 GiB fit in a 1 GiB host device"
    assert seen == [(0, 4 << 30, 1 << 30, 1234, before + 1)], seen
    p = l.expanse_alloc(1 << 20, 0, None)
    assert p, ex.last_error()
    l.expanse_free(p, 0, 0, None)
    assert len(seen) == 1, "an allocation that fit told the observer"
    null = ctypes.cast(None, proto)
    assert l.expanse_attach_oom_observer(null, None) == -1 and "null" in ex.last_error(), ex.last_error()


checks.finish()
