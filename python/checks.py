"""The tiny runner of the Python ABI checks: each check is a function
decorated with `@checks.test`; a failure is reported and the rest still
run; `checks.finish()` prints the count and exits 1 if any failed."""

import os
import sys

passed = failed = 0


def host_backend():
    """The checks run on expanse's host backend, a 1 GiB device: set before
    libexpanse.so starts (its first call)."""
    os.environ["EXPANSE_BACKEND"] = "host"
    os.environ["EXPANSE_HOST_MEMORY"] = str(1 << 30)


def torch_or_skip():
    """PyTorch, or exit 0 after printing SKIPPED (CI has no PyTorch)."""
    try:
        import torch
    except ImportError as e:
        print(f"SKIPPED: no PyTorch ({e})")
        sys.exit(0)
    return torch


def torch_with_extension_or_skip():
    """PyTorch with all that building expanse's extension against it
    needs (a CUDA build, a C++ compiler, ninja, the CUDA headers), or exit 0
    after printing SKIPPED and what is missing."""
    torch = torch_or_skip()
    import expanse_compat

    missing = expanse_compat.extension_missing(torch)
    if missing:
        print("SKIPPED: " + "; ".join(missing))
        sys.exit(0)
    return torch


def test(fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"{fn.__name__} ... ok", flush=True)
    except Exception as e:  # report and go on
        failed += 1
        print(f"{fn.__name__} ... FAILED: {e!r}", flush=True)
    return fn


def finish():
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
