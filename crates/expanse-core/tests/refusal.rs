//! The out-of-memory path remembers its fruitless searches (a growth the
//! device refused outright, a request no other stream's block could
//! serve) only while nothing changes: any change is seen by the next
//! request, which decides as if nothing had been remembered.

use std::sync::Arc;

use expanse_core::{AllocError, Config, DeviceAllocator, StreamId};
use expanse_device::Device;
use expanse_mock::{Call, MockDevice};

const MIB: u64 = 1 << 20;

fn allocator(capacity: u64) -> (Arc<MockDevice>, DeviceAllocator) {
    let d = Arc::new(MockDevice::new(capacity, 2 * MIB));
    let a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, Config::default());
    (d, a)
}

fn is_oom<T: std::fmt::Debug>(r: Result<T, AllocError>) -> bool {
    matches!(r, Err(AllocError::OutOfMemory { .. }))
}

/// Repeated failures of the same request ask the device for the missing
/// bytes once per growth attempt, as the first failure did, and change
/// nothing else. 64 MiB device, 40 MiB live, 40 MiB asked three times.
#[test]
fn a_repeated_failure_asks_the_device_again() {
    let (d, mut a) = allocator(64 * MIB);
    let s = StreamId(0);
    let live = a.malloc(40 * MIB, s).unwrap();
    for round in 1..=3u64 {
        let creates = d.calls(Call::CreatePage);
        assert!(is_oom(a.malloc(40 * MIB, s)));
        assert_eq!(d.calls(Call::CreatePage) - creates, 2, "round {round}: one refused request per attempt");
        assert_eq!((a.stats().num_ooms, a.stats().num_alloc_retries), (round, round));
        a.check_invariants().unwrap();
    }
    a.free(live).unwrap();
}

/// A refused growth is not remembered past a free: 64 MiB device, two
/// 20 MiB tensors, 30 MiB asked (24 MiB free: refused). Once the first
/// tensor is freed, 30 MiB fits by moving its ten 2 MiB pages (the free
/// memory bounds new pages to 2 MiB here), at the first attempt: no cache
/// release, no retry.
#[test]
fn a_refused_growth_is_forgotten_once_a_block_is_freed() {
    let (_d, mut a) = allocator(64 * MIB);
    let s = StreamId(0);
    let t1 = a.malloc(20 * MIB, s).unwrap();
    let t2 = a.malloc(20 * MIB, s).unwrap();
    assert!(is_oom(a.malloc(30 * MIB, s)));
    assert!(is_oom(a.malloc(30 * MIB, s)));
    let retries = a.stats().num_alloc_retries;
    a.free(t1).unwrap();
    let t3 = a.malloc(30 * MIB, s).expect("the freed tensor's pages move");
    assert_eq!(a.stats().pages.moved, 10);
    assert_eq!(a.stats().num_alloc_retries, retries, "served at the first attempt");
    a.check_invariants().unwrap();
    a.free(t2).unwrap();
    a.free(t3).unwrap();
}

/// A request no other stream could serve is searched again once another
/// stream frees a block: 64 MiB device; stream 0 holds 20 MiB, stream 1
/// two 20 MiB tensors; 16 MiB on stream 0 fails (4 MiB free). Once
/// stream 1 frees one, stream 0's 16 MiB is lent its block: no page moves.
#[test]
fn a_fruitless_lend_is_forgotten_once_another_stream_frees() {
    let (d, mut a) = allocator(64 * MIB);
    let s1 = d.create_stream().unwrap();
    let s0 = StreamId(0);
    let t0 = a.malloc(20 * MIB, s0).unwrap();
    let b = a.malloc(20 * MIB, s1).unwrap();
    let c = a.malloc(20 * MIB, s1).unwrap();
    assert!(is_oom(a.malloc(16 * MIB, s0)));
    assert!(is_oom(a.malloc(16 * MIB, s0)));
    a.free(b).unwrap();
    let (moved, created) = (a.stats().pages.moved, a.stats().pages.created);
    let lent = a.malloc(16 * MIB, s0).expect("stream 1's free block is lent");
    assert_eq!((a.stats().pages.moved, a.stats().pages.created), (moved, created), "lent, not grown");
    a.check_invariants().unwrap();
    for p in [t0, c, lent] {
        a.free(p).unwrap();
    }
    drop(a);
    d.destroy_stream(s1).unwrap();
}
