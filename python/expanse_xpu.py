"""Plug expanse into PyTorch on Intel XPU (no build step).

    import expanse_xpu
    expanse_xpu.install()      # before the first XPU allocation

UNVERIFIED: written against PyTorch's torch.xpu.memory.XPUPluggableAllocator
API and checked only through ctypes over expanse's fake Level Zero driver
(python/test_xpu_abi.py); it has not run on Intel hardware or under PyTorch.

The library is found at `path`, else $EXPANSE_LIB, else the repository's
target/release/libexpanse.so. It sets EXPANSE_BACKEND=ze unless already set;
EXPANSE_ALLOC_CONF configures the allocator (PyTorch's syntax). Intel's
loader (libze_loader.so.1) is used unless EXPANSE_ZE_LIBRARY names another.
Statistics and empty_cache: see expanse_torch (same library, same calls).
"""

import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def default_path():
    return os.environ.get("EXPANSE_LIB") or os.path.join(_HERE, "..", "target", "release", "libexpanse.so")


def install(path=None):
    """Make expanse PyTorch's XPU allocator. Call before any XPU allocation."""
    import torch

    os.environ.setdefault("EXPANSE_BACKEND", "ze")
    lib = os.path.abspath(path or default_path())
    alloc = torch.xpu.memory.XPUPluggableAllocator(lib, "expanse_xpu_alloc", "expanse_xpu_free")
    torch.xpu.memory.change_current_allocator(alloc)
    return alloc
