"""Run record.py's workloads without a GPU: every "cuda" device they name goes to another device.

    import redirect_cuda
    redirect_cuda.install("cpu", autocast=True)    # smoke_cpu.py: small sizes on the CPU
    redirect_cuda.install("meta", autocast=False)  # meta_run.py: real sizes, shapes only

Factory functions' device= (and pin_memory=, turned off), Tensor.to / .cuda, Module.to / .cuda go to the target
device; streams and events are no-ops that report their work done; record_stream, synchronize and the CUDA seed
and cache calls do nothing. With autocast=True, torch.autocast("cuda") autocasts on the target device; with
autocast=False it is a no-op (on the meta device, so that the sizes counted are fp32). `is_new_buffer(func)` says
whether an op's outputs are buffers of their own (each one an allocation and a free on the GPU) rather than
aliases of an input (views, in-place and out= ops).
"""

import contextlib
import functools
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

FACTORIES = (
    "randint", "rand", "randn", "zeros", "ones", "empty", "full", "arange", "tensor", "as_tensor", "linspace",
    "randperm", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like", "empty_strided", "logspace", "tril_indices", "triu_indices", "bernoulli", "normal", "poisson",
    "multinomial", "scalar_tensor", "range", "hann_window", "hamming_window", "kaiser_window", "blackman_window",
    "bartlett_window", "complex", "polar",
)
TENSOR_FACTORIES = ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor")

# The original methods, for callers that patch them again on top of install().
ORIGINAL_TENSOR_TO = torch.Tensor.to
ORIGINAL_MODULE_TO = torch.nn.Module.to

_target = None


def device_of(d):
    """`d` with a CUDA device replaced by the target (anything else unchanged)."""
    if isinstance(d, str) and d.startswith("cuda"):
        return _target.type
    if isinstance(d, torch.device) and d.type == "cuda":
        return _target
    return d


def fix_kwargs(kw):
    """Keyword arguments with device= redirected and pin_memory= off (changed in place, and returned)."""
    if "device" in kw:
        kw["device"] = device_of(kw["device"])
    if kw.get("pin_memory"):
        kw["pin_memory"] = False
    return kw


def _patch_factory(owner, name):
    fn = getattr(owner, name, None)
    if fn is None:
        return

    @functools.wraps(fn)
    def wrapped(*a, **kw):
        return fn(*a, **fix_kwargs(kw))

    setattr(owner, name, wrapped)


class _Stream:
    def __init__(self, *a, **kw):
        pass

    def wait_stream(self, *a):
        pass

    def wait_event(self, *a):
        pass

    def synchronize(self):
        pass

    def record_event(self, *a):
        return _Event()

    def query(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class _Event(_Stream):
    def record(self, *a):
        pass

    def elapsed_time(self, *a):
        return 1.0


class _NoAutocast(contextlib.ContextDecorator):
    def __init__(self, *a, **kw):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _autocast_on(device_type):
    base = torch.autocast

    class _Autocast(base):
        def __init__(self, dev, *a, **kw):
            super().__init__(device_type if str(dev).startswith("cuda") else dev, *a, **kw)

    return _Autocast


def install(target, autocast):
    """Redirect every CUDA device to `target` ("cpu" or "meta") for the rest of the process."""
    global _target
    if _target is not None:
        raise RuntimeError(f"redirect_cuda: already redirected to {_target}")
    _target = torch.device(target)
    for name in FACTORIES:
        _patch_factory(torch, name)
    for name in TENSOR_FACTORIES:
        _patch_factory(torch.Tensor, name)
    torch.Tensor.to = lambda self, *a, **kw: ORIGINAL_TENSOR_TO(self, *(device_of(x) for x in a), **fix_kwargs(kw))
    torch.Tensor.cuda = lambda self, *a, **kw: ORIGINAL_TENSOR_TO(self, _target)
    torch.Tensor.pin_memory = lambda self, *a, **kw: self
    torch.Tensor.is_pinned = lambda self, *a, **kw: False
    torch.Tensor.record_stream = lambda self, *a, **kw: None
    torch.nn.Module.to = lambda self, *a, **kw: ORIGINAL_MODULE_TO(self, *(device_of(x) for x in a), **fix_kwargs(kw))
    torch.nn.Module.cuda = lambda self, *a, **kw: ORIGINAL_MODULE_TO(self, _target)
    torch.autocast = _autocast_on(_target.type) if autocast else _NoAutocast
    torch.cuda.synchronize = lambda *a, **kw: None
    torch.cuda.init = lambda: None
    torch.cuda.Stream = _Stream
    torch.cuda.Event = _Event
    torch.cuda.stream = lambda s: _Stream()
    torch.cuda.current_stream = lambda *a: _Stream()
    torch.cuda.default_stream = lambda *a: _Stream()
    torch.cuda.empty_cache = lambda: None
    torch.cuda.manual_seed = lambda *a: None
    torch.cuda.manual_seed_all = lambda *a: None


def is_new_buffer(func):
    """Whether `func`'s outputs are new buffers (views, in-place and out= ops return an alias instead)."""
    return not any(r.alias_info is not None for r in func._schema.returns)


class CountOutputs(TorchDispatchMode):
    """Counts the tensors ops create (outputs that alias no input, backward included): on the GPU each is one
    allocation and one free. A subclass sees each one in `created(t)`."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def created(self, t):
        pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if is_new_buffer(func):
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(t, torch.Tensor):
                    self.count += 1
                    self.created(t)
        return out


def workload(name):
    """record.py's workload `name` and the random generator it is run with, seeded as record.py seeds them."""
    import random

    import record

    if name not in record.WORKLOADS:
        sys.exit(f"no workload named {name!r} in {record.__file__} ({len(record.WORKLOADS)} workloads; "
                 "TRACES_DIR names another checkout's scripts/traces)")
    _, fn = record.WORKLOADS[name]
    torch.manual_seed(0)
    return fn, random.Random(f"expanse-{name}")
