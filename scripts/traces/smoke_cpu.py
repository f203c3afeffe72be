"""CPU smoke test of workloads in record.py (no GPU needed).

    RECORD_SMOKE=1 python3 scripts/traces/smoke_cpu.py NAME...

Maps every "cuda" device the workloads name (factory functions' device=,
.cuda(), .to("cuda"), torch.autocast("cuda"), pinned memory, streams and
events) to the CPU, runs each workload once and prints how many tensors its
ops created (a TorchDispatchMode count of op outputs that alias no input,
backward included): each is one allocation and one free on the GPU, so
twice the count is about the trace's events at the smoke run's sizes.
RECORD_SMOKE=1 makes the workloads that read it (record.py's `_smoke`) run a
few steps at small sizes; the GPU recording never sets it.
"""

import functools
import os
import sys
import time

os.environ.setdefault("RECORD_SMOKE", "1")

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _cpu(d):
    if isinstance(d, str) and d.startswith("cuda"):
        return "cpu"
    if isinstance(d, torch.device) and d.type == "cuda":
        return torch.device("cpu")
    return d


def _fix_kwargs(kw):
    if "device" in kw:
        kw["device"] = _cpu(kw["device"])
    if kw.get("pin_memory"):
        kw["pin_memory"] = False
    return kw


def _patch_factory(mod, name):
    fn = getattr(mod, name, None)
    if fn is None:
        return

    @functools.wraps(fn)
    def wrapped(*a, **kw):
        return fn(*a, **_fix_kwargs(kw))

    setattr(mod, name, wrapped)


for _n in ("randint", "rand", "randn", "zeros", "ones", "empty", "full", "arange", "tensor", "as_tensor",
           "linspace", "randperm", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
           "randn_like", "randint_like", "empty_strided", "logspace", "tril_indices", "triu_indices", "bernoulli",
           "normal", "poisson", "multinomial"):
    _patch_factory(torch, _n)

for _n in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"):
    _patch_factory(torch.Tensor, _n)

_tensor_to = torch.Tensor.to


def _to(self, *a, **kw):
    a = tuple(_cpu(x) for x in a)
    return _tensor_to(self, *a, **_fix_kwargs(kw))


torch.Tensor.to = _to
torch.Tensor.cuda = lambda self, *a, **kw: self
torch.Tensor.pin_memory = lambda self, *a, **kw: self
torch.Tensor.record_stream = lambda self, *a, **kw: None
_module_to = torch.nn.Module.to
torch.nn.Module.to = lambda self, *a, **kw: _module_to(self, *(_cpu(x) for x in a), **_fix_kwargs(kw))
torch.nn.Module.cuda = lambda self, *a, **kw: self

_autocast = torch.autocast


class _Autocast(_autocast):
    def __init__(self, device_type, *a, **kw):
        super().__init__(_cpu(device_type), *a, **kw)


torch.autocast = _Autocast


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

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class _Event(_Stream):
    def record(self, *a):
        pass

    def query(self):
        return True


torch.cuda.synchronize = lambda *a, **kw: None
torch.cuda.init = lambda: None
torch.cuda.Stream = _Stream
torch.cuda.Event = _Event
torch.cuda.stream = lambda s: _Stream()
torch.cuda.current_stream = lambda *a: _Stream()
torch.cuda.default_stream = lambda *a: _Stream()


class CountAllocs(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        # Views and in-place or out= ops return an alias, not a new buffer.
        if not any(r.alias_info is not None for r in func._schema.returns):
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(t, torch.Tensor):
                    self.count += 1
        return out


def main():
    import random

    import record

    for name in sys.argv[1:]:
        _, fn = record.WORKLOADS[name]
        torch.manual_seed(0)
        rng = random.Random(f"expanse-{name}")
        t0 = time.time()
        mode = CountAllocs()
        with mode:
            fn(rng)
        print(f"SMOKE OK {name}: {mode.count} op outputs, {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
