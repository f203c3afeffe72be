//! The C ABI under threads (issue 12): eight threads allocate on streams of
//! their own, hand half of what they allocate to the next thread to free,
//! and one of them empties the cache now and then. Every allocation is
//! written with its owner's tag at both ends and checked when freed, so two
//! live allocations that overlap, or memory handed out twice, fail the
//! test. At the end nothing is allocated and no call failed. One test in
//! its own process: it owns the global allocator.

use std::ffi::{c_void, CStr};
use std::sync::mpsc;

use expanse::{expanse_alloc, expanse_empty_cache, expanse_free, expanse_last_error, expanse_memory_stats_json};

const THREADS: usize = 8;
const STEPS: usize = 1500;

fn last_error() -> String {
    let p = expanse_last_error();
    if p.is_null() {
        return "(no message)".into();
    }
    // SAFETY: a non-null result is a NUL-terminated string owned by this
    // thread, valid until its next expanse call.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// A live allocation: address, size, tag written at both ends.
#[derive(Clone, Copy)]
struct Live(usize, usize, u8);

// SAFETY (for the raw accesses below): every `Live` is an allocation of
// `size` bytes this process got from `expanse_alloc` on the host backend
// (real memory) and has not freed yet; one thread at a time holds it.
fn write_tags(l: Live) {
    let p = l.0 as *mut u8;
    // SAFETY: see above; both offsets are inside the allocation.
    unsafe {
        p.write(l.2);
        p.add(l.1 - 1).write(l.2);
    }
}

fn check_and_free(l: Live) {
    let p = l.0 as *mut u8;
    // SAFETY: see above.
    let (first, last) = unsafe { (p.read(), p.add(l.1 - 1).read()) };
    assert_eq!((first, last), (l.2, l.2), "allocation {:#x} ({} B) was overwritten", l.0, l.1);
    expanse_free(p.cast::<c_void>(), l.1, 0, std::ptr::null_mut());
    assert!(expanse_last_error().is_null(), "free {:#x}: {}", l.0, last_error());
}

fn allocated_bytes() -> i64 {
    let mut buf = vec![0u8; 1 << 16];
    // SAFETY: `buf` holds `buf.len()` bytes.
    let n = unsafe { expanse_memory_stats_json(0, buf.as_mut_ptr().cast(), buf.len()) };
    let json = std::str::from_utf8(&buf[..n]).unwrap();
    let key = "\"allocated_bytes.all.current\":";
    let at = json.find(key).expect("stat present") + key.len();
    json[at..].split([',', '}']).next().unwrap().parse().unwrap()
}

#[test]
fn threads_allocate_free_across_threads_and_empty_the_cache() {
    // SAFETY: this binary runs this one test; no other thread reads the
    // environment yet.
    unsafe {
        std::env::set_var("EXPANSE_BACKEND", "host");
        std::env::set_var("EXPANSE_HOST_MEMORY", (4u64 << 30).to_string());
    }
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..THREADS).map(|_| mpsc::channel::<Live>()).unzip();
    let handles: Vec<_> = receivers
        .into_iter()
        .enumerate()
        .map(|(t, inbox)| {
            let next = senders[(t + 1) % THREADS].clone();
            std::thread::spawn(move || {
                // Host streams are opaque ids: thread t allocates on stream t + 1.
                let stream = (t + 1) as *mut c_void;
                let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ t as u64;
                let mut mine: Vec<Live> = Vec::new();
                for step in 0..STEPS {
                    rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let r = rng >> 33;
                    let size = ((r as usize % (3 << 20)) >> (r % 9)).max(1);
                    // SAFETY: a host stream id is opaque to the backend.
                    let p = unsafe { expanse_alloc(size, 0, stream) };
                    assert!(!p.is_null(), "thread {t}: alloc {size}: {}", last_error());
                    let l = Live(p as usize, size, (t as u8) << 4 | (step % 16) as u8);
                    write_tags(l);
                    if r.is_multiple_of(2) {
                        next.send(l).unwrap();
                    } else {
                        mine.push(l);
                    }
                    while let Ok(l) = inbox.try_recv() {
                        check_and_free(l);
                    }
                    if mine.len() > 32 {
                        check_and_free(mine.swap_remove(r as usize % mine.len()));
                    }
                    if t == 0 && step.is_multiple_of(100) {
                        expanse_empty_cache();
                        assert!(expanse_last_error().is_null(), "empty_cache: {}", last_error());
                    }
                }
                mine.into_iter().for_each(check_and_free);
                drop(next);
                inbox
            })
        })
        .collect();
    drop(senders);
    // Every thread finished allocating; free what is still in flight.
    let inboxes: Vec<_> = handles.into_iter().map(|h| h.join().expect("worker thread")).collect();
    for inbox in inboxes {
        inbox.into_iter().for_each(check_and_free);
    }
    assert_eq!(allocated_bytes(), 0, "every allocation was freed");
    expanse_empty_cache();
}
