//! Private pools over the C ABI (CUDA graphs): PyTorch's
//! `beginAllocateToPool` / `endAllocateToPool` / `releasePool`, with the
//! pool id as its two integers (`MempoolId_t`). See
//! `expanse_core::DeviceAllocator::begin_allocate_to_pool`.

use std::ffi::{c_int, c_void};

use expanse_core::PoolId;

use super::{device_index, stream_of, with_global};

fn status(r: Result<(), String>) -> Result<c_int, String> {
    r.map(|_| 0)
}

/// Start allocating to pool `(id0, id1)` on `device`; the caller names the
/// pool at each [`expanse_alloc_in_pool`] (PyTorch's stream filter decides
/// which allocations). Takes one use of the pool. 0, or -1 and the last error.
#[no_mangle]
pub extern "C" fn expanse_begin_allocate_to_pool(device: c_int, id0: u64, id1: u64) -> c_int {
    with_global(-1, |g| {
        let d = device_index(device)?;
        let mut a = g.allocator.lock(d).map_err(|e| e.to_string())?;
        status(a.begin_allocate_to_pool_by_name(PoolId(id0, id1)).map_err(|e| e.to_string()))
    })
}

/// Start allocating every `expanse_alloc` on `stream` from pool
/// `(id0, id1)` (for callers without a filter of their own). Takes one use.
///
/// # Safety
/// `stream` must be null or a live stream of `device`.
#[no_mangle]
pub unsafe extern "C" fn expanse_begin_allocate_stream_to_pool(
    device: c_int,
    id0: u64,
    id1: u64,
    stream: *mut c_void,
) -> c_int {
    with_global(-1, |g| {
        let d = device_index(device)?;
        // SAFETY: the caller's guarantee, above.
        let s = unsafe { stream_of(g, d, stream)? };
        let mut a = g.allocator.lock(d).map_err(|e| e.to_string())?;
        status(a.begin_allocate_to_pool(PoolId(id0, id1), s).map_err(|e| e.to_string()))
    })
}

/// Allocate `size` bytes on `device` for `stream` from pool `(id0, id1)`,
/// which is being allocated to. Null on failure.
///
/// # Safety
/// `stream` must be null or a live stream of `device`, live while the
/// memory is in use.
#[no_mangle]
pub unsafe extern "C" fn expanse_alloc_in_pool(
    size: usize,
    device: c_int,
    stream: *mut c_void,
    id0: u64,
    id1: u64,
) -> *mut c_void {
    // As `expanse_alloc`: nothing for an empty tensor.
    if size == 0 {
        return std::ptr::null_mut();
    }
    with_global(std::ptr::null_mut(), |g| {
        let d = device_index(device)?;
        // SAFETY: the caller's guarantee, above.
        let s = unsafe { stream_of(g, d, stream)? };
        let mut a = g.allocator.lock(d).map_err(|e| e.to_string())?;
        let p = a.malloc_in_pool(size as u64, s, PoolId(id0, id1)).map_err(|e| e.to_string())?;
        Ok(p as *mut c_void)
    })
}

/// Stop allocating to pool `(id0, id1)`; its memory stays private.
#[no_mangle]
pub extern "C" fn expanse_end_allocate_to_pool(device: c_int, id0: u64, id1: u64) -> c_int {
    with_global(-1, |g| {
        let d = device_index(device)?;
        let mut a = g.allocator.lock(d).map_err(|e| e.to_string())?;
        status(a.end_allocate_to_pool(PoolId(id0, id1)).map_err(|e| e.to_string()))
    })
}

/// Give back one use of pool `(id0, id1)`; at the last its memory returns
/// to the shared cache (now if free, else as its blocks are freed).
#[no_mangle]
pub extern "C" fn expanse_release_pool(device: c_int, id0: u64, id1: u64) -> c_int {
    with_global(-1, |g| {
        let d = device_index(device)?;
        let mut a = g.allocator.lock(d).map_err(|e| e.to_string())?;
        status(a.release_pool(PoolId(id0, id1)).map_err(|e| e.to_string()))
    })
}

/// PyTorch's `~MemPool`: give back one use of pool `(id0, id1)`, and at
/// the last, return its wholly free segments to the device now (its
/// segments with live blocks join the shared cache as they are freed).
/// 0, or -1 and the last error.
#[no_mangle]
pub extern "C" fn expanse_release_pool_and_empty_cache(device: c_int, id0: u64, id1: u64) -> c_int {
    with_global(-1, |g| {
        let d = device_index(device)?;
        let mut a = g.allocator.lock(d).map_err(|e| e.to_string())?;
        status(a.release_pool_and_empty_cache(PoolId(id0, id1)).map_err(|e| e.to_string()))
    })
}

/// Uses of pool `(id0, id1)` not yet given back (PyTorch's
/// `getPoolUseCount`; 0 for a released pool still holding live blocks),
/// or -1 and the last error (an unknown pool).
#[no_mangle]
pub extern "C" fn expanse_pool_use_count(device: c_int, id0: u64, id1: u64) -> c_int {
    with_global(-1, |g| {
        let d = device_index(device)?;
        let a = g.allocator.lock(d).map_err(|e| e.to_string())?;
        let n = a.pool_use_count(PoolId(id0, id1)).map_err(|e| e.to_string())?;
        c_int::try_from(n).map_err(|_| format!("pool_use_count: {n} uses do not fit an int"))
    })
}
