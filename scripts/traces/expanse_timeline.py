"""Replay a trace through libexpanse.so's C ABI (host backend unless
EXPANSE_BACKEND says otherwise; config from EXPANSE_ALLOC_CONF) and print,
for every event after which reserved bytes changed, the event's index
(0-based over alloc and free lines) and the reserved bytes: the same
timeline scripts/gpu/reserved_timeline.py prints for PyTorch's allocator,
to find the first event at which the two replays part.

    EXPANSE_ALLOC_CONF=expandable_segments:False \
        python3 scripts/traces/expanse_timeline.py target/release/libexpanse.so TRACE > timeline.txt
"""
import ctypes, gzip, json, os, re, sys
lib = ctypes.CDLL(sys.argv[1])
lib.expanse_alloc.restype = ctypes.c_void_p
lib.expanse_alloc.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
lib.expanse_free.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
lib.expanse_memory_stats_json.restype = ctypes.c_size_t
lib.expanse_memory_stats_json.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
buf = ctypes.create_string_buffer(1 << 16)
pat = re.compile(rb'"reserved_bytes.all.current":(\d+)')
def reserved():
    n = lib.expanse_memory_stats_json(0, buf, len(buf))
    return int(pat.search(buf.raw[:n]).group(1))
live = {}
res = 0
n = 0
with gzip.open(sys.argv[2], "rt") as f:
    for line in f:
        if line[0] == "#": continue
        p = line.rstrip().split(",")
        if p[0] == "a":
            live[int(p[1])] = (lib.expanse_alloc(int(p[2]), 0, int(p[3]) or None), int(p[2]), int(p[3]))
        elif p[0] == "f":
            ptr, size, s = live.pop(int(p[1]))
            lib.expanse_free(ptr, size, 0, s or None)
        else:
            continue
        r = reserved()
        if r != res:
            res = r
            print(n, r)
        n += 1
