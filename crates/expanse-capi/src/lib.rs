//! The C ABI of expanse (`libexpanse.so`, header `include/expanse.h`).
//!
//! One process-wide [`CachingAllocator`] is created at the first call,
//! through the same factory and configuration loader as the `expanse`
//! command ([`expanse_backends`]): backend from `EXPANSE_BACKEND` (`cuda`,
//! `ze`, `host`; default `cuda` when a CUDA device is present, else `host`; `sim`
//! is refused, its memory is not real), host capacity from
//! `EXPANSE_HOST_MEMORY`, configuration from `EXPANSE_ALLOC_CONF`, else
//! `PYTORCH_ALLOC_CONF`, else `PYTORCH_CUDA_ALLOC_CONF`, else the defaults.
//! Streams are the caller's `cudaStream_t` values (null: the default
//! stream; on `ze`, the XPU entry points' `sycl::queue*`), adopted by the
//! device at each call. Every exported function catches panics and turns
//! every error into a return value plus a thread-local message
//! ([`expanse_last_error`]); nothing unwinds across the ABI.

mod pools;

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use expanse_backends::{Backend, BackendKind};
use expanse_core::{CachingAllocator, StreamId};

mod oom;
mod snapshot;
mod xpu;
pub use oom::{expanse_attach_oom_observer, OomObserverFn};
pub use snapshot::{expanse_dump_snapshot, expanse_record_history};
pub use xpu::{expanse_xpu_alloc, expanse_xpu_free};

struct Global {
    allocator: CachingAllocator,
    backend: Backend,
}

static GLOBAL: OnceLock<Result<Global, String>> = OnceLock::new();

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

fn set_error(msg: String) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(c));
}

fn clear_error() {
    LAST_ERROR.with(|e| *e.borrow_mut() = None);
}

/// Forget the last error message of this thread.
#[no_mangle]
pub extern "C" fn expanse_clear_last_error() {
    // Nothing here can panic; caught all the same, as at every entry point.
    let _ = catch_unwind(clear_error);
}

fn build() -> Result<Global, String> {
    let config = expanse_backends::load_config(None).map_err(|e| e.to_string())?;
    let kind = expanse_backends::kind_from_env().map_err(|e| format!("{}: {e}", expanse_backends::BACKEND_VAR))?;
    if !kind.real_memory() {
        return Err(format!(
            "{}: the {} backend has no real memory to hand out",
            expanse_backends::BACKEND_VAR,
            kind.name()
        ));
    }
    let options = expanse_backends::options_from_env().map_err(|e| e.to_string())?;
    let backend = expanse_backends::open(kind, &options).map_err(|e| e.to_string())?;
    for d in backend.devices() {
        config.check_device(d.total_memory(), d.granularity()).map_err(|e| format!("device {}: {e}", d.ordinal()))?;
    }
    let allocator = CachingAllocator::new(backend.devices().to_vec(), config);
    Ok(Global { allocator, backend })
}

/// The id of the caller's stream on `device`.
///
/// # Safety
/// `stream` must be null or a live stream of `device` (the C ABI's
/// contract with its caller, stated in `include/expanse.h`).
#[inline]
pub(crate) unsafe fn stream_of(g: &Global, device: u32, stream: *mut c_void) -> Result<StreamId, String> {
    // SAFETY: passed on from the caller.
    unsafe { g.backend.adopt_stream(device, stream as u64) }.map_err(|e| e.to_string())
}

/// Run `f` with the global allocator; errors and panics become `fallback`.
pub(crate) fn with_global<T>(fallback: T, f: impl FnOnce(&Global) -> Result<T, String>) -> T {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let g = GLOBAL.get_or_init(build).as_ref().map_err(|e| format!("expanse failed to start: {e}"))?;
        f(g)
    }));
    match r {
        Ok(Ok(v)) => v,
        Ok(Err(msg)) => {
            set_error(msg);
            fallback
        }
        Err(p) => {
            let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
            set_error(format!("internal error (panic caught at the ABI): {}", msg.unwrap_or_default()));
            fallback
        }
    }
}

pub(crate) fn device_index(device: c_int) -> Result<u32, String> {
    u32::try_from(device).map_err(|_| format!("bad device index {device}"))
}

/// Allocate `size` bytes on `device` for `stream`. Null on failure.
///
/// A `size` of 0 returns null and allocates nothing, not a failure (the
/// last error is left as it was): PyTorch's own allocator never allocates
/// for an empty tensor, while its pluggable-allocator front calls this for
/// one, tens of thousands of times in a training run; a block for each
/// would make the live allocation stream differ from the one PyTorch's
/// allocator sees. `expanse_free` of null does nothing.
///
/// # Safety
/// `stream` must be null (the default stream) or a live stream of
/// `device`, live while memory allocated for it is in use.
#[no_mangle]
pub unsafe extern "C" fn expanse_alloc(size: usize, device: c_int, stream: *mut c_void) -> *mut c_void {
    if size == 0 {
        return std::ptr::null_mut();
    }
    with_global(std::ptr::null_mut(), |g| {
        let d = device_index(device)?;
        // SAFETY: the caller's guarantee, above.
        let s = unsafe { stream_of(g, d, stream)? };
        let p = g.allocator.malloc(d, size as u64, s).map_err(|e| e.to_string())?;
        Ok(p as *mut c_void)
    })
}

/// Free `ptr` on the device that owns it. Unknown pointers and double
/// frees set the last error. `device` is checked, never trusted: a valid
/// device other than the owner is accepted (callers pass the current
/// device); a device that does not exist (negative, out of range) sets the
/// last error, but the block is freed all the same, never lost.
#[no_mangle]
pub extern "C" fn expanse_free(ptr: *mut c_void, _size: usize, device: c_int, _stream: *mut c_void) {
    with_global((), |g| {
        if ptr.is_null() {
            return Ok(());
        }
        let known = device_index(device).ok().filter(|&d| (d as usize) < g.allocator.device_count());
        match known {
            // The common case, freed by its owner: the error (a large
            // value) is moved only on its own path.
            Some(d) => match g.allocator.free(d, ptr as u64) {
                Ok(()) => Ok(()),
                Err(e) => free_on_owner(g, ptr, e),
            },
            None => {
                g.allocator.free_any(ptr as u64).map_err(|e| e.to_string())?;
                Err(format!(
                    "expanse_free: bad device index {device} ({} device(s)); {ptr:?} was freed on the device that owns it",
                    g.allocator.device_count()
                ))
            }
        }
    })
}

/// `expanse_free` on a device that did not free `ptr` (`error`): the owner
/// is another device, then it frees it; else the error stands.
#[cold]
#[inline(never)]
fn free_on_owner(g: &Global, ptr: *mut c_void, error: expanse_core::AllocError) -> Result<(), String> {
    let freed = match g.allocator.device_of(ptr as u64) {
        Some(_) => g.allocator.free_any(ptr as u64),
        None => Err(error),
    };
    freed.map_err(|e| e.to_string())
}

/// Release cached memory on every device.
#[no_mangle]
pub extern "C" fn expanse_empty_cache() {
    with_global((), |g| g.allocator.empty_cache().map_err(|e| e.to_string()))
}

/// Statistics of `device` as JSON into `buf` (see the header).
///
/// # Safety
/// `buf` must be null or valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn expanse_memory_stats_json(device: c_int, buf: *mut c_char, len: usize) -> usize {
    with_global(0, |g| {
        let json = g.allocator.stats(device_index(device)?).map_err(|e| e.to_string())?.to_json();
        if !buf.is_null() && json.len() < len {
            // SAFETY: the caller guarantees `buf` holds `len` bytes, and
            // `json.len() + 1 <= len`.
            unsafe {
                std::ptr::copy_nonoverlapping(json.as_ptr(), buf.cast::<u8>(), json.len());
                *buf.add(json.len()) = 0;
            }
        }
        Ok(json.len())
    })
}

/// Reset peak statistics of `device`.
#[no_mangle]
pub extern "C" fn expanse_reset_peak_stats(device: c_int) -> c_int {
    with_global(-1, |g| g.allocator.reset_peak_stats(device_index(device)?).map(|_| 0).map_err(|e| e.to_string()))
}

/// `record_stream` for `ptr`.
///
/// # Safety
/// `stream` must be null or a live stream of the device `ptr` is on.
#[no_mangle]
pub unsafe extern "C" fn expanse_record_stream(ptr: *mut c_void, stream: *mut c_void) {
    with_global((), |g| {
        let d = g.allocator.device_of(ptr as u64).ok_or_else(|| format!("record_stream: unknown pointer {ptr:?}"))?;
        // SAFETY: the caller's guarantee, above.
        let s = unsafe { stream_of(g, d, stream)? };
        g.allocator.record_stream(ptr as u64, s).map_err(|e| e.to_string())
    })
}

/// Limit `device` to `fraction` of its memory.
#[no_mangle]
pub extern "C" fn expanse_set_memory_fraction(fraction: f64, device: c_int) {
    with_global((), |g| g.allocator.set_memory_fraction(device_index(device)?, fraction).map_err(|e| e.to_string()))
}

/// Let `device` access `peer`'s memory.
#[no_mangle]
pub extern "C" fn expanse_enable_peer_access(device: c_int, peer: c_int) -> c_int {
    with_global(-1, |g| {
        let (d, p) = (device_index(device)?, device_index(peer)?);
        if d == p {
            return Ok(0);
        }
        g.backend.enable_peer_access(d, p).map_err(|e| format!("peer access {device} -> {peer}: {e}"))?;
        g.allocator.enable_peer_access(d, p).map(|_| 0).map_err(|e| e.to_string())
    })
}

/// Name of the backend in use.
#[no_mangle]
pub extern "C" fn expanse_backend() -> *const c_char {
    with_global(std::ptr::null(), |g| {
        Ok(match g.backend.kind() {
            BackendKind::Cuda => c"cuda".as_ptr(),
            BackendKind::Host => c"host".as_ptr(),
            BackendKind::Sim => c"sim".as_ptr(),
            BackendKind::Ze => c"ze".as_ptr(),
        })
    })
}

/// The last error message on this thread, or null.
#[no_mangle]
pub extern "C" fn expanse_last_error() -> *const c_char {
    // Nothing here can panic; caught all the same, as at every entry point.
    catch_unwind(|| LAST_ERROR.with(|e| e.borrow().as_ref().map_or(std::ptr::null(), |c| c.as_ptr())))
        .unwrap_or(std::ptr::null())
}

/// Call `observer` on every out-of-memory failure of the process-wide
/// allocator (starting it if needed), as PyTorch's
/// `attach_out_of_memory_observer` does. For Rust embedders of the
/// library; not part of the C ABI. A panicking observer is caught at the
/// ABI: the call that failed returns its error value and the device it ran
/// on serves nothing more ([`expanse_core::AllocError::Poisoned`]).
pub fn add_oom_observer(observer: expanse_core::OomObserver) -> Result<(), String> {
    with_global(Err(String::new()), |g| {
        g.allocator.add_oom_observer(observer);
        Ok(Ok(()))
    })
    .map_err(|_| expanse_last_error_string())
}

fn expanse_last_error_string() -> String {
    LAST_ERROR.with(|e| e.borrow().as_ref().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default())
}
