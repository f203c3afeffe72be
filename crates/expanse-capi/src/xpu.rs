//! The C ABI PyTorch's `XPUPluggableAllocator` loads:
//! `void* alloc(size_t size, int device, sycl::queue* queue)` and
//! `void free(void* ptr, size_t size, int device, sycl::queue* queue)`.
//!
//! The queue pointer is an opaque stream id to expanse: blocks are cached
//! per queue, and the Level Zero backend orders its events on a command
//! list of its own for each queue, not on the SYCL queue's work. Exercised
//! through ctypes over the fake Level Zero driver
//! (`python/test_xpu_abi.py`); **not yet verified on Intel hardware or with
//! PyTorch**.

use std::ffi::{c_int, c_void};

/// Allocate `size` bytes on XPU `device` for `queue`. Null on failure
/// (see `expanse_last_error`).
#[no_mangle]
pub extern "C" fn expanse_xpu_alloc(size: usize, device: c_int, queue: *mut c_void) -> *mut c_void {
    crate::expanse_alloc(size, device, queue)
}

/// Free `ptr` (from [`expanse_xpu_alloc`]). Errors set the last error.
#[no_mangle]
pub extern "C" fn expanse_xpu_free(ptr: *mut c_void, size: usize, device: c_int, queue: *mut c_void) {
    crate::expanse_free(ptr, size, device, queue)
}
