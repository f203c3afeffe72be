"""Check expanse snapshots with Python's own pickle modules (no torch needed).

Usage: python3 scripts/check_snapshot.py FILE.pickle...

For each file: every opcode (pickletools.genops) is in the subset of the
reference design's "Snapshot" section; pickle.load gives the structure
PyTorch's torch.cuda._memory_viz reads (keys and types of segments,
blocks and trace entries; blocks tile their segment, as segsum asserts);
and the history, undone from the end as PyTorch's segment_plot does,
stays consistent: every segment_map/segment_alloc removes mapped memory
that exists at that point, and every alloc lies in mapped memory.
Prints 'N passed, N failed'.
"""

import bisect
import pickle
import pickletools
import sys

SUBSET = set(
    "PROTO FRAME MARK STOP EMPTY_DICT EMPTY_LIST EMPTY_TUPLE DICT LIST TUPLE TUPLE1 TUPLE2 TUPLE3 SETITEM "
    "SETITEMS APPEND APPENDS BININT BININT1 BININT2 LONG1 BINFLOAT SHORT_BINUNICODE BINUNICODE NONE NEWTRUE "
    "NEWFALSE MEMOIZE BINPUT LONG_BINPUT BINGET LONG_BINGET".split()
)
SEGMENT_KEYS = {
    "device": int, "address": int, "total_size": int, "allocated_size": int, "active_size": int,
    "requested_size": int, "stream": int, "segment_type": str, "segment_pool_id": tuple,
    "is_expandable": bool, "frames": list, "blocks": list,
}
BLOCK_KEYS = {"address": int, "size": int, "requested_size": int, "state": str, "frames": list}
ENTRY_KEYS = {"action": str, "addr": int, "size": int, "stream": int, "time_us": int, "frames": list}
ACTIONS = {
    "alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
    "segment_unmap", "oom", "snapshot", "page_move", "lend",
}
STATES = {"active_allocated", "active_pending_free", "inactive"}


def has_keys(d, keys, what):
    assert isinstance(d, dict), f"{what} is not a dict"
    for k, t in keys.items():
        assert k in d, f"{what} has no '{k}'"
        assert isinstance(d[k], t), f"{what}['{k}'] is {type(d[k]).__name__}, not {t.__name__}"


class Ranges:
    """Disjoint [start, end) ranges of mapped memory of one device."""

    def __init__(self):
        self.starts, self.ends = [], []

    def find(self, addr):
        i = bisect.bisect_right(self.starts, addr) - 1
        return i if i >= 0 and addr < self.ends[i] else None

    def add(self, a, b):
        i = bisect.bisect_left(self.starts, a)
        assert (i == 0 or self.ends[i - 1] <= a) and (i == len(self.starts) or b <= self.starts[i]), \
            f"range {a:#x}+{b - a} overlaps mapped memory"
        # Merge with touching neighbours: one run of mapped memory.
        if i < len(self.starts) and self.starts[i] == b:
            b = self.ends[i]
            del self.starts[i], self.ends[i]
        if i > 0 and self.ends[i - 1] == a:
            self.ends[i - 1] = b
            return
        self.starts.insert(i, a)
        self.ends.insert(i, b)

    def remove(self, a, b):
        i = self.find(a)
        assert i is not None and b <= self.ends[i], f"range {a:#x}+{b - a} is not mapped"
        s, e = self.starts[i], self.ends[i]
        del self.starts[i], self.ends[i]
        if e > b:
            self.add(b, e)
        if s < a:
            self.add(s, a)


def check_history(snap):
    for device, trace in enumerate(snap["device_traces"]):
        mapped = Ranges()
        for seg in snap["segments"]:
            if seg["device"] == device:
                mapped.add(seg["address"], seg["address"] + seg["total_size"])
        for e in reversed(trace):
            a, n = e["addr"], e["size"]
            if e["action"] in ("segment_map", "segment_alloc"):
                mapped.remove(a, a + n)
            elif e["action"] in ("segment_unmap", "segment_free"):
                mapped.add(a, a + n)
            elif e["action"] == "alloc":
                i = mapped.find(a)
                assert i is not None and a + n <= mapped.ends[i], f"alloc {a:#x}+{n} outside mapped memory"


def check(path):
    data = open(path, "rb").read()
    ops = {op.name for op, _, _ in pickletools.genops(data)}
    assert ops <= SUBSET, f"opcodes outside the subset: {sorted(ops - SUBSET)}"
    snap = pickle.loads(data)
    assert set(snap) == {"segments", "device_traces"}, sorted(snap)
    for i, seg in enumerate(snap["segments"]):
        has_keys(seg, SEGMENT_KEYS, f"segment {i}")
        assert seg["segment_type"] in ("small", "large")
        at, requested, allocated = seg["address"], 0, 0
        for j, b in enumerate(seg["blocks"]):
            has_keys(b, BLOCK_KEYS, f"segment {i} block {j}")
            assert b["state"] in STATES, b["state"]
            assert b["address"] == at, f"segment {i} block {j} does not follow the one before"
            at += b["size"]
            if b["state"] == "active_allocated":
                allocated += b["size"]
                requested += b["requested_size"]
                assert b["requested_size"] <= b["size"]
        assert at == seg["address"] + seg["total_size"], f"segment {i}: blocks do not add up to total_size"
        assert (allocated, requested) == (seg["allocated_size"], seg["requested_size"]), f"segment {i} sums"
    assert isinstance(snap["device_traces"], list) and snap["device_traces"], "no device_traces"
    entries = 0
    for trace in snap["device_traces"]:
        last = 0
        for e in trace:
            has_keys(e, ENTRY_KEYS, "trace entry")
            assert e["action"] in ACTIONS, e["action"]
            assert e["time_us"] >= last, "time_us goes backwards"
            last = e["time_us"]
            if e["action"] == "oom":
                assert isinstance(e.get("device_free"), int), "oom entry without device_free"
        entries += len(trace)
    check_history(snap)
    return f"{len(snap['segments'])} segments, {entries} entries, opcodes {sorted(ops)}"


def main(paths):
    passed = failed = 0
    for p in paths:
        try:
            print(f"{p}: ok ({check(p)})")
            passed += 1
        except Exception as e:  # report every file
            print(f"{p}: FAILED: {e!r}")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
