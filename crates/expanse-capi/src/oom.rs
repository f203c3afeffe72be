//! Out-of-memory observers through the C ABI: `expanse_attach_oom_observer`
//! (what PyTorch's `torch._C._cuda_attach_out_of_memory_observer` reaches
//! through `python/expanse_compat.py`).

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use super::with_global;

/// An out-of-memory observer: device, bytes the request needed, memory the
/// process may use (memory fraction applied, else the device's total),
/// the device's free memory, and the `user` pointer given with it.
pub type OomObserverFn = unsafe extern "C" fn(c_int, usize, usize, usize, *mut c_void);

/// The caller's pointer, handed back to its observer.
#[derive(Clone, Copy)]
struct User(*mut c_void);

impl User {
    /// The pointer (a method, so that closures capture the whole `User`).
    fn get(self) -> *mut c_void {
        self.0
    }
}

// SAFETY: expanse never dereferences the pointer; it only passes it back to
// the observer, and `expanse_attach_oom_observer`'s caller promised that
// the observer may be called with it from any thread.
unsafe impl Send for User {}
// SAFETY: as above; expanse shares the pointer value, never what it points to.
unsafe impl Sync for User {}

/// Call `observer(device, alloc_size, allowed, device_free, user)` on every
/// out-of-memory failure of any device, after the failing allocation
/// released the allocator's lock (so the observer may call expanse, e.g.
/// `expanse_dump_snapshot`) and before that allocation returns null.
/// Observers are never removed. Returns 0, or -1 on error (a null
/// observer).
///
/// # Safety
/// `observer` must be safe to call with `user` from any thread that
/// allocates, for as long as the process lives, and must not unwind.
#[no_mangle]
pub unsafe extern "C" fn expanse_attach_oom_observer(observer: Option<OomObserverFn>, user: *mut c_void) -> c_int {
    with_global(-1, |g| {
        let observer = observer.ok_or("attach_oom_observer: observer is null")?;
        let user = User(user);
        g.allocator.add_oom_observer(Arc::new(move |info| {
            let as_usize = |x: u64| usize::try_from(x).unwrap_or(usize::MAX);
            // SAFETY: the caller of `expanse_attach_oom_observer` promised
            // that `observer` may be called with `user` from any thread.
            unsafe {
                observer(
                    info.device as c_int,
                    as_usize(info.alloc_size),
                    as_usize(info.allowed),
                    as_usize(info.device_free),
                    user.get(),
                )
            }
        }));
        Ok(0)
    })
}
