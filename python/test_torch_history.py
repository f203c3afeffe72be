"""torch.cuda.memory's history API routed to expanse (python/expanse_compat.py),
on the host backend: no GPU, no C++ compiler; needs PyTorch.

    python3 python/test_torch_history.py [path/to/libexpanse.so]

Prints SKIPPED and exits 0 without PyTorch (CI has none). Allocations go
through expanse's C ABI directly (PyTorch's own allocator is not swapped:
that needs a GPU); what is checked is that PyTorch's own Python functions,
_record_memory_history, _snapshot, _dump_snapshot and memory_snapshot,
record and return expanse's history and state, with PyTorch's arguments;
and that torch._C._cuda_attach_out_of_memory_observer's observer is called
on an out-of-memory failure and can take a snapshot from inside.
"""

import os
import pickle
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402

checks.host_backend()
torch = checks.torch_or_skip()

import expanse_compat  # noqa: E402
import expanse_torch as ex  # noqa: E402

if len(sys.argv) > 1:
    ex.lib(sys.argv[1])
l = ex.lib()
expanse_compat._route_history(torch, l)
expanse_compat._route_oom_observers(torch, l)
memory = torch.cuda.memory
MIB = 1 << 20
test = checks.test


def actions(s):
    return [(e["action"], e["addr"], e["size"]) for e in s["device_traces"][0]]


@test
def record_then_snapshot_through_pytorch():
    memory._record_memory_history(max_entries=1000)
    p = l.expanse_alloc(5 * MIB, 0, None)
    assert p, ex.last_error()
    l.expanse_free(p, 0, 0, None)
    q = l.expanse_alloc(700, 0, None)
    s = memory._snapshot()
    got = actions(s)
    for a in [("alloc", p, 5 * MIB), ("free_requested", p, 5 * MIB), ("free_completed", p, 5 * MIB)]:
        assert a in got, (a, got)
    assert got[-2] == ("alloc", q, 700) and got[-1][0] == "snapshot", got[-3:]
    live = [b for seg in s["segments"] for b in seg["blocks"] if b["state"] == "active_allocated"]
    assert [(b["address"], b["requested_size"]) for b in live] == [(q, 700)], live
    # memory_snapshot() is the segments alone, as in PyTorch.
    segs = memory.memory_snapshot()
    assert [seg["address"] for seg in segs] == [seg["address"] for seg in s["segments"]], segs
    l.expanse_free(q, 0, 0, None)
    memory._record_memory_history(enabled=None)


@test
def dump_snapshot_writes_the_same_dict():
    memory._record_memory_history(max_entries=100)
    p = l.expanse_alloc(3 * MIB, 0, None)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.pickle")
        memory._dump_snapshot(path)
        with open(path, "rb") as f:
            s = pickle.load(f)
    assert ("alloc", p, 3 * MIB) in actions(s), actions(s)
    l.expanse_free(p, 0, 0, None)
    memory._record_memory_history(enabled=None)


@test
def disabling_forgets_and_state_keeps_no_history():
    memory._record_memory_history(max_entries=100)
    l.expanse_free(l.expanse_alloc(MIB, 0, None), 0, 0, None)
    memory._record_memory_history(enabled=None)
    assert actions(memory._snapshot()) == [], actions(memory._snapshot())
    memory._record_memory_history(enabled="state")
    l.expanse_free(l.expanse_alloc(MIB, 0, None), 0, 0, None)
    assert actions(memory._snapshot()) == [], "'state' recorded events"


@test
def enabling_again_keeps_history_unless_cleared():
    memory._record_memory_history(max_entries=100)
    p = l.expanse_alloc(2 * MIB, 0, None)
    memory._record_memory_history(max_entries=200)
    assert ("alloc", p, 2 * MIB) in actions(memory._snapshot())
    memory._record_memory_history(max_entries=200, clear_history=True)
    assert ("alloc", p, 2 * MIB) not in actions(memory._snapshot())
    l.expanse_free(p, 0, 0, None)
    memory._record_memory_history(enabled=None)


@test
def max_entries_bounds_the_history():
    memory._record_memory_history(max_entries=4)
    for _ in range(10):
        l.expanse_free(l.expanse_alloc(MIB, 0, None), 0, 0, None)
    # Four entries kept; taking the snapshot records one more in their place.
    assert len(actions(memory._snapshot())) == 4, actions(memory._snapshot())
    memory._record_memory_history(enabled=None)


@test
def skip_actions_and_no_traces():
    memory._record_memory_history(max_entries=100, skip_actions=["free_requested"])
    p = l.expanse_alloc(MIB, 0, None)
    l.expanse_free(p, 0, 0, None)
    got = actions(memory._snapshot())
    assert ("free_completed", p, MIB) in got and not any(a[0] == "free_requested" for a in got), got
    s = torch._C._cuda_memorySnapshot((0, 0, False))
    assert s["device_traces"] == [[]], s["device_traces"]
    memory._record_memory_history(enabled=None)


@test
def legacy_form_records():
    memory._record_memory_history(True, trace_alloc_max_entries=100)
    p = l.expanse_alloc(MIB, 0, None)
    assert ("alloc", p, MIB) in actions(memory._snapshot())
    l.expanse_free(p, 0, 0, None)
    memory._record_memory_history(False)
    assert actions(memory._snapshot()) == []


@test
def bad_arguments_say_what_is_wrong():
    for call, words in [
        (lambda: memory._record_memory_history(enabled="everything"), "'everything'"),
        (lambda: memory._record_memory_history(max_entries=0), "max_entries"),
        (lambda: torch._C._cuda_memorySnapshot(("x", 2, True)), "('x', 2, True)"),
    ]:
        try:
            call()
        except (ValueError, RuntimeError) as e:
            assert "expanse:" in str(e) and words in str(e), str(e)
        else:
            raise AssertionError(f"no error ({words})")
    # A pool that does not exist has no segments (PyTorch's answer too).
    assert torch._C._cuda_memorySnapshot((1, 2, True))["segments"] == []


@test
def oom_observer_is_called_and_may_take_a_snapshot():
    seen = []

    def observer(device, alloc, allowed, device_free):
        # Called after expanse released its lock: a snapshot works here.
        seen.append((device, alloc, allowed, len(memory._snapshot()["segments"])))

    torch._C._cuda_attach_out_of_memory_observer(observer)
    kept = l.expanse_alloc(8 * MIB, 0, None)
    assert not l.expanse_alloc(4 << 30, 0, None), "4 GiB fit in a 1 GiB host device"
    assert seen and seen[-1][:3] == (0, 4 << 30, 1 << 30) and seen[-1][3] >= 1, seen
    l.expanse_free(kept, 0, 0, None)
    try:
        torch._C._cuda_attach_out_of_memory_observer(42)
    except TypeError as e:
        assert "expanse:" in str(e) and "callable" in str(e), str(e)
    else:
        raise AssertionError("a non-callable observer was accepted")


checks.finish()
