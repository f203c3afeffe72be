//! Private pools (CUDA graph memory) on the host backend: allocations made
//! while a stream allocates to a pool are isolated from everyone else's,
//! the pool's freed blocks are reused only by the pool while it lives, and
//! releasing the pool returns its memory to the shared cache. Invariants
//! are checked after every step. The expected figures come from PyTorch's
//! rules, not from the code: a 4 MiB request gets a new 20 MiB classic
//! segment (`kLargeBuffer`), a 100 KiB one a 2 MiB segment (`kSmallBuffer`).

use std::sync::Arc;

use expanse_core::{AllocError, Config, DeviceAllocator, PoolId, StreamId};
use expanse_device::Device;

const MIB: u64 = 1 << 20;
const S0: StreamId = StreamId(0);
const S1: StreamId = StreamId(1);
const GRAPH: PoolId = PoolId(1, 0);

fn allocator(conf: &str) -> DeviceAllocator {
    let host = Arc::new(expanse_host::HostDevice::with_capacity(1 << 30, 2 * MIB).unwrap());
    DeviceAllocator::new(host as Arc<dyn Device>, Config::parse(conf).unwrap())
}

/// Every mode: expanse's default, classic segments, PyTorch's expandable.
const MODES: [&str; 3] = ["", "expandable_segments:False", "expandable_segments:True,pytorch_compat:True"];

/// An allocator with `conf` on a strict mock device of `capacity` bytes
/// (2 MiB pages), and the device, to count its calls.
fn on_mock(capacity: u64, conf: &str) -> (Arc<expanse_mock::MockDevice>, DeviceAllocator) {
    let mock = Arc::new(expanse_mock::MockDevice::new(capacity, 2 * MIB));
    let a = DeviceAllocator::new(Arc::clone(&mock) as Arc<dyn Device>, Config::parse(conf).unwrap());
    (mock, a)
}

fn ok(a: &DeviceAllocator) {
    a.check_invariants().unwrap();
}

#[test]
fn capture_time_allocations_come_from_new_private_segments() {
    for conf in MODES {
        let mut a = allocator(conf);
        // A cached 4 MiB block of S1 in the shared pool: outside a capture
        // it would be reused.
        let shared = a.malloc(4 * MIB, S1).unwrap();
        a.free(shared).unwrap();
        ok(&a);
        let before = a.reserved_bytes();
        a.begin_allocate_to_pool(GRAPH, S1).unwrap();
        let g = a.malloc(4 * MIB, S1).unwrap();
        ok(&a);
        assert_ne!(g, shared, "{conf}: a capture allocation reused a shared block");
        assert_eq!(a.reserved_bytes(), before + 20 * MIB, "{conf}: one new 20 MiB private segment");
        let small = a.malloc(100 << 10, S1).unwrap();
        assert_eq!(a.reserved_bytes(), before + 22 * MIB, "{conf}: one new 2 MiB private segment");
        // Another stream, not routed, still uses the shared cache.
        let other = a.malloc(4 * MIB, S0).unwrap();
        assert!(!(g..g + 20 * MIB).contains(&other), "{conf}: S0 got private memory");
        ok(&a);
        a.end_allocate_to_pool(GRAPH).unwrap();
        // After the capture, S1 is served from the shared memory again (its
        // cached block, or the one S0 lent it, in expanse's mode), never
        // from the graph's.
        let after = a.malloc(4 * MIB, S1).unwrap();
        assert!(!(g..g + 20 * MIB).contains(&after), "{conf}: S1 got private memory after the capture");
        assert_ne!(after, other);
        for p in [g, small, other, after] {
            a.free(p).unwrap();
            ok(&a);
        }
    }
}

#[test]
fn freed_blocks_of_a_live_pool_are_reused_only_by_the_pool() {
    for conf in MODES {
        let mut a = allocator(conf);
        a.begin_allocate_to_pool(GRAPH, S1).unwrap();
        let g = a.malloc(4 * MIB, S1).unwrap();
        a.free(g).unwrap();
        ok(&a);
        // Within the capture, the pool reuses its own freed block.
        let again = a.malloc(4 * MIB, S1).unwrap();
        assert_eq!(again, g, "{conf}: the pool reuses its block");
        a.free(again).unwrap();
        a.end_allocate_to_pool(GRAPH).unwrap();
        ok(&a);
        let reserved = a.reserved_bytes();
        // Nobody else gets it: neither stream, any size, nor after empty_cache.
        let mut live = Vec::new();
        for (size, s) in [(4 * MIB, S1), (4 * MIB, S0), (MIB + 512, S1), (16 * MIB, S0)] {
            let p = a.malloc(size, s).unwrap();
            assert!(!(g..g + 20 * MIB).contains(&p), "{conf}: {size} B on {s:?} got the graph's memory");
            live.push(p);
            ok(&a);
        }
        for p in live {
            a.free(p).unwrap();
        }
        a.empty_cache().unwrap();
        ok(&a);
        assert_eq!(a.reserved_bytes(), 20 * MIB, "{conf}: empty_cache kept exactly the graph's segment");
        assert!(reserved >= 20 * MIB);
        // A second capture into the same pool reuses the pool's memory.
        a.begin_allocate_to_pool(GRAPH, S1).unwrap();
        let replay = a.malloc(4 * MIB, S1).unwrap();
        assert_eq!(replay, g, "{conf}: the pool's own capture reuses its block");
        a.free(replay).unwrap();
        a.end_allocate_to_pool(GRAPH).unwrap();
        ok(&a);
    }
}

#[test]
fn releasing_the_pool_returns_its_memory_to_the_cache() {
    for conf in MODES {
        let mut a = allocator(conf);
        // Two uses (two captures sharing the pool), as in PyTorch.
        a.begin_allocate_to_pool(GRAPH, S1).unwrap();
        let g = a.malloc(4 * MIB, S1).unwrap();
        let kept = a.malloc(100 << 10, S1).unwrap();
        a.end_allocate_to_pool(GRAPH).unwrap();
        a.begin_allocate_to_pool(GRAPH, S1).unwrap();
        a.end_allocate_to_pool(GRAPH).unwrap();
        a.free(g).unwrap();
        ok(&a);
        a.release_pool(GRAPH).unwrap();
        let shared = a.malloc(4 * MIB, S1).unwrap();
        assert_ne!(shared, g, "{conf}: one use left, still private");
        a.free(shared).unwrap();
        a.empty_cache().unwrap();
        a.release_pool(GRAPH).unwrap();
        ok(&a);
        let reserved = a.reserved_bytes();
        // The free 20 MiB segment is now the shared cache's: S1 reuses it
        // with no new device memory.
        let p = a.malloc(4 * MIB, S1).unwrap();
        assert_eq!(p, g, "{conf}: the released segment serves S1");
        assert_eq!(a.reserved_bytes(), reserved, "{conf}: no new memory");
        ok(&a);
        a.free(p).unwrap();
        // The segment with a live block joins the cache when it is freed.
        assert_eq!(a.private_pool_count(), 1, "{conf}: kept block holds its segment");
        assert!(matches!(a.release_pool(GRAPH), Err(AllocError::Misuse { .. })), "{conf}: double release");
        a.free(kept).unwrap();
        ok(&a);
        assert_eq!(a.private_pool_count(), 0, "{conf}: pool gone");
        a.empty_cache().unwrap();
        ok(&a);
        assert_eq!(a.reserved_bytes(), 0, "{conf}: everything returned to the device");
    }
}

#[test]
fn pool_misuse_is_an_error_not_a_panic() {
    let mut a = allocator("");
    assert!(matches!(a.release_pool(GRAPH), Err(AllocError::Misuse { .. })));
    assert!(matches!(a.end_allocate_to_pool(GRAPH), Err(AllocError::Misuse { .. })));
    a.begin_allocate_to_pool(GRAPH, S1).unwrap();
    let e = a.begin_allocate_to_pool(PoolId(2, 0), S1).unwrap_err();
    assert!(e.to_string().contains("already allocates to pool"), "{e}");
    a.end_allocate_to_pool(GRAPH).unwrap();
    a.release_pool(GRAPH).unwrap();
    assert!(matches!(a.release_pool(GRAPH), Err(AllocError::Misuse { .. })));
    ok(&a);
}

/// PyTorch's hook names the pool at each allocation (its stream filter is
/// evaluated by the caller): the same isolation holds.
#[test]
fn pool_named_per_allocation_is_isolated_too() {
    let mut a = allocator("");
    assert!(matches!(a.malloc_in_pool(MIB, S1, GRAPH), Err(AllocError::Misuse { .. })));
    a.begin_allocate_to_pool_by_name(GRAPH).unwrap();
    let g = a.malloc_in_pool(4 * MIB, S1, GRAPH).unwrap();
    assert_eq!(a.reserved_bytes(), 20 * MIB, "a new classic 20 MiB segment");
    let plain = a.malloc(4 * MIB, S1).unwrap();
    assert!(!(g..g + 20 * MIB).contains(&plain), "an unnamed allocation got the graph's memory");
    a.free(g).unwrap();
    a.end_allocate_to_pool(GRAPH).unwrap();
    assert!(matches!(a.malloc_in_pool(MIB, S1, GRAPH), Err(AllocError::Misuse { .. })));
    let other = a.malloc(4 * MIB, S0).unwrap();
    assert!(!(g..g + 20 * MIB).contains(&other));
    ok(&a);
    a.release_pool(GRAPH).unwrap();
    for p in [plain, other] {
        a.free(p).unwrap();
    }
    a.empty_cache().unwrap();
    ok(&a);
    assert_eq!(a.reserved_bytes(), 0);
}

/// `torch.compile`'s warm-up begins, ends and releases its pool each time,
/// with tensors still alive: a new begin revives the pool, whose live
/// segment is private again.
#[test]
fn a_released_pool_with_live_blocks_is_revived_by_its_next_begin() {
    let mut a = allocator("expandable_segments:False");
    a.begin_allocate_to_pool(GRAPH, S1).unwrap();
    let live = a.malloc(4 * MIB, S1).unwrap();
    a.end_allocate_to_pool(GRAPH).unwrap();
    a.release_pool(GRAPH).unwrap();
    a.begin_allocate_to_pool(GRAPH, S1).unwrap();
    let second = a.malloc(4 * MIB, S1).unwrap();
    assert_eq!(second, live + 4 * MIB, "the revived pool splits its own live segment");
    a.end_allocate_to_pool(GRAPH).unwrap();
    a.free(live).unwrap();
    let other = a.malloc(4 * MIB, S1).unwrap();
    assert!(!(live..live + 20 * MIB).contains(&other), "a live pool's freed block went to a shared allocation");
    ok(&a);
    a.release_pool(GRAPH).unwrap();
    a.free(second).unwrap();
    ok(&a);
    assert_eq!(a.private_pool_count(), 0);
    let reserved = a.reserved_bytes();
    let back = a.malloc(4 * MIB, S1).unwrap();
    assert_eq!(a.reserved_bytes(), reserved, "the returned segment serves it");
    for p in [other, back] {
        a.free(p).unwrap();
    }
    a.empty_cache().unwrap();
    assert_eq!(a.reserved_bytes(), 0);
}

/// A block used on another stream and freed during a capture: no event is
/// recorded while the capture is under way (it would be captured into the
/// graph and could never be queried), nobody is handed the block then, and
/// after the capture its event is recorded and the block is reused only
/// once that event completed. PyTorch's rule
/// (`needs_events_deferred_until_no_capture`), checked on the strict mock.
#[test]
fn events_of_blocks_freed_during_a_capture_wait_for_its_end() {
    use expanse_mock::{Call, MockDevice};
    const S2: StreamId = StreamId(2);
    for conf in MODES {
        let mock = Arc::new(MockDevice::new(1 << 30, 2 * MIB));
        let mut a = DeviceAllocator::new(Arc::clone(&mock) as Arc<dyn Device>, Config::parse(conf).unwrap());
        mock.hold_events(true);
        let b = a.malloc(4 * MIB, S0).unwrap();
        a.record_stream(b, S2).unwrap();
        let recorded = mock.calls(Call::RecordEvent);
        a.begin_allocate_to_pool(GRAPH, S1).unwrap();
        a.free(b).unwrap();
        ok(&a);
        assert_eq!(mock.calls(Call::RecordEvent), recorded, "{conf}: an event was recorded during the capture");
        assert_eq!(a.deferred_block_count(), 1, "{conf}");
        // During the capture, S0 (not captured) allocates: not the block.
        let during = a.malloc(4 * MIB, S0).unwrap();
        assert_ne!(during, b, "{conf}: a block with S2's work pending was handed out during the capture");
        ok(&a);
        a.end_allocate_to_pool(GRAPH).unwrap();
        // After it: the event is recorded, still pending, so no reuse yet.
        let after = a.malloc(4 * MIB, S0).unwrap();
        assert_eq!(mock.calls(Call::RecordEvent), recorded + 1, "{conf}: one event on S2 after the capture");
        assert_eq!(a.deferred_block_count(), 0, "{conf}");
        assert_ne!(after, b, "{conf}: reused before S2's event completed");
        ok(&a);
        mock.complete_events();
        let last = a.malloc(4 * MIB, S0).unwrap();
        assert_eq!(last, b, "{conf}: the block is cached once S2's event completed");
        ok(&a);
        for p in [during, after, last] {
            a.free(p).unwrap();
        }
        a.release_pool(GRAPH).unwrap();
        a.empty_cache().unwrap();
        ok(&a);
        assert!(mock.violations().is_empty(), "{conf}: {:?}", mock.violations());
    }
}

/// A `torch.cuda.MemPool` (a user pool, id `(0, n)`): its object holds one
/// use from its creation (a begin and end with nothing allocated), each
/// `use_mem_pool` takes and gives back another, and its death is
/// PyTorch's `releasePool` then `emptyCache` of the pool: the pool's
/// wholly free segments go back to the device at once, the segment with a
/// live block stays until that block is freed, then joins the shared cache.
#[test]
fn a_user_pools_last_release_returns_its_free_segments_to_the_device() {
    const USER: PoolId = PoolId(0, 3);
    for conf in MODES {
        let mut a = allocator(conf);
        let outside = a.malloc(4 * MIB, S0).unwrap();
        let base = a.reserved_bytes();
        a.begin_allocate_to_pool_by_name(USER).unwrap();
        a.end_allocate_to_pool(USER).unwrap();
        assert_eq!(a.pool_use_count(USER).unwrap(), 1, "{conf}: the MemPool's use");
        assert_eq!(a.reserved_bytes(), base, "{conf}: creating a pool reserves nothing");
        a.begin_allocate_to_pool_by_name(USER).unwrap();
        assert_eq!(a.pool_use_count(USER).unwrap(), 2, "{conf}: use_mem_pool's use");
        let big = a.malloc_in_pool(4 * MIB, S0, USER).unwrap();
        let small = a.malloc_in_pool(100 << 10, S0, USER).unwrap();
        a.end_allocate_to_pool(USER).unwrap();
        a.release_pool(USER).unwrap();
        assert_eq!(a.pool_use_count(USER).unwrap(), 1, "{conf}");
        assert_eq!(a.reserved_bytes(), base + 22 * MIB, "{conf}: a 20 MiB and a 2 MiB segment of the pool");
        a.free(big).unwrap();
        a.empty_cache().unwrap();
        ok(&a);
        assert_eq!(a.reserved_bytes(), base + 22 * MIB, "{conf}: empty_cache left the live pool's memory");
        a.release_pool_and_empty_cache(USER).unwrap();
        ok(&a);
        assert_eq!(a.reserved_bytes(), base + 2 * MIB, "{conf}: the free 20 MiB segment went back to the device");
        assert_eq!(a.pool_use_count(USER).unwrap(), 0, "{conf}: released, with a live block");
        a.free(small).unwrap();
        ok(&a);
        assert_eq!(a.private_pool_count(), 0, "{conf}: pool gone");
        assert!(matches!(a.pool_use_count(USER), Err(AllocError::Misuse { .. })), "{conf}");
        assert!(matches!(a.release_pool_and_empty_cache(USER), Err(AllocError::Misuse { .. })), "{conf}");
        a.free(outside).unwrap();
        a.empty_cache().unwrap();
        assert_eq!(a.reserved_bytes(), 0, "{conf}: the small segment joined the cache and was released");
    }
}

/// Only the last use returns memory: while a CUDA graph still shares the
/// pool (another use), its free segments stay private, since the graph
/// replays into them. And while a capture is under way nothing goes back
/// to the device (no driver free during a capture): the free segments
/// join the shared cache, as at any release.
#[test]
fn a_user_pool_returns_memory_only_at_its_last_use_and_never_during_a_capture() {
    const USER: PoolId = PoolId(0, 4);
    let mut a = allocator("");
    a.begin_allocate_to_pool_by_name(USER).unwrap();
    let p = a.malloc_in_pool(4 * MIB, S1, USER).unwrap();
    a.end_allocate_to_pool(USER).unwrap();
    a.begin_allocate_to_pool(USER, S1).unwrap(); // a graph captured into the pool
    a.end_allocate_to_pool(USER).unwrap();
    a.free(p).unwrap();
    a.release_pool_and_empty_cache(USER).unwrap();
    assert_eq!(a.pool_use_count(USER).unwrap(), 1);
    assert_eq!(a.reserved_bytes(), 20 * MIB, "a pool a graph still uses kept its free segment");
    let shared = a.malloc(4 * MIB, S1).unwrap();
    assert!(!(p..p + 20 * MIB).contains(&shared), "the live pool's block was handed out");
    a.free(shared).unwrap();
    a.empty_cache().unwrap();
    assert_eq!(a.reserved_bytes(), 20 * MIB);
    a.begin_allocate_to_pool(GRAPH, S0).unwrap(); // another capture under way
    a.release_pool_and_empty_cache(USER).unwrap();
    ok(&a);
    assert_eq!(a.reserved_bytes(), 20 * MIB, "nothing freed during a capture");
    assert_eq!(a.private_pool_count(), 1, "only the capturing pool is left");
    let reused = a.malloc(4 * MIB, S1).unwrap();
    assert_eq!(reused, p, "the released segment is the shared cache's");
    a.free(reused).unwrap();
    a.end_allocate_to_pool(GRAPH).unwrap();
    a.release_pool(GRAPH).unwrap();
    a.empty_cache().unwrap();
    ok(&a);
    assert_eq!(a.reserved_bytes(), 0);
}

/// expanse's default shares one segment among streams and lends memory
/// across them, each reuse ordered by an event recorded on the stream that
/// last used the memory. During a capture that stream may be capturing:
/// the event would be a node of the graph, never run, and the waiting
/// stream would join the capture. So during a capture a stream outside it
/// is not handed memory another stream last used, no page moves, and
/// nothing goes back to the device: no event, wait, unmap or stream
/// synchronization at all while it is under way; the malloc gets a fresh
/// reservation instead. After the capture the memory is reused again,
/// after one wait on the stream that used it.
#[test]
fn during_a_capture_no_stream_is_handed_memory_another_stream_last_used() {
    use expanse_mock::Call;
    const S2: StreamId = StreamId(2);
    let (mock, mut a) = on_mock(1 << 30, "");
    let x = a.malloc(30 * MIB, S0).unwrap();
    // S1 grows S0's segment (shared segments), then frees its block: the
    // free memory right after x was last used on S1.
    let y = a.malloc(64 * MIB, S1).unwrap();
    assert_eq!(y, x + 30 * MIB);
    a.free(y).unwrap();
    assert_eq!(mock.calls(Call::Reserve), 1, "one shared segment");
    let quiet = [Call::RecordEvent, Call::WaitEvent, Call::Unmap, Call::SynchronizeStream, Call::Synchronize];
    let counts = |m: &expanse_mock::MockDevice| quiet.map(|c| m.calls(c));
    a.begin_allocate_to_pool(GRAPH, S2).unwrap();
    let before = counts(&mock);
    let z = a.malloc(64 * MIB, S0).unwrap();
    ok(&a);
    assert_eq!(counts(&mock), before, "an event, wait, unmap or synchronization during the capture");
    assert!(!(y..y + 64 * MIB).contains(&z), "S0 was handed S1's memory during the capture");
    assert_eq!(mock.calls(Call::Reserve), 2, "the growth took a reservation of its own");
    a.end_allocate_to_pool(GRAPH).unwrap();
    // After the capture S1's memory is S0's again, after one wait on S1.
    let w = a.malloc(64 * MIB, S0).unwrap();
    assert_eq!(w, y);
    assert_eq!(mock.waits(), vec![(S0, S1)]);
    ok(&a);
    for p in [x, z, w] {
        a.free(p).unwrap();
    }
    a.release_pool(GRAPH).unwrap();
    a.empty_cache().unwrap();
    ok(&a);
    assert_eq!(mock.used(), 0, "everything went back to the device");
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
}

/// As PyTorch's allocator does, a malloc outside a capture that finds no
/// room while it is under way does not free every cached segment and
/// retry (that synchronizes the device): it runs out of memory, and the
/// same malloc after the capture frees them and succeeds. Worked with
/// PyTorch's rules on a 64 MiB device: each 12 MiB request takes a 12 MiB
/// segment of its own (requests of 10 MiB or more are rounded to 2 MiB),
/// so two freed ones leave 24 MiB cached and 40 MiB free, short of 50.
#[test]
fn during_a_capture_a_malloc_that_finds_no_room_does_not_empty_the_cache() {
    use expanse_mock::Call;
    const S2: StreamId = StreamId(2);
    let (mock, mut a) = on_mock(64 * MIB, "expandable_segments:False");
    let p = a.malloc(12 * MIB, S0).unwrap();
    let q = a.malloc(12 * MIB, S0).unwrap();
    a.free(p).unwrap();
    a.free(q).unwrap();
    assert_eq!((mock.calls(Call::Malloc), a.reserved_bytes()), (2, 24 * MIB));
    a.begin_allocate_to_pool(GRAPH, S2).unwrap();
    let r = a.malloc(50 * MIB, S0);
    assert!(matches!(r, Err(AllocError::OutOfMemory { .. })), "{r:?}");
    assert_eq!((mock.calls(Call::Free), a.reserved_bytes()), (0, 24 * MIB), "the cache was emptied during the capture");
    ok(&a);
    a.end_allocate_to_pool(GRAPH).unwrap();
    let r = a.malloc(50 * MIB, S0).unwrap();
    assert_eq!(
        (mock.calls(Call::Free), a.reserved_bytes()),
        (2, 50 * MIB),
        "after the capture: both freed, one new segment"
    );
    a.free(r).unwrap();
    a.release_pool(GRAPH).unwrap();
    ok(&a);
}

/// During a capture, growth next to memory the growing stream may reuse
/// (its own, or allocated) grows the shared segment as at any other time:
/// only memory another stream last used is kept out of it.
#[test]
fn during_a_capture_growth_next_to_clean_memory_grows_the_shared_segment() {
    use expanse_mock::Call;
    const S2: StreamId = StreamId(2);
    let (mock, mut a) = on_mock(1 << 30, "");
    let x = a.malloc(30 * MIB, S0).unwrap();
    a.begin_allocate_to_pool(GRAPH, S2).unwrap();
    let y = a.malloc(64 * MIB, S1).unwrap();
    assert_eq!((y, mock.calls(Call::Reserve)), (x + 30 * MIB, 1), "S1 grew S0's segment right after x");
    a.free(y).unwrap();
    // y's memory, last used on S1, now ends the mapped part: S0's growth
    // must not take it in, so it reserves anew.
    let z = a.malloc(100 * MIB, S0).unwrap();
    assert_eq!(mock.calls(Call::Reserve), 2);
    assert!(!(y..y + 64 * MIB).contains(&z));
    assert!(mock.waits().is_empty(), "no wait during the capture");
    ok(&a);
    a.end_allocate_to_pool(GRAPH).unwrap();
    for p in [x, z] {
        a.free(p).unwrap();
    }
    a.release_pool(GRAPH).unwrap();
    a.empty_cache().unwrap();
    ok(&a);
    assert_eq!(mock.used(), 0);
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
}
