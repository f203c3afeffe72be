//! An empty tensor's allocation through the C ABI: PyTorch's pluggable
//! allocator asks for 0 bytes where its own allocator allocates nothing
//! (45,474 times in one live run of asha_sweep_cifar,
//! `docs/gpu-results.md` 21, call 5). expanse returns null, allocates
//! nothing and reports no error; freeing null does nothing. One test in its
//! own process: it owns the global allocator.

use std::ffi::c_void;

use expanse::{expanse_alloc, expanse_free, expanse_last_error, expanse_memory_stats_json};

fn stat(key: &str) -> i64 {
    let mut buf = vec![0u8; 1 << 16];
    // SAFETY: `buf` holds `buf.len()` bytes.
    let n = unsafe { expanse_memory_stats_json(0, buf.as_mut_ptr().cast(), buf.len()) };
    let json = std::str::from_utf8(&buf[..n]).unwrap();
    let key = format!("\"{key}\":");
    let at = json.find(&key).unwrap_or_else(|| panic!("{key} missing")) + key.len();
    json[at..].split([',', '}']).next().unwrap().parse().unwrap()
}

#[test]
fn zero_bytes_allocate_nothing_and_free_as_null() {
    // A real allocation first, so that the allocator exists and the
    // statistics have a baseline.
    // SAFETY: a null stream is the default stream.
    let p = unsafe { expanse_alloc(4096, 0, std::ptr::null_mut()) };
    assert!(!p.is_null());
    let (allocs, allocated) = (stat("allocation.all.allocated"), stat("allocated_bytes.all.current"));
    assert_eq!(allocated, 4096);
    for _ in 0..1000 {
        // SAFETY: as above.
        let z = unsafe { expanse_alloc(0, 0, std::ptr::null_mut()) };
        assert!(z.is_null(), "an empty tensor gets no memory");
        assert!(expanse_last_error().is_null(), "and no error");
        expanse_free(z, 0, 0, std::ptr::null_mut());
        assert!(expanse_last_error().is_null());
    }
    assert_eq!(stat("allocation.all.allocated"), allocs, "no allocation counted");
    assert_eq!(stat("allocated_bytes.all.current"), 4096);
    expanse_free(p.cast::<c_void>(), 4096, 0, std::ptr::null_mut());
    assert!(expanse_last_error().is_null());
    assert_eq!(stat("allocated_bytes.all.current"), 0);
}
