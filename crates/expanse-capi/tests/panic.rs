//! A panic inside an entry point stops at the ABI (issue 10): the call
//! returns its error value, `expanse_last_error` names the panic, and the
//! device it interrupted reports itself unusable instead of serving from
//! half-updated state. One test in its own process: it owns the global.

use std::ffi::CStr;
use std::sync::Arc;

use expanse::{expanse_alloc, expanse_free, expanse_last_error, expanse_memory_stats_json, expanse_reset_peak_stats};

fn last_error() -> String {
    let p = expanse_last_error();
    assert!(!p.is_null(), "no error message was set");
    // SAFETY: a non-null result is a NUL-terminated string owned by this
    // thread, valid until its next expanse call.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[test]
fn a_panicking_observer_is_caught_and_the_device_reports_itself_unusable() {
    // SAFETY: this binary runs this one test; no other thread reads the
    // environment yet.
    unsafe {
        std::env::set_var("EXPANSE_BACKEND", "host");
        std::env::set_var("EXPANSE_HOST_MEMORY", (64u64 << 20).to_string());
    }
    // SAFETY: null is the default stream.
    let p = unsafe { expanse_alloc(1 << 20, 0, std::ptr::null_mut()) };
    assert!(!p.is_null(), "{}", last_error());
    expanse::add_oom_observer(Arc::new(|info| panic!("observer exploded at {} bytes", info.alloc_size))).unwrap();

    // 1 GiB on a 64 MiB device: out of memory, the observer panics while
    // the device's lock is held.
    // SAFETY: as above.
    let q = unsafe { expanse_alloc(1 << 30, 0, std::ptr::null_mut()) };
    assert!(q.is_null());
    let e = last_error();
    assert!(e.contains("panic caught at the ABI") && e.contains("observer exploded"), "{e}");

    // Every later call on that device is an error that says why.
    // SAFETY: as above.
    let r = unsafe { expanse_alloc(1 << 20, 0, std::ptr::null_mut()) };
    assert!(r.is_null());
    assert!(last_error().contains("unusable: a panic interrupted an earlier call"), "{}", last_error());
    assert_eq!(expanse_reset_peak_stats(0), -1);
    assert!(last_error().contains("unusable"), "{}", last_error());
    // SAFETY: a null buffer is allowed (length query).
    assert_eq!(unsafe { expanse_memory_stats_json(0, std::ptr::null_mut(), 0) }, 0);
    expanse_free(p, 0, 0, std::ptr::null_mut());
    assert!(last_error().contains("unusable"), "{}", last_error());
}
