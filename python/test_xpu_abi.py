"""The XPU entry points of libexpanse.so through ctypes, on the Level Zero
backend over expanse's fake driver: usage
    python3 python/test_xpu_abi.py target/release/libexpanse.so target/release/libexpanse_ze_fake.so
Run it through Intel's loader by exporting ZE_ENABLE_ALT_DRIVERS=<fake> and
passing libze_loader.so.1 as the second argument.
"""

import ctypes
import json
import os
import sys

lib_path, ze_library = sys.argv[1], sys.argv[2]
os.environ["EXPANSE_BACKEND"] = "ze"
os.environ["EXPANSE_ZE_LIBRARY"] = ze_library
os.environ["EXPANSE_ALLOC_CONF"] = "expandable_segments:True"
os.environ.setdefault("EXPANSE_ZE_FAKE_MEMORY", str(1 << 30))

l = ctypes.CDLL(os.path.abspath(lib_path))
l.expanse_xpu_alloc.restype = ctypes.c_void_p
l.expanse_xpu_alloc.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
l.expanse_xpu_free.restype = None
l.expanse_xpu_free.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
l.expanse_backend.restype = ctypes.c_char_p
l.expanse_last_error.restype = ctypes.c_char_p
l.expanse_memory_stats_json.restype = ctypes.c_size_t
l.expanse_memory_stats_json.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]


def stats():
    buf = ctypes.create_string_buffer(1 << 16)
    n = l.expanse_memory_stats_json(0, buf, len(buf))
    assert 0 < n < len(buf), l.expanse_last_error()
    return json.loads(buf.value)


queue = ctypes.c_void_p(0x5EC0)  # an opaque sycl::queue* stand-in
p = l.expanse_xpu_alloc(5 << 20, 0, queue)
assert p, l.expanse_last_error()
assert l.expanse_backend() == b"ze", l.expanse_backend()
assert p % 512 == 0, hex(p)
s = stats()
assert s["allocated_bytes.all.current"] >= 5 << 20, s["allocated_bytes.all.current"]
assert s["reserved_bytes.all.current"] % (2 << 20) == 0
q = l.expanse_xpu_alloc(1000, 0, queue)
assert q and q != p
l.expanse_xpu_free(q, 1000, 0, queue)
l.expanse_xpu_free(p, 5 << 20, 0, queue)
assert l.expanse_last_error() is None, l.expanse_last_error()
assert stats()["allocated_bytes.all.current"] == 0
# A double free is an error value, not a crash.
l.expanse_xpu_free(p, 5 << 20, 0, queue)
assert l.expanse_last_error() is not None
# Out of memory is a null pointer with a message.
assert not l.expanse_xpu_alloc(1 << 40, 0, queue)
assert b"memory" in l.expanse_last_error().lower(), l.expanse_last_error()
print("xpu ABI over", ze_library, ": ok")
