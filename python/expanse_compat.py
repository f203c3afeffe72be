"""torch.cuda's memory API on expanse (issue 11): what install() adds.

PyTorch's pluggable allocator forwards only alloc and free from Python.
install() makes the rest of torch.cuda's memory API work on expanse:

- With a C++ compiler (the default): python/expanse_ext.cpp is built once
  by torch.utils.cpp_extension (cached under $EXPANSE_EXT_DIR, else
  ~/.cache/expanse/ext) and sets PyTorch's C++ hooks: empty_cache,
  set_per_process_memory_fraction, Tensor.record_stream (also from C++,
  e.g. NCCL), and CUDA graph private pools (torch.cuda.graph,
  torch.compile(mode="reduce-overhead")).
- Without one (or EXPANSE_EXTENSION=0): ctypes only. empty_cache, the
  memory fraction and Python's Tensor.record_stream are routed to expanse
  here; CUDA graph capture raises a clear error (capturing into shared
  memory would let replays overwrite other tensors).
- Either way, statistics are routed in Python: torch._C._cuda_memoryStats,
  _cuda_resetPeakMemoryStats and _cuda_resetAccumulatedMemoryStats read
  expanse's own counters (PyTorch's keys), so memory_allocated(),
  max_memory_allocated(), memory_reserved(), memory_stats(),
  reset_peak_memory_stats() work. PyTorch's C++ callers of getDeviceStats
  still get PyTorch's "does not yet support" error.
- The memory history is routed in Python too:
  torch.cuda.memory._record_memory_history (and its legacy form),
  _snapshot, _dump_snapshot and memory_snapshot record and read expanse's
  own history and state (PyTorch's snapshot format, which its memory
  viewer opens). expanse records no stack traces, so `context` and
  `stacks` change nothing and every entry's frames are empty; "state"
  keeps no event history (PyTorch's "state" keeps only the stacks of live
  blocks); `skip_actions` is applied when the snapshot is taken. A
  snapshot of one memory pool (memory_snapshot(pool_id)) is the segments
  whose segment_pool_id is that pool's (none for an unknown pool).
- torch._C._cuda_attach_out_of_memory_observer adds an observer to
  expanse, called as PyTorch calls it, after the allocator's lock is
  released (so it may take a snapshot).
- torch.cuda.MemPool (and torch.cuda.memory.MemPool) is replaced by one
  on expanse's private pools (PyTorch's _MemPool cannot be built on a
  pluggable allocator: its constructor calls createOrIncrefPool, which
  CUDAPluggableAllocator does not forward). Its id is (0, n) from
  PyTorch's own user-pool counter (torch.cuda.graph_pool_handle()), so it
  never meets a CUDA graph's (n, 0) pool or a handle made elsewhere; the
  object holds one use of the pool, given back when it is garbage
  collected, and then, at the last use, the pool's wholly free segments
  go back to the device (PyTorch's releasePool, then emptyCache of the
  pool); segments with live blocks join the shared cache when freed.
  torch.cuda.use_mem_pool works unchanged through the extension's pool
  hooks (the innermost of nested pools gets the allocation, as in
  PyTorch); it is wrapped only to refuse a non-MemPool argument and a
  nested use of the same pool (PyTorch refuses that too) with clear
  errors. use_count() and snapshot() work. MemPool(allocator=...),
  use_on_oom=True and no_split=True raise NotImplementedError naming the
  argument; without the C++ extension MemPool() raises a RuntimeError
  that says why (the pool hooks are C++ only).
- Sharing a CUDA tensor with another process (torch.multiprocessing)
  raises an error that says what to do instead: expanse's memory cannot
  be opened through CUDA IPC.
- torch.compile(mode="reduce-overhead") captures with plain CUDA graphs:
  install() sets torch._inductor.config.triton.cudagraph_trees = False
  (logged on the "expanse" logger; EXPANSE_CUDAGRAPH_TREES=1 leaves it),
  because CUDA graph trees need allocator calls PyTorch does not forward
  to a pluggable allocator (checkPoolLiveAllocations, checkpointing a
  pool's state).
"""

import contextlib
import ctypes
import functools
import json
import logging
import os
import threading
import warnings
import weakref

_HERE = os.path.dirname(os.path.abspath(__file__))
_state = {"mode": None, "extension_error": None, "notes": []}
_log = logging.getLogger("expanse")


def declare_pools(l):
    """ctypes signatures of the private-pool C ABI (crates/expanse-capi/src/pools.rs)."""
    u64 = ctypes.c_ulonglong
    l.expanse_begin_allocate_to_pool.restype = ctypes.c_int
    l.expanse_begin_allocate_to_pool.argtypes = [ctypes.c_int, u64, u64]
    l.expanse_begin_allocate_stream_to_pool.restype = ctypes.c_int
    l.expanse_begin_allocate_stream_to_pool.argtypes = [ctypes.c_int, u64, u64, ctypes.c_void_p]
    l.expanse_alloc_in_pool.restype = ctypes.c_void_p
    l.expanse_alloc_in_pool.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p, u64, u64]
    l.expanse_end_allocate_to_pool.restype = ctypes.c_int
    l.expanse_end_allocate_to_pool.argtypes = [ctypes.c_int, u64, u64]
    l.expanse_release_pool.restype = ctypes.c_int
    l.expanse_release_pool.argtypes = [ctypes.c_int, u64, u64]
    l.expanse_release_pool_and_empty_cache.restype = ctypes.c_int
    l.expanse_release_pool_and_empty_cache.argtypes = [ctypes.c_int, u64, u64]
    l.expanse_pool_use_count.restype = ctypes.c_int
    l.expanse_pool_use_count.argtypes = [ctypes.c_int, u64, u64]
    return l


def nest(flat):
    """PyTorch's nested statistics ({'allocated_bytes': {'all': {'peak': ..}}})
    from expanse's flat keys ('allocated_bytes.all.peak'), as
    torch._C._cuda_memoryStats returns them; memory_stats() flattens them
    back."""
    out = {}
    for key, value in flat.items():
        parts = key.split(".")
        d = out
        for p in parts[:-1]:
            d = d.setdefault(p, {})
            if not isinstance(d, dict):
                break
        else:
            d[parts[-1]] = value
    return out


def mode():
    """'extension', 'ctypes', or None before install()."""
    return _state["mode"]


def extension_error():
    """Why the C++ extension was not used, or None."""
    return _state["extension_error"]


def notes():
    """What install() changed in PyTorch's settings, one line each."""
    return list(_state["notes"])


def _note(msg):
    _state["notes"].append(msg)
    _log.info(msg)


def extension_missing(torch):
    """What building python/expanse_ext.cpp against `torch` lacks here, one
    line each naming how to get it (empty: everything is there)."""
    from torch.utils import cpp_extension

    missing = []
    if not torch.version.cuda:
        missing.append(f"PyTorch {torch.__version__} is not a CUDA build")
    if cpp_extension.get_cxx_compiler() is None:
        missing.append("no C++ compiler (set CXX, or install g++)")
    if not cpp_extension.is_ninja_available():
        missing.append("no ninja, which torch.utils.cpp_extension builds with (pip install ninja)")
    if cpp_extension.CUDA_HOME is None:
        missing.append("no CUDA toolkit headers (set CUDA_HOME, or install the CUDA toolkit)")
    return missing


def build_extension():
    """Build (once, cached) and import python/expanse_ext.cpp."""
    import torch
    from torch.utils import cpp_extension

    missing = extension_missing(torch)
    if missing:
        raise RuntimeError("cannot build expanse's C++ extension: " + "; ".join(missing))
    build_dir = os.environ.get("EXPANSE_EXT_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "expanse", "ext")
    os.makedirs(build_dir, exist_ok=True)
    return cpp_extension.load(
        name="expanse_ext",
        sources=[os.path.join(_HERE, "expanse_ext.cpp")],
        build_directory=build_dir,
        with_cuda=True,
        extra_ldflags=["-ldl"],
        verbose=os.environ.get("EXPANSE_EXT_VERBOSE") == "1",
    )


def install(torch, l, path, extension=True):
    """Make expanse PyTorch's allocator with as much of the API as possible.
    Returns the mode: 'extension' or 'ctypes'."""
    if _state.get("mode") is None and torch.cuda.is_initialized():
        # PyTorch swaps its allocator only before CUDA starts: afterwards
        # both routes below fail with "Can't swap an already initialized
        # allocator".
        raise RuntimeError(
            "expanse: install() must run before anything initializes CUDA in this process "
            "(torch.cuda.set_device, torch.cuda.init, a CUDA tensor, torch.distributed with NCCL): "
            "call expanse_torch.install() first, then torch.cuda.set_device(rank)"
        )
    declare_pools(l)
    use_ext = extension and os.environ.get("EXPANSE_EXTENSION", "1") != "0"
    if use_ext:
        try:
            build_extension().install(path)
            _state["mode"] = "extension"
        except Exception as e:  # no compiler, no headers, old torch: fall back
            _state["extension_error"] = f"{type(e).__name__}: {e}"
            warnings.warn(
                f"expanse: C++ extension unavailable ({_state['extension_error'][:300]}); using ctypes only: "
                "CUDA graphs and torch.compile(mode='reduce-overhead') are not supported in this mode, and an "
                "allocation that runs out of memory returns a null pointer that PyTorch does not check (a later "
                "kernel fails with an illegal address instead of torch.OutOfMemoryError)",
                RuntimeWarning,
            )
    if _state["mode"] != "extension":
        alloc = torch.cuda.memory.CUDAPluggableAllocator(path, "expanse_alloc", "expanse_free")
        torch.cuda.memory.change_current_allocator(alloc)
        _state["mode"] = "ctypes"
        _route_ctypes_only(torch, l)
    _route_stats(torch, l)
    _route_history(torch, l)
    _route_oom_observers(torch, l)
    _route_mempool(torch, l)
    _route_unsupported(torch)
    if _state["mode"] == "extension":
        _plain_cuda_graphs_for_compile()
        if os.environ.get("EXPANSE_GRAPHS") == "0":
            _guard_graph_capture(torch)
    return _state["mode"]


def _plain_cuda_graphs_for_compile():
    """torch.compile(mode="reduce-overhead") on plain CUDA graphs (each
    graph with its own private pool, captured through the extension's
    hooks) instead of CUDA graph trees, which call allocator functions a
    pluggable allocator cannot provide (torch._C._cuda_checkPoolLiveAllocations
    raises "pluggable does not yet support checkPoolLiveAllocations")."""
    if os.environ.get("EXPANSE_CUDAGRAPH_TREES") == "1":
        return
    try:
        import torch._inductor.config as inductor_config
    except Exception as e:  # a PyTorch without inductor: nothing to set
        _note(f"torch._inductor.config unavailable ({type(e).__name__}); cudagraph_trees left alone")
        return
    if inductor_config.triton.cudagraph_trees:
        inductor_config.triton.cudagraph_trees = False
        _note(
            "set torch._inductor.config.triton.cudagraph_trees = False: torch.compile(mode='reduce-overhead') "
            "uses plain CUDA graphs on expanse (graph trees need allocator calls PyTorch does not forward to "
            "a pluggable allocator); EXPANSE_CUDAGRAPH_TREES=1 keeps the trees"
        )


def _guard_graph_capture(torch):
    """EXPANSE_GRAPHS=0: refuse CUDA graph capture with a clear error, for
    users who want graph-captured code to fail loudly rather than run on
    expanse's private pools. Capture through the extension's hooks works
    on the H200 (torch.cuda.graph and torch.compile(mode="reduce-overhead"),
    docs/gpu-results.md section 6)."""

    def capture_begin(*args, **kwargs):
        raise RuntimeError(
            "expanse: CUDA graph capture (torch.cuda.graph, torch.compile(mode='reduce-overhead')) is refused "
            "because EXPANSE_GRAPHS=0; unset it to capture into expanse's private pools"
        )

    torch.cuda.CUDAGraph.capture_begin = capture_begin


def _last_error(l):
    e = l.expanse_last_error()
    return e.decode(errors="replace") if e else "unknown error"


def _stats(l, device):
    size = 16384
    while True:
        buf = ctypes.create_string_buffer(size)
        n = l.expanse_memory_stats_json(device, buf, size)
        if n == 0:
            raise RuntimeError(f"expanse memory_stats: {_last_error(l)}")
        if n < size:
            return json.loads(buf.value.decode())
        size = n + 1


def _device(torch, device):
    if device is None:
        return torch.cuda.current_device()
    return torch.cuda._utils._get_device_index(device, optional=True)


def _route_stats(torch, l):
    C = torch._C

    def memory_stats(device):
        return nest(_stats(l, _device(torch, device)))

    def reset_peak(device):
        if l.expanse_reset_peak_stats(_device(torch, device)) != 0:
            raise RuntimeError(f"expanse reset_peak_stats: {_last_error(l)}")

    def reset_accumulated(device):
        raise RuntimeError(
            "expanse: reset_accumulated_memory_stats is not supported; "
            "compare memory_stats() before and after instead"
        )

    C._cuda_memoryStats = memory_stats
    C._cuda_resetPeakMemoryStats = reset_peak
    C._cuda_resetAccumulatedMemoryStats = reset_accumulated


def _route_ctypes_only(torch, l):
    """Without the extension, PyTorch's C++ hooks are unset: route what has
    a Python entry point, refuse graph capture clearly."""
    C = torch._C
    orig_empty = C._cuda_emptyCache

    @functools.wraps(orig_empty)
    def empty_cache(*args, **kwargs):
        l.expanse_empty_cache()

    C._cuda_emptyCache = empty_cache

    def set_fraction(fraction, device):
        l.expanse_clear_last_error()
        l.expanse_set_memory_fraction(float(fraction), int(device))
        e = l.expanse_last_error()
        if e:
            raise RuntimeError(f"expanse set_memory_fraction({fraction}, {device}): {e.decode()}")

    C._cuda_setMemoryFraction = set_fraction

    def record_stream(self, stream):
        l.expanse_record_stream(ctypes.c_void_p(self.untyped_storage().data_ptr()), ctypes.c_void_p(stream.cuda_stream))

    torch.Tensor.record_stream = record_stream

    def capture_begin(*args, **kwargs):
        raise RuntimeError(
            "expanse: CUDA graph capture (torch.cuda.graph, torch.compile(mode='reduce-overhead')) needs expanse's "
            "C++ extension, which could not be built: "
            f"{_state['extension_error'] or 'EXPANSE_EXTENSION=0'}. Install a C++ compiler and the CUDA headers, "
            "or use torch.compile without mode='reduce-overhead'."
        )

    torch.cuda.CUDAGraph.capture_begin = capture_begin


def snapshot_dict(l):
    """expanse's snapshot (every device's segments, blocks and history) as
    the dict torch.cuda.memory._snapshot() returns."""
    import pickle
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "snapshot.pickle")
        if l.expanse_dump_snapshot(os.fsencode(path)) != 0:
            raise RuntimeError(f"expanse: snapshot: {_last_error(l)}")
        with open(path, "rb") as f:
            return pickle.load(f)


def _record_history(l, enabled, max_entries, clear):
    """expanse_record_history with PyTorch's arguments: `enabled` on or off,
    `max_entries` (sys.maxsize: no bound), `clear` forgets what is held."""
    if clear or not enabled:
        if l.expanse_record_history(0, 0) != 0:
            raise RuntimeError(f"expanse: record_history: {_last_error(l)}")
    if enabled:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError(f"expanse: _record_memory_history: max_entries must be a positive int, not {max_entries!r}")
        bound = 0 if max_entries >= (1 << 63) - 1 else max_entries
        if l.expanse_record_history(1, bound) != 0:
            raise RuntimeError(f"expanse: record_history: {_last_error(l)}")


def _route_history(torch, l):
    """torch.cuda.memory's history functions on expanse's own history (see
    the module documentation for what differs from PyTorch's)."""
    skip = set()

    def record(enabled, context="all", stacks="all", max_entries=(1 << 63) - 1, clear_history=False, *rest):
        if enabled not in (None, "state", "all"):
            raise ValueError(f"expanse: _record_memory_history(enabled={enabled!r}): expected None, 'state' or 'all'")
        actions = rest[2] if len(rest) > 2 else []
        skip.clear()
        skip.update(actions or [])
        _record_history(l, enabled == "all", max_entries, clear_history)

    def record_legacy(enabled, record_context=True, trace_alloc_max_entries=1, *rest):
        clear = rest[2] if len(rest) > 2 else False
        actions = rest[5] if len(rest) > 5 else []
        skip.clear()
        skip.update(actions or [])
        # Legacy: one entry (the default) means no history, state only.
        _record_history(l, bool(enabled) and trace_alloc_max_entries > 1, trace_alloc_max_entries, clear)

    def memory_snapshot(arg=None):
        include_traces = True
        pool = (0, 0)
        if arg is not None:
            ok = isinstance(arg, tuple) and len(arg) == 3 and all(isinstance(i, int) for i in arg[:2])
            if not ok:
                raise ValueError(f"expanse: memory_snapshot: expected (pool id, pool id, include_traces), not {arg!r}")
            pool0, pool1, include_traces = arg
            pool = (pool0, pool1)
        s = snapshot_dict(l)
        if pool != (0, 0):
            # One pool's segments (none for an unknown pool), as PyTorch's
            # snapshot(mempool_id).
            s["segments"] = [g for g in s["segments"] if tuple(g["segment_pool_id"]) == pool]
        s["device_traces"] = [
            [e for e in trace if include_traces and e["action"] not in skip] for trace in s["device_traces"]
        ]
        return s

    torch._C._cuda_record_memory_history = record
    torch._C._cuda_record_memory_history_legacy = record_legacy
    torch._C._cuda_memorySnapshot = memory_snapshot


# expanse_oom_observer: (device, alloc_size, allowed, device_free, user).
_OOM_OBSERVER = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p)


def _route_oom_observers(torch, l):
    """torch._C._cuda_attach_out_of_memory_observer on expanse's observers:
    `observer(device, alloc, device_allocated, device_free)` as PyTorch
    calls it (device_allocated: the memory the process may use), after the
    allocator's lock is released, so it may take a snapshot. An exception
    in it is printed and dropped (nothing may unwind into expanse)."""
    l.expanse_attach_oom_observer.restype = ctypes.c_int
    l.expanse_attach_oom_observer.argtypes = [_OOM_OBSERVER, ctypes.c_void_p]

    def attach(observer):
        if not callable(observer):
            raise TypeError(f"expanse: an out-of-memory observer must be callable, not {observer!r}")

        def call(device, alloc, allowed, device_free, _user):
            observer(device, alloc, allowed, device_free)

        cb = _OOM_OBSERVER(call)
        # expanse keeps calling it for the process's life: so must it live.
        _state.setdefault("oom_observers", []).append(cb)
        if l.expanse_attach_oom_observer(cb, None) != 0:
            raise RuntimeError(f"expanse: attach_out_of_memory_observer: {_last_error(l)}")

    torch._C._cuda_attach_out_of_memory_observer = attach


def _release_mempool(l, device, pool_id):
    """A MemPool's death, as PyTorch's ~MemPool: its use given back and, at
    the last, its wholly free segments returned to the device."""
    if l.expanse_release_pool_and_empty_cache(device, *pool_id) != 0:
        warnings.warn(f"expanse: releasing torch.cuda.MemPool {pool_id}: {_last_error(l)}", RuntimeWarning)


def _route_mempool(torch, l):
    """torch.cuda.MemPool and torch.cuda.use_mem_pool on expanse's private
    pools (see the module documentation)."""
    memory = getattr(torch.cuda, "memory", None)
    original_use = getattr(memory, "use_mem_pool", None)
    if getattr(memory, "MemPool", None) is None or original_use is None:
        return  # a PyTorch without MemPool: nothing to route

    class MemPool:
        """torch.cuda.MemPool on expanse: a private pool of expanse's,
        with an id from PyTorch's user-pool counter ((0, n), shared with
        torch.cuda.graph_pool_handle()). The object holds one use of the
        pool; torch.cuda.use_mem_pool(pool) routes this thread's
        allocations to it. While the pool lives its free memory is reused
        only by its own allocations and empty_cache() leaves it; when the
        object dies, its use is given back and, at the last, its wholly
        free segments go back to the device (PyTorch's releasePool, then
        emptyCache of the pool). Blocks still in use stay valid; their
        segments join expanse's shared cache as they are freed."""

        def __init__(self, allocator=None, use_on_oom=False, no_split=False):
            if _state["mode"] != "extension":
                raise RuntimeError(
                    "expanse: torch.cuda.MemPool needs expanse's C++ extension (PyTorch's pluggable allocator "
                    "reaches expanse's pools only through its C++ hooks), not in use here: "
                    f"{_state['extension_error'] or 'EXPANSE_EXTENSION=0'}"
                )
            if allocator is not None:
                raise NotImplementedError(
                    "expanse: torch.cuda.MemPool(allocator=...) is not supported: expanse is PyTorch's allocator "
                    "and serves a pool's memory itself; memory from another allocator (symmetric memory's, a "
                    "CUDAPluggableAllocator's) cannot be a pool of expanse's. Use MemPool() without an allocator, "
                    "or leave expanse out of this process"
                )
            if use_on_oom:
                raise NotImplementedError(
                    "expanse: torch.cuda.MemPool(use_on_oom=True) is not supported: expanse never lends a live "
                    "pool's free memory to allocations outside the pool, even when the device is full"
                )
            if no_split:
                raise NotImplementedError(
                    "expanse: torch.cuda.MemPool(no_split=True) is not supported: expanse splits a pool's "
                    "segments as it splits any classic segment"
                )
            device = torch.cuda.current_device()
            pool_id = tuple(int(i) for i in torch.cuda.graph_pool_handle())
            # PyTorch's createOrIncrefPool: a begin takes the use (creating
            # the pool), the end at once stops routing nothing to it.
            if l.expanse_begin_allocate_to_pool(device, *pool_id) != 0:
                raise RuntimeError(f"expanse: torch.cuda.MemPool on device {device}: {_last_error(l)}")
            if l.expanse_end_allocate_to_pool(device, *pool_id) != 0:
                raise RuntimeError(f"expanse: torch.cuda.MemPool on device {device}: {_last_error(l)}")
            self._id = pool_id
            self._device = device
            # At interpreter exit the process's memory goes anyway.
            weakref.finalize(self, _release_mempool, l, device, pool_id).atexit = False

        @property
        def id(self):
            """The pool's id: (0, n), as PyTorch's user-created pools."""
            return self._id

        @property
        def allocator(self):
            """None: the pool's memory comes from expanse."""
            return None

        def use_count(self):
            """Uses of the pool: this object's, each use_mem_pool under
            way, each CUDA graph captured into it and not yet reset."""
            n = l.expanse_pool_use_count(self._device, *self._id)
            if n < 0:
                raise RuntimeError(f"expanse: MemPool{self._id}.use_count(): {_last_error(l)}")
            return n

        def snapshot(self, include_traces=True):
            """The pool's segments, as torch.cuda.memory_snapshot(pool.id)."""
            return torch.cuda.memory_snapshot(self._id, include_traces=include_traces)

        def __repr__(self):
            return f"<torch.cuda.MemPool (expanse) id={self._id} device={self._device}>"

    active = set()
    lock = threading.Lock()

    @functools.wraps(original_use)
    @contextlib.contextmanager
    def use_mem_pool(pool, device=None):
        if not isinstance(pool, MemPool):
            hint = (
                "; a pool id such as torch.cuda.graph_pool_handle() names a CUDA graph's pool: pass it to "
                "torch.cuda.graph(pool=...)"
                if isinstance(pool, tuple)
                else ""
            )
            raise TypeError(f"expanse: torch.cuda.use_mem_pool needs a torch.cuda.MemPool, not {pool!r}{hint}")
        index = torch.cuda.current_device() if device is None else torch.cuda._utils._get_device_index(device)
        key = (index, pool.id)
        with lock:
            # PyTorch refuses it too ("beginAllocateToPool: already
            # recording to mempool_id"); on expanse the inner exit would
            # end the outer routing silently.
            if key in active:
                raise RuntimeError(
                    f"expanse: torch.cuda.use_mem_pool: pool {pool.id} is already being allocated to on device "
                    f"{index} (a use_mem_pool of it is under way)"
                )
            active.add(key)
        try:
            with original_use(pool, index):
                yield
        finally:
            with lock:
                active.discard(key)

    torch.cuda.memory.MemPool = torch.cuda.MemPool = MemPool
    torch.cuda.memory.use_mem_pool = torch.cuda.use_mem_pool = use_mem_pool


def _route_unsupported(torch):
    def share_cuda(self, *args, **kwargs):
        raise RuntimeError(
            "expanse: a CUDA tensor cannot be shared with another process (torch.multiprocessing, CUDA IPC) "
            "when expanse is PyTorch's allocator: its memory is not cudaMalloc memory and PyTorch's pluggable "
            "allocator has no IPC handles. Send tensor.cpu() and move it to the GPU in the receiving process, "
            "or leave expanse out of processes that share CUDA tensors."
        )

    # torch.multiprocessing's reduce_tensor calls storage._share_cuda_();
    # TypedStorage forwards to UntypedStorage, a Python subclass of the C
    # StorageBase, so this comes first in its method lookup.
    torch.UntypedStorage._share_cuda_ = share_cuda
