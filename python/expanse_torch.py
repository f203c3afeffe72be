"""Plug expanse into PyTorch (no build step: ctypes over libexpanse.so).

    import expanse_torch
    expanse_torch.install()          # before the first CUDA allocation
    ...
    expanse_torch.memory_stats()     # PyTorch's keys, from expanse
    expanse_torch.empty_cache()
    expanse_torch.enable_peer_access(0, 1)
    expanse_torch.record_history()   # then, later:
    expanse_torch.dump_snapshot("snapshot.pickle")
    # python -m torch.cuda._memory_viz trace_plot snapshot.pickle -o out.html

The library is found at `path`, else $EXPANSE_LIB, else the repository's
target/release/libexpanse.so. The backend is chosen by EXPANSE_BACKEND and
the allocator configured by EXPANSE_ALLOC_CONF (PyTorch's syntax).
"""

import ctypes
import json
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_lib = None
_path = None


def default_path():
    return os.environ.get("EXPANSE_LIB") or os.path.join(_HERE, "..", "target", "release", "libexpanse.so")


def lib(path=None):
    """Load libexpanse.so once (the same handle PyTorch's dlopen shares)."""
    global _lib, _path
    if _lib is None:
        _path = os.path.abspath(path or default_path())
        l = ctypes.CDLL(_path)
        l.expanse_alloc.restype = ctypes.c_void_p
        l.expanse_alloc.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
        l.expanse_free.restype = None
        l.expanse_free.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
        l.expanse_empty_cache.restype = None
        l.expanse_memory_stats_json.restype = ctypes.c_size_t
        l.expanse_memory_stats_json.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
        l.expanse_reset_peak_stats.restype = ctypes.c_int
        l.expanse_reset_peak_stats.argtypes = [ctypes.c_int]
        l.expanse_record_stream.restype = None
        l.expanse_record_stream.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        l.expanse_set_memory_fraction.restype = None
        l.expanse_set_memory_fraction.argtypes = [ctypes.c_double, ctypes.c_int]
        l.expanse_enable_peer_access.restype = ctypes.c_int
        l.expanse_enable_peer_access.argtypes = [ctypes.c_int, ctypes.c_int]
        l.expanse_backend.restype = ctypes.c_char_p
        l.expanse_last_error.restype = ctypes.c_char_p
        l.expanse_clear_last_error.restype = None
        l.expanse_record_history.restype = ctypes.c_int
        l.expanse_record_history.argtypes = [ctypes.c_int, ctypes.c_size_t]
        l.expanse_dump_snapshot.restype = ctypes.c_int
        l.expanse_dump_snapshot.argtypes = [ctypes.c_char_p]
        _lib = l
    return _lib


def install(path=None, extension=True):
    """Make expanse PyTorch's CUDA allocator. Call before any CUDA allocation.

    Also makes the rest of torch.cuda's memory API work (see
    python/expanse_compat.py): with `extension` (and a C++ compiler) every
    hook PyTorch has, CUDA graphs included; else ctypes only. Returns the
    mode: 'extension' or 'ctypes'."""
    import sys

    import torch

    if _HERE not in sys.path:
        sys.path.insert(0, _HERE)
    import expanse_compat

    return expanse_compat.install(torch, lib(path), _path, extension)


def last_error():
    """This thread's most recent expanse error message, or None."""
    e = lib().expanse_last_error()
    return e.decode() if e else None


def _check(ok, what):
    if not ok:
        raise RuntimeError(f"expanse {what}: {last_error()}")


def backend():
    b = lib().expanse_backend()
    _check(b is not None, "backend")
    return b.decode()


def memory_stats(device=0):
    """Statistics with PyTorch's keys ('reserved_bytes.all.peak', ...)."""
    l = lib()
    size = 16384
    while True:
        buf = ctypes.create_string_buffer(size)
        n = l.expanse_memory_stats_json(device, buf, size)
        _check(n != 0, "memory_stats")
        if n < size:
            return json.loads(buf.value.decode())
        size = n + 1


def reset_peak_stats(device=0):
    _check(lib().expanse_reset_peak_stats(device) == 0, "reset_peak_stats")


def empty_cache():
    lib().expanse_empty_cache()


def set_memory_fraction(fraction, device=0):
    lib().expanse_set_memory_fraction(fraction, device)


def enable_peer_access(device, peer):
    """Let `device` read and write `peer`'s memory (driver and every page)."""
    _check(lib().expanse_enable_peer_access(device, peer) == 0, f"enable_peer_access({device}, {peer})")


def record_history(enabled=True, max_entries=0):
    """Record the allocation history (off by default): a ring buffer of at
    most max_entries entries per device (0: no bound). enabled=False stops
    recording and forgets it. Like torch.cuda.memory._record_memory_history."""
    _check(lib().expanse_record_history(1 if enabled else 0, max_entries) == 0, "record_history")


def dump_snapshot(path):
    """Write a snapshot (segments, blocks, history) to path: the pickle that
    torch.cuda._memory_viz and pytorch.org/memory_viz read. Like
    torch.cuda.memory._dump_snapshot."""
    _check(lib().expanse_dump_snapshot(os.fsencode(path)) == 0, f"dump_snapshot({path!r})")


def snapshot():
    """The snapshot as a dict, like torch.cuda.memory._snapshot() (which
    install() routes here)."""
    import sys

    if _HERE not in sys.path:
        sys.path.insert(0, _HERE)
    import expanse_compat

    return expanse_compat.snapshot_dict(lib())
