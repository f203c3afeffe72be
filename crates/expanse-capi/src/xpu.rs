//! The C ABI PyTorch's `XPUPluggableAllocator` loads:
//! `void* alloc(size_t size, int device, sycl::queue* queue)` and
//! `void free(void* ptr, size_t size, int device, sycl::queue* queue)`.
//!
//! Both go through the one process-wide allocator built by the shared
//! backend factory (`EXPANSE_BACKEND=ze` selects Level Zero). The queue
//! pointer is an opaque stream id to expanse, adopted by the device as the
//! CUDA entry points adopt a `cudaStream_t`: blocks are cached per queue,
//! and the Level Zero backend orders its events on a command list of its
//! own for each queue, not on the SYCL queue's work. Exercised through
//! ctypes over the fake Level Zero driver (`python/test_xpu_abi.py`); **not
//! yet verified on Intel hardware or with PyTorch**.

use std::ffi::{c_int, c_void};

use crate::{device_index, stream_of, with_global};

/// Allocate `size` bytes on XPU `device` for `queue`. Null on failure
/// (see `expanse_last_error`).
///
/// # Safety
/// `queue` must be null or a `sycl::queue*` that stays live while memory
/// allocated for it is in use (expanse never dereferences it).
#[no_mangle]
pub unsafe extern "C" fn expanse_xpu_alloc(size: usize, device: c_int, queue: *mut c_void) -> *mut c_void {
    // As `expanse_alloc`: nothing for an empty tensor.
    if size == 0 {
        return std::ptr::null_mut();
    }
    // `with_global` runs the body under `catch_unwind`.
    with_global(std::ptr::null_mut(), |g| {
        let d = device_index(device)?;
        // SAFETY: the caller's guarantee, above.
        let s = unsafe { stream_of(g, d, queue)? };
        let p = g.allocator.malloc(d, size as u64, s).map_err(|e| e.to_string())?;
        Ok(p as *mut c_void)
    })
}

/// Free `ptr` (from [`expanse_xpu_alloc`]). Errors set the last error.
#[no_mangle]
pub extern "C" fn expanse_xpu_free(ptr: *mut c_void, size: usize, device: c_int, queue: *mut c_void) {
    // `expanse_free` runs its body under `catch_unwind` (`with_global`).
    crate::expanse_free(ptr, size, device, queue)
}
