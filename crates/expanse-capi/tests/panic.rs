//! A panic inside an entry point stops at the ABI (issue 10): the call
//! returns its error value and `expanse_last_error` names the panic. An
//! out-of-memory observer runs after the allocator's lock is released, so
//! one that panics leaves a whole state and the device keeps serving; one
//! attached through the C ABI may call expanse back. One test in its own
//! process: it owns the global.

use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use expanse::{
    expanse_alloc, expanse_attach_oom_observer, expanse_free, expanse_last_error, expanse_memory_stats_json,
    expanse_reset_peak_stats,
};

fn last_error() -> String {
    let p = expanse_last_error();
    assert!(!p.is_null(), "no error message was set");
    // SAFETY: a non-null result is a NUL-terminated string owned by this
    // thread, valid until its next expanse call.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Bytes the last failed request needed, as the C observer saw them.
static SEEN: AtomicUsize = AtomicUsize::new(0);

/// A C observer that calls expanse back (the statistics), as a snapshot
/// on out-of-memory would; `user` points to `SEEN`.
unsafe extern "C" fn c_observer(device: c_int, alloc_size: usize, _allowed: usize, _free: usize, user: *mut c_void) {
    // SAFETY: a null buffer asks for the length only.
    let n = unsafe { expanse_memory_stats_json(device, std::ptr::null_mut(), 0) };
    assert!(n > 0);
    // SAFETY: `user` is &SEEN, a static.
    unsafe { &*(user as *const AtomicUsize) }.store(alloc_size, Ordering::SeqCst);
}

#[test]
fn a_panicking_observer_is_caught_and_the_device_keeps_serving() {
    // SAFETY: this binary runs this one test; no other thread reads the
    // environment yet.
    unsafe {
        std::env::set_var("EXPANSE_BACKEND", "host");
        std::env::set_var("EXPANSE_HOST_MEMORY", (64u64 << 20).to_string());
    }
    // SAFETY: null is the default stream.
    let p = unsafe { expanse_alloc(1 << 20, 0, std::ptr::null_mut()) };
    assert!(!p.is_null(), "{}", last_error());
    // SAFETY: c_observer may run on any thread; SEEN is a static.
    let attached = unsafe { expanse_attach_oom_observer(Some(c_observer), &SEEN as *const AtomicUsize as *mut c_void) };
    assert_eq!(attached, 0, "{}", last_error());
    // SAFETY: a null observer is refused, not called.
    assert_eq!(unsafe { expanse_attach_oom_observer(None, std::ptr::null_mut()) }, -1);
    assert!(last_error().contains("observer is null"), "{}", last_error());
    expanse::add_oom_observer(Arc::new(|info| panic!("observer exploded at {} bytes", info.alloc_size))).unwrap();

    // 1 GiB on a 64 MiB device: out of memory; the C observer calls
    // expanse back (no deadlock), then the Rust one panics.
    // SAFETY: as above.
    let q = unsafe { expanse_alloc(1 << 30, 0, std::ptr::null_mut()) };
    assert!(q.is_null());
    let e = last_error();
    assert!(e.contains("panic caught at the ABI") && e.contains("observer exploded"), "{e}");
    assert_eq!(SEEN.load(Ordering::SeqCst), 1 << 30);

    // The observers ran after the lock was released, on a whole state:
    // the device keeps serving.
    // SAFETY: as above.
    let r = unsafe { expanse_alloc(1 << 20, 0, std::ptr::null_mut()) };
    assert!(!r.is_null(), "{}", last_error());
    assert_eq!(expanse_reset_peak_stats(0), 0, "{}", last_error());
    expanse_free(r, 0, 0, std::ptr::null_mut());
    expanse_free(p, 0, 0, std::ptr::null_mut());
}
