//! The backend conformance suite: one set of checks that every device
//! backend (mock, host, CUDA, Level Zero) must pass.
//!
//! A backend's test file instantiates the whole suite with
//! [`conformance_tests!`], giving an expression that builds a fresh device
//! (small capacity is best: one check exhausts it). Each check is also a
//! plain function, so a GPU harness can call [`run_all`] and print results.
#![forbid(unsafe_code)]

use expanse_device::{Device, DeviceError, PageHandle, StreamId};

/// Result of one check: `Err` says what did not conform.
pub type Check = Result<(), String>;

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

fn ok<T>(r: Result<T, DeviceError>, what: &str) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| seed.wrapping_add((i % 251) as u8).wrapping_mul(31)).collect()
}

/// Map `page` at `addr` and give this device access.
fn map_rw(d: &dyn Device, addr: u64, page: PageHandle, size: u64) -> Check {
    ok(d.map(addr, page), "map")?;
    ok(d.set_access(addr, size, &[d.ordinal()]), "set_access")
}

/// `reserve` returns granularity-aligned ranges and they can be released.
pub fn reserve_is_aligned(d: &dyn Device) -> Check {
    ensure!(d.supports_virtual_memory(), "backend reports no virtual memory");
    let g = d.granularity();
    ensure!(g > 0 && g.is_power_of_two(), "granularity {g} is not a power of two");
    let mut bases = Vec::new();
    for n in [1u64, 3, 16] {
        let base = ok(d.reserve(n * g), "reserve")?;
        ensure!(base.is_multiple_of(g), "reservation {base:#x} not aligned to {g}");
        ensure!(base != 0, "reservation at address 0");
        bases.push((base, n * g));
    }
    for w in bases.windows(2) {
        let (a, asz) = w[0];
        let (b, bsz) = w[1];
        ensure!(a + asz <= b || b + bsz <= a, "reservations overlap");
    }
    for (b, s) in bases {
        ok(d.release_reservation(b, s), "release_reservation")?;
    }
    Ok(())
}

/// reserve / create / map / access / write / read / unmap / release cycles.
pub fn map_write_read_cycle(d: &dyn Device) -> Check {
    let g = d.granularity();
    let base = ok(d.reserve(4 * g), "reserve")?;
    for round in 0..3u8 {
        let page = ok(d.create_page(2 * g), "create_page")?;
        let addr = base + u64::from(round % 2) * g;
        map_rw(d, addr, page, 2 * g)?;
        let data = pattern(round, 8192);
        // Write at both ends of the page.
        ok(d.write(addr, &data), "write start")?;
        ok(d.write(addr + 2 * g - 8192, &data), "write end")?;
        let mut back = vec![0u8; 8192];
        ok(d.read(addr, &mut back), "read start")?;
        ensure!(back == data, "round {round}: read-back at start differs");
        ok(d.read(addr + 2 * g - 8192, &mut back), "read end")?;
        ensure!(back == data, "round {round}: read-back at end differs");
        ok(d.unmap(addr, 2 * g), "unmap")?;
        ok(d.release_page(page), "release_page")?;
    }
    ok(d.release_reservation(base, 4 * g), "release_reservation")
}

/// A write through one page, unmapped, then another page mapped at the same
/// address: the address shows the second page's contents, and the first
/// page keeps its own when mapped back.
pub fn remap_shows_other_page(d: &dyn Device) -> Check {
    let g = d.granularity();
    let base = ok(d.reserve(2 * g), "reserve")?;
    let a = ok(d.create_page(g), "create_page a")?;
    let b = ok(d.create_page(g), "create_page b")?;
    let pa = pattern(7, 4096);
    let pb = pattern(99, 4096);
    let mut back = vec![0u8; 4096];

    map_rw(d, base, a, g)?;
    ok(d.write(base, &pa), "write a")?;
    ok(d.unmap(base, g), "unmap a")?;

    map_rw(d, base, b, g)?;
    ok(d.read(base, &mut back), "read b")?;
    ensure!(back != pa, "page b shows page a's contents after remap");
    ok(d.write(base, &pb), "write b")?;
    ok(d.unmap(base, g), "unmap b")?;

    // Page a again, this time at the second address of the range.
    map_rw(d, base + g, a, g)?;
    ok(d.read(base + g, &mut back), "read a")?;
    ensure!(back == pa, "page a lost its contents across unmap/remap");
    ok(d.unmap(base + g, g), "unmap a again")?;

    map_rw(d, base, b, g)?;
    ok(d.read(base, &mut back), "read b again")?;
    ensure!(back == pb, "page b lost its contents across unmap/remap");
    ok(d.unmap(base, g), "unmap b again")?;

    ok(d.release_page(a), "release a")?;
    ok(d.release_page(b), "release b")?;
    ok(d.release_reservation(base, 2 * g), "release_reservation")
}

/// Several pages mapped side by side are unmapped by one call covering them.
pub fn unmap_covers_several_pages(d: &dyn Device) -> Check {
    let g = d.granularity();
    let base = ok(d.reserve(8 * g), "reserve")?;
    let pages: Vec<_> =
        (0..3).map(|_| d.create_page(g)).collect::<Result<_, _>>().map_err(|e| format!("create_page: {e}"))?;
    for (i, p) in pages.iter().enumerate() {
        ok(d.map(base + i as u64 * g, *p), "map")?;
    }
    ok(d.set_access(base, 3 * g, &[d.ordinal()]), "set_access over three pages")?;
    let data = pattern(3, 3 * 1024);
    // A write that crosses both page boundaries.
    let at = base + g - 1024;
    ok(d.write(at, &data[..2048]), "write across boundary")?;
    let mut back = vec![0u8; 2048];
    ok(d.read(at, &mut back), "read across boundary")?;
    ensure!(back == data[..2048], "cross-page read-back differs");
    ok(d.unmap(base, 3 * g), "unmap three pages")?;
    for p in pages {
        ok(d.release_page(p), "release_page")?;
    }
    ok(d.release_reservation(base, 8 * g), "release_reservation")
}

/// Misuse is refused as `Misuse` and changes nothing.
pub fn misuse_is_refused(d: &dyn Device) -> Check {
    let g = d.granularity();
    let base = ok(d.reserve(4 * g), "reserve")?;
    let page = ok(d.create_page(g), "create_page")?;
    let is_misuse = |r: Result<(), DeviceError>| matches!(r, Err(DeviceError::Misuse(_)));

    ensure!(is_misuse(d.map(base + 512, page)), "unaligned map was not refused as misuse");
    ensure!(is_misuse(d.map(base + 4 * g, page)), "map outside the reservation was not refused");
    ensure!(is_misuse(d.unmap(base, g)), "unmap of an unmapped range was not refused");
    map_rw(d, base, page, g)?;
    ensure!(is_misuse(d.map(base + g, page)), "mapping one page twice was not refused");
    let other = ok(d.create_page(g), "create_page")?;
    ensure!(is_misuse(d.map(base, other)), "mapping over a mapped address was not refused");
    ensure!(is_misuse(d.release_page(page)), "releasing a mapped page was not refused");
    ensure!(is_misuse(d.release_reservation(base, 4 * g)), "releasing a reservation with mappings was not refused");
    // The mapping is still intact after all the refused calls.
    let data = pattern(5, 512);
    ok(d.write(base, &data), "write after refused calls")?;
    let mut back = vec![0u8; 512];
    ok(d.read(base, &mut back), "read after refused calls")?;
    ensure!(back == data, "mapping damaged by refused calls");
    ok(d.unmap(base, g), "unmap")?;
    ok(d.release_page(page), "release_page")?;
    ok(d.release_page(other), "release_page other")?;
    ensure!(is_misuse(d.release_page(page)), "double release was not refused");
    ok(d.release_reservation(base, 4 * g), "release_reservation")
}

/// Creating pages past capacity is out-of-memory, and releasing one makes
/// room again.
pub fn capacity_exhaustion_is_out_of_memory(d: &dyn Device) -> Check {
    let g = d.granularity();
    let total = d.total_memory();
    // Pages of 1/8 of the device keep the loop short on large devices.
    let size = ((total / 8) / g).max(1) * g;
    let mut pages = Vec::new();
    let result = loop {
        match d.create_page(size) {
            Ok(p) => pages.push(p),
            Err(e) => break e,
        }
        if pages.len() > 64 {
            break DeviceError::Driver { call: "test", code: 0 };
        }
    };
    let oom = result.is_out_of_memory();
    let created = pages.len();
    let retry = if let Some(p) = pages.pop() {
        ok(d.release_page(p), "release_page")?;
        d.create_page(size)
    } else {
        Err(DeviceError::Driver { call: "test", code: 0 })
    };
    if let Ok(p) = &retry {
        pages.push(*p);
    }
    for p in pages {
        ok(d.release_page(p), "release_page")?;
    }
    ensure!(oom, "exhausting capacity gave {result:?}, not out-of-memory");
    ensure!(created >= 1, "no page of 1/8 of the device could be created");
    ensure!(retry.is_ok(), "after releasing a page a new one could not be created: {retry:?}");
    // Classic malloc too.
    let big = d.malloc(total.saturating_mul(2));
    ensure!(matches!(big, Err(DeviceError::OutOfMemory { .. })), "malloc of twice the device was {big:?}");
    Ok(())
}

/// A failed map (into an occupied range) leaves what was mapped unchanged
/// and leaves the new page unmapped and releasable.
pub fn failed_map_leaves_nothing_mapped(d: &dyn Device) -> Check {
    let g = d.granularity();
    let base = ok(d.reserve(4 * g), "reserve")?;
    let a = ok(d.create_page(2 * g), "create a")?;
    let b = ok(d.create_page(2 * g), "create b")?;
    map_rw(d, base + g, a, 2 * g)?;
    // b would overlap a's second half.
    ensure!(d.map(base, b).is_err(), "overlapping map succeeded");
    // b is not mapped anywhere: it can be released, and base is unmapped.
    ensure!(d.unmap(base, g).is_err(), "failed map left something mapped at its address");
    ok(d.release_page(b), "release b after failed map")?;
    ok(d.unmap(base + g, 2 * g), "unmap a")?;
    ok(d.release_page(a), "release a")?;
    ok(d.release_reservation(base, 4 * g), "release_reservation")
}

/// Classic malloc'd memory is usable and free gives it back.
pub fn malloc_free_cycle(d: &dyn Device) -> Check {
    let before = d.free_memory();
    let p = ok(d.malloc(3 << 20), "malloc")?;
    ensure!(p != 0, "malloc returned 0");
    let data = pattern(11, 4096);
    ok(d.write(p + (3 << 20) - 4096, &data), "write")?;
    let mut back = vec![0u8; 4096];
    ok(d.read(p + (3 << 20) - 4096, &mut back), "read")?;
    ensure!(back == data, "malloc'd memory read-back differs");
    ensure!(d.free_memory() <= before, "free memory grew after malloc");
    ok(d.free(p), "free")?;
    ensure!(matches!(d.free(p), Err(DeviceError::Misuse(_))), "double free was not refused as misuse");
    Ok(())
}

/// Events recorded on a stream complete once the stream is synchronized.
pub fn events_complete_after_synchronize(d: &dyn Device) -> Check {
    let s = StreamId::DEFAULT;
    let e = ok(d.record_event(s), "record_event")?;
    ok(d.synchronize_stream(s), "synchronize_stream")?;
    ensure!(ok(d.query_event(e), "query_event")?, "event not complete after synchronizing its stream");
    // Another stream can be ordered after the event without a host wait.
    ok(d.wait_event(StreamId::DEFAULT, e), "wait_event")?;
    ok(d.release_event(e), "release_event")?;
    ok(d.synchronize(), "synchronize")
}

/// A released event is gone: using it again is misuse. Events go on being
/// recorded, waited on and released well past any pool a backend keeps of
/// released ones, each with a new id, and complete with their stream.
pub fn released_events_are_gone(d: &dyn Device) -> Check {
    let s = StreamId::DEFAULT;
    let first = ok(d.record_event(s), "record_event")?;
    ok(d.synchronize_stream(s), "synchronize_stream")?;
    ok(d.release_event(first), "release_event")?;
    ensure!(matches!(d.query_event(first), Err(DeviceError::Misuse(_))), "query of a released event was not misuse");
    ensure!(matches!(d.wait_event(s, first), Err(DeviceError::Misuse(_))), "wait on a released event was not misuse");
    ensure!(matches!(d.release_event(first), Err(DeviceError::Misuse(_))), "second release was not misuse");
    let other = ok(d.create_stream(), "create_stream")?;
    let mut ids = vec![first];
    for i in 0..200 {
        let (on, waiter) = if i % 2 == 0 { (other, s) } else { (s, other) };
        let e = ok(d.record_event(on), "record_event")?;
        ensure!(!ids.contains(&e), "record_event gave id {e:?} twice");
        ids.push(e);
        ok(d.wait_event(waiter, e), "wait_event")?;
        ok(d.release_event(e), "release_event")?;
    }
    let last = ok(d.record_event(other), "record_event")?;
    ok(d.synchronize_stream(other), "synchronize_stream")?;
    ensure!(ok(d.query_event(last), "query_event")?, "event not complete after synchronizing its stream");
    ok(d.release_event(last), "release_event")?;
    ok(d.destroy_stream(other), "destroy_stream")?;
    ok(d.synchronize(), "synchronize")
}

/// Streams made by `create_stream` take events and waits like the default
/// stream, are distinct from it and from each other, and can be destroyed.
pub fn created_streams_work(d: &dyn Device) -> Check {
    let streams: Vec<StreamId> =
        (0..4).map(|_| d.create_stream()).collect::<Result<_, _>>().map_err(|e| format!("create_stream: {e}"))?;
    let mut all = streams.clone();
    all.push(StreamId::DEFAULT);
    all.sort_unstable();
    all.dedup();
    ensure!(all.len() == 5, "created streams are not distinct from each other and the default: {streams:?}");
    for (i, s) in streams.iter().enumerate() {
        let e = ok(d.record_event(*s), "record_event on a created stream")?;
        // Each stream waits for the previous one's work, the first for the default stream's.
        let waiter = if i == 0 { StreamId::DEFAULT } else { streams[i - 1] };
        ok(d.wait_event(waiter, e), "wait_event")?;
        ok(d.synchronize_stream(*s), "synchronize_stream")?;
        ensure!(ok(d.query_event(e), "query_event")?, "event not complete after synchronizing its stream");
        ok(d.release_event(e), "release_event")?;
    }
    for s in streams {
        ok(d.destroy_stream(s), "destroy_stream")?;
    }
    ok(d.synchronize(), "synchronize")
}

/// A named check.
pub type NamedCheck = (&'static str, fn(&dyn Device) -> Check);

/// The suite's checks, named once: `CHECKS` and [`conformance_tests!`] are
/// both expanded from this list.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_checks {
    ($($head:tt)*) => {
        $crate::__expand_checks! { $($head)* [
            reserve_is_aligned, map_write_read_cycle, remap_shows_other_page,
            unmap_covers_several_pages, misuse_is_refused,
            capacity_exhaustion_is_out_of_memory, failed_map_leaves_nothing_mapped,
            malloc_free_cycle, events_complete_after_synchronize, released_events_are_gone,
            created_streams_work
        ] }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __expand_checks {
    (list [$($name:ident),*]) => {
        /// Every check, by name.
        pub const CHECKS: &[NamedCheck] = &[$((stringify!($name), $name)),*];
    };
    (tests $make:expr ; [$($name:ident),*]) => {
        $(
            #[test]
            fn $name() {
                let device = $make;
                if let Err(e) = $crate::$name(&device) {
                    panic!("{}: {}", stringify!($name), e);
                }
            }
        )*
    };
}

__with_checks!(list);

/// Run every check on fresh devices from `make`; returns (name, result).
pub fn run_all(make: &dyn Fn() -> Box<dyn Device>) -> Vec<(&'static str, Check)> {
    CHECKS.iter().map(|(name, f)| (*name, f(make().as_ref()))).collect()
}

/// Instantiate the suite as `#[test]` functions in the calling module, one
/// per check in [`CHECKS`].
///
/// ```ignore
/// expanse_conformance::conformance_tests!(MyDevice::new_small());
/// ```
#[macro_export]
macro_rules! conformance_tests {
    ($make:expr) => {
        $crate::__with_checks!(tests $make ;);
    };
}
