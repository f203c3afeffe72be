//! Reliability: driver failures at awkward moments, hostile configuration
//! and misuse leave the allocator consistent, with nothing lost.

use std::sync::Arc;

use expanse_core::{AllocError, Config, DeviceAllocator, StreamId};
use expanse_device::{Device, DeviceError};
use expanse_mock::{Call, MockDevice};

const MIB: u64 = 1 << 20;

fn modes() -> [(&'static str, Config); 3] {
    [
        ("classic", Config::parse("expandable_segments:False").unwrap()),
        ("expanse", Config::default()),
        ("pytorch_expandable", Config::pytorch_expandable()),
    ]
}

/// Issue 10, item 1: a failed wait while lending a block across streams
/// left the block out of its pool.
#[test]
fn failed_wait_during_cross_stream_reuse_loses_nothing() {
    for (name, config) in modes() {
        let d = Arc::new(MockDevice::new(1 << 30, 2 * MIB));
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, config);
        let p = a.malloc(2 * MIB, StreamId(0)).unwrap();
        a.free(p).unwrap();
        d.fail_nth(Call::WaitEvent, 1, DeviceError::Driver { call: "wait_event", code: 700 });
        let r = a.malloc(2 * MIB, StreamId(1));
        a.check_invariants().unwrap_or_else(|e| panic!("{name}: {e}"));
        let waits = d.calls(Call::WaitEvent);
        match r {
            Err(AllocError::Device(DeviceError::Driver { code: 700, .. })) => assert_eq!(waits, 1, "{name}"),
            Ok(q) => {
                // No cross-stream reuse in this mode: no wait was asked.
                assert_eq!(waits, 0, "{name}");
                a.free(q).unwrap();
            }
            Err(e) => panic!("{name}: {e}"),
        }
        // The next allocation works and the cached block is still there.
        let q = a.malloc(2 * MIB, StreamId(1)).unwrap();
        a.free(q).unwrap();
        a.check_invariants().unwrap();
        a.empty_cache().unwrap();
        assert_eq!(d.used(), 0, "{name}");
        assert!(d.violations().is_empty(), "{name}: {:?}", d.violations());
    }
}

/// Issue 10, item 3: an address space too small for another segment is
/// an honest error naming it (never a false out-of-memory), freeing makes
/// room again, and nothing leaks.
#[test]
fn exhausted_address_space_is_an_honest_error() {
    for (name, config) in modes().into_iter().skip(1) {
        // 16 GiB device, 512 MiB of address space: every stream's 2 MiB
        // fits the device, not the address space.
        let d = Arc::new(MockDevice::new(16 << 30, 2 * MIB).with_address_space(512 * MIB));
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, config);
        let mut live = Vec::new();
        let mut err = None;
        for s in 0..1000 {
            match a.malloc(2 * MIB, StreamId(s)) {
                Ok(p) => live.push(p),
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
            a.check_invariants().unwrap();
        }
        let e = err.unwrap_or_else(|| panic!("{name}: 1000 streams fit in 512 MiB of address space"));
        assert!(matches!(e, AllocError::AddressSpace { .. }), "{name}: {e}");
        assert!(e.to_string().contains("address space exhausted"), "{e}");
        // Not one full-size (18 GiB) segment fits; segments of one page
        // do: 2 MiB pages (expanse) or 20 MiB ones (PyTorch) in 512 MiB.
        assert_eq!(live.len(), if name == "expanse" { 256 } else { 25 }, "{name}");
        assert_eq!(a.stats().num_ooms, 0, "{name}: counted as out of memory");
        for p in live.drain(..) {
            a.free(p).unwrap();
        }
        a.empty_cache().unwrap();
        let p = a.malloc(2 * MIB, StreamId(5000)).unwrap();
        a.free(p).unwrap();
        a.check_invariants().unwrap();
    }
}

/// Issue 10, item 4: configuration values that overflowed or could never
/// work are refused with a message naming them, or work.
#[test]
fn extreme_configuration_is_refused_or_works() {
    use expanse_core::ConfigError;
    // Any power of two is a valid division count (as in PyTorch); the
    // largest must round like no divisions at all, not overflow.
    let c = Config::parse("roundup_power2_divisions:9223372036854775808").unwrap();
    let d = Arc::new(MockDevice::new(1 << 30, 2 * MIB));
    let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, c);
    let p = a.malloc(3 * MIB + 1, StreamId(0)).unwrap();
    assert_eq!(a.allocation_size(p), Some(3 * MIB + 512));
    a.free(p).unwrap();
    drop(a);
    // min_grow above max_page: refused, naming both keys.
    let e = Config::parse("min_grow_size_mb:64,max_page_size_mb:40").unwrap_err();
    assert!(matches!(e, ConfigError::Conflict { .. }), "{e}");
    assert!(e.to_string().contains("min_grow_size_mb") && e.to_string().contains("max_page_size_mb"), "{e}");
    assert!(Config::parse("min_grow_size_mb:64,max_page_size_mb:64").is_ok());
    // A page larger than the device, or not a multiple of its granularity.
    let c = Config::parse("large_page_size_mb:1048576").unwrap();
    let e = c.check_device(143771 * MIB, 2 * MIB).unwrap_err();
    assert!(e.to_string().contains("large_page_size_mb (1048576 MiB) is larger than the device"), "{e}");
    let e = Config::parse("small_page_size_mb:2").unwrap().check_device(1 << 40, 4 * MIB).unwrap_err();
    assert!(e.to_string().contains("granularity"), "{e}");
    assert!(Config::default().check_device(143771 * MIB, 2 * MIB).is_ok());
    // Classic segments use no pages: nothing to refuse.
    assert!(Config::parse("expandable_segments:False,large_page_size_mb:1048576")
        .unwrap()
        .check_device(1 << 30, 2 * MIB)
        .is_ok());
}

/// Issue 10, item 6: a panic inside the lock made `CachingAllocator::lock`
/// hand the half-done state to every later caller; now each gets
/// `Poisoned`, and other devices work.
#[test]
fn a_poisoned_device_is_an_error_to_every_later_caller() {
    use expanse_core::CachingAllocator;
    let d0: Arc<dyn Device> = Arc::new(MockDevice::new(64 * MIB, 2 * MIB).without_leak_check());
    let d1: Arc<dyn Device> = Arc::new(MockDevice::new(64 * MIB, 2 * MIB).with_ordinal(1));
    let c = CachingAllocator::new(vec![d0, d1], Config::default());
    let kept = c.malloc(0, 2 * MIB, StreamId(0)).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut a = c.lock(0).unwrap();
        let _ = a.malloc(MIB, StreamId(0));
        panic!("a bug while device 0 is locked");
    }));
    assert!(r.is_err());
    for r in [c.malloc(0, MIB, StreamId(0)).map(|_| ()), c.free(0, kept), c.empty_cache(), c.free_any(kept)] {
        assert_eq!(r, Err(AllocError::Poisoned { device: 0 }));
    }
    assert!(c.lock(0).unwrap_err().to_string().contains("panic"));
    let p = c.malloc(1, MIB, StreamId(0)).unwrap();
    c.free(1, p).unwrap();
}

/// Out-of-memory observers run after the device's lock is released, as
/// PyTorch's do: one that calls the allocator back (stats, a snapshot, a
/// free) does not deadlock, and one that panics leaves the device usable.
#[test]
fn oom_observers_run_outside_the_lock() {
    use std::sync::Mutex;

    use expanse_core::CachingAllocator;
    let d: Arc<dyn Device> = Arc::new(MockDevice::new(64 * MIB, 2 * MIB));
    let c = Arc::new(CachingAllocator::new(vec![d], Config::default()));
    let kept = c.malloc(0, 8 * MIB, StreamId(0)).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (c2, seen2) = (Arc::downgrade(&c), Arc::clone(&seen));
    c.add_oom_observer(Arc::new(move |info| {
        let c = c2.upgrade().unwrap();
        let stats = c.stats(info.device).unwrap();
        let segments = c.snapshot().unwrap().segments.len();
        seen2.lock().unwrap().push((info.alloc_size, stats.num_ooms, segments));
    }));
    assert!(matches!(c.malloc(0, 1 << 40, StreamId(0)), Err(AllocError::OutOfMemory { .. })));
    // The observer saw the failure counted, and the state it failed in.
    assert_eq!(*seen.lock().unwrap(), vec![(1 << 40, 1, 1)]);

    c.add_oom_observer(Arc::new(|_| panic!("observer bug")));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.malloc(0, 1 << 40, StreamId(0))));
    assert!(r.is_err(), "the observer's panic reaches the caller");
    assert_eq!(seen.lock().unwrap().len(), 2, "the first observer ran before the second panicked");
    // The state was whole when the observers ran: the device still serves.
    let p = c.malloc(0, MIB, StreamId(0)).unwrap();
    c.free(0, p).unwrap();
    c.free(0, kept).unwrap();
    assert_eq!(c.stats(0).unwrap().num_ooms, 2);
}

/// The same under threads: four threads run out of memory over and over
/// while observers on each failure take the device's lock again (a
/// snapshot): every failure is told once, and nothing deadlocks.
#[test]
fn oom_observers_under_threads_see_every_failure_once() {
    use std::sync::atomic::{AtomicU64, Ordering};

    use expanse_core::CachingAllocator;
    let d: Arc<dyn Device> = Arc::new(MockDevice::new(256 * MIB, 2 * MIB));
    let c = Arc::new(CachingAllocator::new(vec![d], Config::default()));
    let told = Arc::new(AtomicU64::new(0));
    let (weak, t2) = (Arc::downgrade(&c), Arc::clone(&told));
    c.add_oom_observer(Arc::new(move |_| {
        let c = weak.upgrade().unwrap();
        c.snapshot().unwrap();
        t2.fetch_add(1, Ordering::SeqCst);
    }));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let mut failed = 0u64;
                for i in 0..200u64 {
                    let p = c.malloc(0, (1 + (i + t) % 7) * MIB, StreamId(t)).unwrap();
                    failed += u64::from(c.malloc(0, 1 << 40, StreamId(t)).is_err());
                    c.free(0, p).unwrap();
                }
                failed
            })
        })
        .collect();
    let failed: u64 = threads.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(failed, 800);
    assert_eq!(told.load(Ordering::SeqCst), 800);
    assert_eq!(c.stats(0).unwrap().num_ooms, 800);
}
