"""Meta-device run of record.py workloads at their real sizes (RECORD_SMOKE unset).

    python3 scripts/traces/meta_run.py NAME...
    TRACES_DIR=/work/bNN/scripts/traces python3 scripts/traces/meta_run.py NAME...   (another checkout's workloads)

Prints, per workload, the op outputs counted (about 1.8x as many events in a GPU trace), the peak of live bytes
(fp32: autocast is off, so a bf16 run on the GPU holds less) and the time taken, then "META OK". The step counts
of a blind batch are sized with it (docs/blind-batches.md: 0.27-0.36M op outputs, at most about 7.5 GB).
META_SDPA=eff: attention through the memory-efficient kernel's meta function instead of the math path.
A lookup (`embedding`, `index_select`) with an integer `arange` reaching past the table's rows stops the run with
IndexPastTable: the meta device checks no index, and on the GPU that is a device-side assert.

Every "cuda" device is mapped to "meta" (factory device=, .cuda(), .to("cuda"), torch.device("cuda"), Module.to),
pinned memory off, streams/events no-ops, autocast a no-op (fp32 sizes counted), readbacks (.item(), .tolist(),
float(), int(), bool(), .cpu()) answered with dummies. A TorchDispatchMode counts op outputs that alias no input
(one allocation + free each on the GPU) and tracks live bytes as the sum of live storages (weakref finalizers on
the storages' Python objects, which PyTorch keeps tied to the StorageImpl).
"""

import os
import sys
import time
import weakref

os.environ.pop("RECORD_SMOKE", None)
import torch  # noqa: E402

TRACES_DIR = os.environ.get("TRACES_DIR", os.path.dirname(os.path.abspath(__file__)))
# TRACES_DIR goes in front of this script's own folder, so that another checkout's record.py and batch files are
# the ones imported (in the other order its workloads were never found).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TRACES_DIR)

import redirect_cuda  # noqa: E402

redirect_cuda.install("meta", autocast=False)
_m, _fix_kwargs, _tensor_to = redirect_cuda.device_of, redirect_cuda.fix_kwargs, redirect_cuda.ORIGINAL_TENSOR_TO


def _dummy_cpu(t):
    return torch.ones(t.shape, dtype=t.dtype)


def _to(self, *a, **kw):
    """As redirect_cuda's, and a meta tensor copied to the CPU is a dummy of ones."""
    a = tuple(_m(x) for x in a)
    kw = _fix_kwargs(kw)
    if self.device.type == "meta":
        dev = kw.get("device")
        for x in a:
            if isinstance(x, (str, torch.device)):
                dev = x
        if dev is not None and torch.device(dev).type == "cpu":
            out = _dummy_cpu(self)
            dt = kw.get("dtype") or next((x for x in a if isinstance(x, torch.dtype)), None)
            return out.to(dt) if dt is not None else out
    return _tensor_to(self, *a, **kw)


torch.Tensor.to = _to
_cpu_orig = torch.Tensor.cpu
torch.Tensor.cpu = lambda self, *a, **kw: _dummy_cpu(self) if self.device.type == "meta" else _cpu_orig(self, *a, **kw)

# torch.device("cuda") -> meta
_Device = torch.device


class _DevMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _Device)


class _DeviceShim(metaclass=_DevMeta):
    def __new__(cls, *a, **kw):
        if a and isinstance(a[0], str) and a[0].startswith("cuda"):
            return _Device("meta")
        if a and a[0] == "cuda":
            return _Device("meta")
        return _Device(*a, **kw)


torch.device = _DeviceShim

# dummies for readbacks of meta tensors
_item, _tolist = torch.Tensor.item, torch.Tensor.tolist
_float, _int, _bool, _index = torch.Tensor.__float__, torch.Tensor.__int__, torch.Tensor.__bool__, \
    torch.Tensor.__index__


_RB = []  # (op outputs, peak, seconds) at each readback of a meta tensor
_CUR = [None, 0.0]


def _note():
    m = _CUR[0]
    if m is not None:
        _RB.append((m.count, m.peak, time.time() - _CUR[1]))


def _dummy_scalar(t):
    _note()
    if t.dtype == torch.bool:
        return True
    if t.dtype.is_floating_point or t.dtype.is_complex:
        return 1.0
    return 1


def _item_p(self):
    return _dummy_scalar(self) if self.device.type == "meta" else _item(self)


def _tolist_p(self):
    if self.device.type != "meta":
        return _tolist(self)
    v = _dummy_scalar(self)

    def build(shape):
        if not shape:
            return v
        return [build(shape[1:]) for _ in range(shape[0])]

    return build(list(self.shape))


torch.Tensor.item = _item_p
torch.Tensor.tolist = _tolist_p
torch.Tensor.__float__ = lambda self: float(_dummy_scalar(self)) if self.device.type == "meta" else _float(self)
torch.Tensor.__int__ = lambda self: int(_dummy_scalar(self)) if self.device.type == "meta" else _int(self)
torch.Tensor.__index__ = lambda self: int(_dummy_scalar(self)) if self.device.type == "meta" else _index(self)
torch.Tensor.__bool__ = lambda self: bool(_dummy_scalar(self)) if self.device.type == "meta" else _bool(self)


# META_SDPA=eff: SDPA on meta through the memory-efficient kernel's meta function (no T x T matrices held), to see
# what the GPU's fused kernels would hold; by default SDPA takes its math path.
if os.environ.get("META_SDPA") == "eff":
    _sdpa = torch.nn.functional.scaled_dot_product_attention

    def _sdpa_eff(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        if q.device.type != "meta":
            return _sdpa(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale)
        shp = q.shape[:-1] + (k.shape[-2],)
        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                attn_mask = torch.zeros(attn_mask.shape, device=q.device, dtype=q.dtype)
            while attn_mask.dim() < len(shp):
                attn_mask = attn_mask[None]
            attn_mask = attn_mask.expand(shp)
        lse = q.requires_grad or k.requires_grad or v.requires_grad
        return torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, attn_mask, lse and torch.is_grad_enabled(), dropout_p, is_causal, scale=scale)[0]

    torch.nn.functional.scaled_dot_product_attention = _sdpa_eff


class IndexPastTable(IndexError):
    """A table looked up with an `arange` reaching past its rows: on the GPU, a device-side assert."""


def _arange_last(func, args, kwargs, n):
    """The last (largest) value of an increasing integer `aten.arange` output of n elements, from its arguments
    (None if unknown)."""
    start, step = 0, 1
    if func._overloadname in ("start", "start_step", "start_out"):
        start = args[0]
    if func._overloadname in ("start_step", "start_out"):
        step = args[2] if len(args) > 2 else kwargs.get("step", 1)
    if n == 0 or not all(isinstance(v, int) for v in (start, step)) or step <= 0:
        return None
    return start + step * (n - 1)


class CountMeta(redirect_cuda.CountOutputs):
    """redirect_cuda's count, and the bytes of the live meta storages, with their peak. It also knows the values of
    integer `arange` outputs (their storages, so views of them too), and stops a workload that looks up a table
    (`embedding`, `index_select`) with one reaching past the table's rows: the meta device checks no index, and the
    seventy-ninth batch's claim_evidence_verify_train indexed a position table of 242 rows with positions up to 247
    only at its real sizes (docs/blind-batches.md)."""

    def __init__(self):
        super().__init__()
        self.live = 0
        self.peak = 0
        self.keys = {}
        self.nonmeta = 0
        self.ranges = {}  # storage key -> (last value, elements) of the integer arange that made it

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        packet = func.overloadpacket
        if packet is torch.ops.aten.embedding:
            self._check(args[1], args[0].shape[0], "embedding")
        elif packet is torch.ops.aten.index_select:
            self._check(args[2], args[0].shape[args[1]], "index_select")
        out = super().__torch_dispatch__(func, types, args, kwargs)
        if packet is torch.ops.aten.arange and isinstance(out, torch.Tensor) and not out.dtype.is_floating_point:
            last = _arange_last(func, args, kwargs, out.numel())
            if last is not None:
                key = out.untyped_storage()._cdata
                self.ranges[key] = (last, out.numel())
                weakref.finalize(out.untyped_storage(), self.ranges.pop, key, None)
        return out

    def _check(self, index, rows, op):
        known = self.ranges.get(index.untyped_storage()._cdata) if isinstance(index, torch.Tensor) else None
        if known is None or index.numel() == 0:
            return
        last, n = known
        # Only a view that reaches the arange's last element holds its largest value (a slice may stop short).
        reach = index.storage_offset() + sum((size - 1) * stride for size, stride in zip(index.shape, index.stride()))
        if reach == n - 1 and last >= rows:
            raise IndexPastTable(f"{op} of a table of {rows} rows with an arange reaching {last}: an index past the "
                                 "table, a device-side assert on the GPU")

    def _free(self, key):
        n = self.keys.pop(key, None)
        if n is not None:
            self.live -= n

    def created(self, t):
        if t.device.type != "meta":
            self.nonmeta += 1
            return
        st = t.untyped_storage()
        key = st._cdata
        if key in self.keys:
            return
        n = st.nbytes()
        self.keys[key] = n
        self.live += n
        self.peak = max(self.peak, self.live)
        weakref.finalize(st, self._free, key)


def main():
    for name in sys.argv[1:]:
        fn, rng = redirect_cuda.workload(name)
        t0 = time.time()
        mode = CountMeta()
        _CUR[0], _CUR[1] = mode, t0
        _RB.clear()
        import signal

        def on_term(*_):
            print(f"STOPPED {name}: {mode.count} op outputs, peak {mode.peak / 1e9:.2f} GB, "
                  f"{time.time() - t0:.0f} s; readbacks so far: {len(_RB)}", flush=True)
            dump()
            os._exit(3)

        def dump():
            last = -1
            for i, (c, p, s_) in enumerate(_RB):
                if c != last:
                    print(f"  rb {i}: {c} outputs, peak {p / 1e9:.2f} GB, {s_:.0f} s", flush=True)
                    last = c

        signal.signal(signal.SIGTERM, on_term)
        import threading

        def progress():
            while not mode_done:
                time.sleep(20)
                if not mode_done:
                    print(f"  .. {name}: {mode.count} op outputs, peak {mode.peak / 1e9:.2f} GB, "
                          f"{time.time() - t0:.0f} s", flush=True)

        mode_done = False
        threading.Thread(target=progress, daemon=True).start()
        with mode:
            fn(rng)
        mode_done = True
        if os.environ.get("META_DUMP"):
            dump()
        print(f"META {name}: {mode.count} op outputs (~{1.8 * mode.count / 1e6:.2f}M events), peak "
              f"{mode.peak / 1e9:.2f} GB live, {time.time() - t0:.1f} s (cpu-side op outputs {mode.nonmeta}, "
              f"live at end {mode.live / 1e9:.3f} GB)", flush=True)
    print("META OK", flush=True)


if __name__ == "__main__":
    main()
