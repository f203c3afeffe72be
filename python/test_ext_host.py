"""expanse's C++ extension (python/expanse_ext.cpp) on the host backend: no GPU.

    python3 python/test_ext_host.py [path/to/libexpanse.so]

Needs PyTorch (CUDA build) and a C++ compiler; prints SKIPPED and exits 0
without them (CI has neither). Builds the extension, installs it over
libexpanse.so's host backend, and drives PyTorch's own
CUDAPluggableAllocator with it: its malloc and raw_delete, an out-of-memory
exception thrown through PyTorch's frames, PyTorch's set_memory_fraction
and empty_cache entry points, and the private-pool hooks through
torch._C's pool functions (the thread filter of torch.cuda.use_mem_pool),
so the std::function signatures and the MempoolId_t layout are checked
against the PyTorch at hand. Nothing here touches a CUDA device: PyTorch
only passes the stream and device numbers on.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402

checks.host_backend()
torch = checks.torch_with_extension_or_skip()

import expanse_compat  # noqa: E402
import expanse_torch as ex  # noqa: E402

if len(sys.argv) > 1:
    ex.lib(sys.argv[1])
l = ex.lib()
expanse_compat.declare_pools(l)
ext = expanse_compat.build_extension()
ext.install(ex._path)
MIB = 1 << 20
test = checks.test


def allocated():
    return ex.memory_stats()["allocated_bytes.all.current"]


@test
def malloc_and_free_go_through_pytorch():
    before = allocated()
    p = ext.probe_malloc(3 * MIB, 0)
    assert p != 0
    assert allocated() == before + 3 * MIB, allocated()
    ext.probe_free(p)
    assert allocated() == before


@test
def an_empty_tensor_allocates_nothing():
    # PyTorch's pluggable allocator passes 0-byte requests on, where its own
    # allocator allocates nothing; expanse answers null and counts nothing.
    before = ex.memory_stats()
    assert [ext.probe_malloc(0, 0) for _ in range(100)] == [0] * 100
    after = ex.memory_stats()
    for k in ("allocation.all.current", "allocated_bytes.all.current", "num_alloc_retries"):
        assert after[k] == before[k], (k, before[k], after[k])


@test
def out_of_memory_is_pytorchs_exception():
    # Thrown in the extension, through CUDAPluggableAllocator::malloc, to
    # Python: the path the memory-fraction row crashed on.
    try:
        ext.probe_malloc(4 << 30, 0)
    except torch.OutOfMemoryError as e:
        assert "expanse: allocating" in str(e), str(e)
    else:
        raise AssertionError("a 4 GiB allocation on a 1 GiB device succeeded")
    p = ext.probe_malloc(MIB, 0)  # still usable
    ext.probe_free(p)


@test
def memory_fraction_hook_limits_and_lifts():
    torch._C._cuda_setMemoryFraction(0.25, 0)
    try:
        try:
            ext.probe_malloc(512 * MIB, 0)
            raise AssertionError("512 MiB allowed under a quarter of 1 GiB")
        except torch.OutOfMemoryError:
            pass
        p = ext.probe_malloc(64 * MIB, 0)
        ext.probe_free(p)
    finally:
        torch._C._cuda_setMemoryFraction(1.0, 0)
    p = ext.probe_malloc(512 * MIB, 0)
    ext.probe_free(p)


@test
def bad_memory_fraction_raises():
    try:
        torch._C._cuda_setMemoryFraction(0.5, 7)
    except RuntimeError as e:
        assert "set_memory_fraction" in str(e), str(e)
    else:
        raise AssertionError("device 7 of 1 accepted")


@test
def empty_cache_hook_returns_memory():
    p = ext.probe_malloc(64 * MIB, 0)
    ext.probe_free(p)
    assert ex.memory_stats()["reserved_bytes.all.current"] >= 64 * MIB
    torch._C._cuda_emptyCache()
    assert ex.memory_stats()["reserved_bytes.all.current"] == 0, ex.memory_stats()["reserved_bytes.all.current"]


@test
def pool_hooks_route_this_threads_allocations():
    pool = (0, 77)  # a MempoolId_t as graph_pool_handle makes it
    outside = ext.probe_malloc(2 * MIB, 0)
    ext.probe_free(outside)  # cached in the shared pool
    torch._C._cuda_beginAllocateCurrentThreadToPool(0, pool)
    try:
        inside = ext.probe_malloc(2 * MIB, 0)
    finally:
        torch._C._cuda_endAllocateToPool(0, pool)
    # The pool's block is private: a new segment, not the cached one.
    assert inside != outside, "the pool was handed the shared cache's block"
    ext.probe_free(inside)
    again = ext.probe_malloc(2 * MIB, 0)
    assert again != inside, "a freed block of a live pool was handed out"
    ext.probe_free(again)
    reserved = ex.memory_stats()["reserved_bytes.all.current"]
    torch._C._cuda_releasePool(0, pool)
    torch._C._cuda_emptyCache()
    assert ex.memory_stats()["reserved_bytes.all.current"] < reserved, "releasing the pool kept its memory"


@test
def releasing_an_unknown_pool_warns_not_raises():
    # releasePool runs from ~CUDAGraph, where an exception would terminate.
    import tempfile

    with tempfile.TemporaryFile() as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            torch._C._cuda_releasePool(0, (0, 4242))  # must not raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        err = f.read().decode(errors="replace")
    assert "release_pool" in err and "unknown private pool" in err, err

@test
def compile_uses_plain_cuda_graphs():
    import torch._inductor.config as inductor_config

    inductor_config.triton.cudagraph_trees = True
    expanse_compat._plain_cuda_graphs_for_compile()
    assert inductor_config.triton.cudagraph_trees is False
    assert any("cudagraph_trees = False" in n for n in expanse_compat.notes()), expanse_compat.notes()


@test
def sharing_a_cuda_tensor_says_what_to_do():
    expanse_compat._route_unsupported(torch)
    # torch.multiprocessing's reduce_tensor calls this on a CUDA storage;
    # the override must come first in UntypedStorage's method lookup.
    try:
        torch.UntypedStorage(4)._share_cuda_()
    except RuntimeError as e:
        assert "expanse:" in str(e) and "tensor.cpu()" in str(e), str(e)
    else:
        raise AssertionError("_share_cuda_ did not raise")


@test
def ctypes_path_refuses_a_bad_fraction_too():
    # Last: it replaces torch._C's entry points with the ctypes routes.
    expanse_compat._route_ctypes_only(torch, l)
    try:
        torch._C._cuda_setMemoryFraction(0.5, 7)
    except RuntimeError as e:
        assert "set_memory_fraction" in str(e) and "7" in str(e), str(e)
    else:
        raise AssertionError("device 7 of 1 accepted")
    torch._C._cuda_setMemoryFraction(1.0, 0)


checks.finish()
