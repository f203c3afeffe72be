//! The thread-safe allocator's lanes (`caching.rs`, `allocator/lanes.rs`):
//! one thread through [`CachingAllocator`] decides exactly as the bare
//! [`DeviceAllocator`] does, and threads on streams of their own, freeing
//! each other's blocks, emptying the cache, recording streams and reading
//! statistics meanwhile, leave a state whose invariants hold and whose
//! statistics count every request exactly.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};

use expanse_core::{AllocError, CachingAllocator, Config, Device, DeviceAllocator, StreamId};
use expanse_mock::MockDevice;

const MIB: u64 = 1 << 20;

const MODES: [&str; 3] = ["expandable_segments:False", "expandable_segments:True,pytorch_compat:True", ""];

/// The working-set rule (`move_reuse_window`) keeps its clock and stamps in
/// the whole state: no lane serves a request while it is on, and one
/// thread still decides as the bare allocator.
const WORKING_SET: &str = "move_reuse_window:128";

/// A 64-bit LCG (the bench's), for reproducible sequences.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// Mostly small sizes, some up to 40 MiB.
    fn size(&mut self) -> u64 {
        let r = self.next();
        match r % 10 {
            0..=5 => r % 8192 + 1,
            6..=8 => r % (2 * MIB) + 1,
            _ => r % (40 * MIB) + 1,
        }
    }
}

/// The kind of an error, for comparing two allocators' answers.
fn kind(e: &AllocError) -> String {
    format!("{e:?}").split([' ', '{', '(']).next().unwrap_or_default().to_string()
}

/// One thread, the same random requests (three streams, so that blocks
/// are lent across streams; record_stream, empty_cache, peak resets,
/// frees of unknown pointers) to a `CachingAllocator` and to a bare
/// `DeviceAllocator`: the same addresses, the same errors, and after
/// every 25 requests the same statistics and snapshot, in all three modes.
/// And most requests were served by a lane, so the lanes' code is what
/// was compared.
#[test]
fn one_thread_decides_as_the_bare_allocator() {
    for conf in MODES.into_iter().chain([WORKING_SET]) {
        let config = Config::parse(conf).unwrap();
        let d1 = Arc::new(MockDevice::new(3 << 30, 2 * MIB));
        let d2 = Arc::new(MockDevice::new(3 << 30, 2 * MIB));
        let mut bare = DeviceAllocator::new(Arc::clone(&d1) as Arc<dyn Device>, config.clone());
        let caching = CachingAllocator::new(vec![Arc::clone(&d2) as Arc<dyn Device>], config);
        let mut rng = Lcg(7);
        let mut live: Vec<u64> = Vec::new();
        let mut requests = 0u64;
        for step in 0..6000u32 {
            let r = rng.next();
            match r % 100 {
                0..=47 => {
                    let (size, stream) = (rng.size(), StreamId(r % 3));
                    let a = bare.malloc(size, stream);
                    let b = caching.malloc(0, size, stream);
                    requests += 1;
                    match (&a, &b) {
                        (Ok(x), Ok(y)) => assert_eq!(x, y, "{conf:?} step {step}: malloc({size}) on {stream:?}"),
                        (Err(x), Err(y)) => assert_eq!(kind(x), kind(y), "{conf:?} step {step}"),
                        _ => panic!("{conf:?} step {step}: malloc({size}): {a:?} against {b:?}"),
                    }
                    if let Ok(p) = a {
                        live.push(p);
                    }
                }
                48..=93 if !live.is_empty() => {
                    let p = live.swap_remove(r as usize % live.len());
                    bare.free(p).unwrap();
                    caching.free(0, p).unwrap();
                    requests += 1;
                }
                94..=95 if !live.is_empty() => {
                    let p = live[r as usize % live.len()];
                    let s = StreamId(3 + r % 2);
                    bare.record_stream(p, s).unwrap();
                    caching.record_stream(p, s).unwrap();
                }
                96 => {
                    bare.empty_cache().unwrap();
                    caching.empty_cache().unwrap();
                }
                97 => {
                    bare.reset_peak_stats();
                    caching.reset_peak_stats(0).unwrap();
                }
                _ => {
                    let p = live.first().map_or(0xdead_0000_0001, |p| p + 1);
                    assert_eq!(kind(&bare.free(p).unwrap_err()), kind(&caching.free(0, p).unwrap_err()));
                }
            }
            if step.is_multiple_of(25) {
                assert_eq!(&caching.stats(0).unwrap(), bare.stats(), "{conf:?} step {step}");
                let mut whole = caching.lock(0).unwrap();
                whole.check_invariants().unwrap_or_else(|e| panic!("{conf:?} step {step}: {e}"));
                assert_eq!(format!("{:?}", whole.snapshot()), format!("{:?}", bare.snapshot()), "{conf:?} step {step}");
            }
        }
        for p in live {
            bare.free(p).unwrap();
            caching.free(0, p).unwrap();
        }
        assert_eq!(&caching.stats(0).unwrap(), bare.stats(), "{conf:?} at the end");
        let served = caching.lane_requests(0).unwrap();
        if conf == WORKING_SET {
            assert_eq!(served, 0, "{conf:?}: no lane while the working set is watched");
        } else {
            assert!(served * 10 > requests * 6, "{conf:?}: lanes served {served} of {requests} requests");
        }
    }
}

/// Every live allocation of every thread, to catch two of them overlapping
/// (entered after malloc returns, left before free is called).
#[derive(Default)]
struct LiveSet(Mutex<BTreeMap<u64, u64>>);

impl LiveSet {
    fn enter(&self, p: u64, size: u64) {
        let mut m = self.0.lock().unwrap();
        if let Some((&q, &n)) = m.range(..=p).next_back() {
            assert!(q + n <= p, "{p:#x} ({size} B) overlaps live {q:#x} ({n} B)");
        }
        if let Some((&q, _)) = m.range(p..).next() {
            assert!(p + size <= q, "{p:#x} ({size} B) overlaps live {q:#x}");
        }
        m.insert(p, size);
    }

    fn leave(&self, p: u64) {
        assert!(self.0.lock().unwrap().remove(&p).is_some(), "{p:#x} freed but not live");
    }
}

/// Six threads, each on a stream of its own, allocate and free at random;
/// a third of what each allocates is freed by the next thread; thread 0
/// empties the cache now and then, thread 1 records some allocations on a
/// seventh stream, thread 2 reads the statistics (which must always be
/// consistent: nothing allocated beyond what is reserved, no peak below
/// its current value). No two live allocations overlap. Afterwards the
/// invariants hold and the statistics count exactly the requests made:
/// allocations, bytes asked for, nothing left allocated; emptying the
/// cache then leaves nothing active and nothing reserved. In every mode.
#[test]
fn threads_on_their_own_streams_leave_exact_statistics() {
    const THREADS: usize = 6;
    const STEPS: usize = 3000;
    for conf in MODES {
        let device = Arc::new(MockDevice::new(16 << 30, 2 * MIB));
        let alloc = CachingAllocator::new(vec![Arc::clone(&device) as Arc<dyn Device>], Config::parse(conf).unwrap());
        let live = LiveSet::default();
        let (mallocs, asked) = (AtomicU64::new(0), AtomicU64::new(0));
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..THREADS).map(|_| mpsc::channel::<u64>()).unzip();
        std::thread::scope(|scope| {
            for (t, inbox) in receivers.into_iter().enumerate() {
                let next = senders[(t + 1) % THREADS].clone();
                let (alloc, live, mallocs, asked) = (&alloc, &live, &mallocs, &asked);
                scope.spawn(move || {
                    let stream = StreamId(10 + t as u64);
                    let mut rng = Lcg(1000 + t as u64);
                    let mut mine: Vec<u64> = Vec::new();
                    for step in 0..STEPS {
                        let size = rng.size();
                        let p = alloc.malloc(0, size, stream).unwrap_or_else(|e| panic!("thread {t}: {e}"));
                        live.enter(p, size);
                        mallocs.fetch_add(1, Ordering::Relaxed);
                        asked.fetch_add(size, Ordering::Relaxed);
                        let r = rng.next();
                        if t == 1 && r.is_multiple_of(7) {
                            alloc.record_stream(p, StreamId(99)).unwrap();
                        }
                        if r.is_multiple_of(3) {
                            next.send(p).unwrap();
                        } else {
                            mine.push(p);
                        }
                        while let Ok(q) = inbox.try_recv() {
                            live.leave(q);
                            alloc.free(0, q).unwrap();
                        }
                        if mine.len() > 24 {
                            let q = mine.swap_remove(r as usize % mine.len());
                            live.leave(q);
                            alloc.free(0, q).unwrap();
                        }
                        if t == 0 && step.is_multiple_of(200) {
                            alloc.empty_cache().unwrap();
                        }
                        if t == 2 && step.is_multiple_of(50) {
                            let s = alloc.stats(0).unwrap();
                            assert!(s.allocated_bytes.all.current <= s.reserved_bytes.all.current, "{s:?}");
                            assert!(s.allocated_bytes.all.peak >= s.allocated_bytes.all.current);
                            assert!(s.allocation.all.current >= 0 && s.requested_bytes.all.current >= 0);
                        }
                    }
                    for q in mine {
                        live.leave(q);
                        alloc.free(0, q).unwrap();
                    }
                    drop(next);
                    // What the previous thread sends until it is done.
                    for q in inbox {
                        live.leave(q);
                        alloc.free(0, q).unwrap();
                    }
                });
            }
            drop(senders);
        });
        let n = mallocs.load(Ordering::Relaxed) as i64;
        let s = alloc.stats(0).unwrap();
        assert_eq!(n, (THREADS * STEPS) as i64);
        assert_eq!(
            (s.allocation.all.allocated, s.allocation.all.freed, s.allocation.all.current),
            (n, n, 0),
            "{conf:?}"
        );
        assert_eq!(s.requested_bytes.all.allocated, asked.load(Ordering::Relaxed) as i64, "{conf:?}");
        assert_eq!((s.requested_bytes.all.current, s.allocated_bytes.all.current), (0, 0));
        assert_eq!(s.allocated_bytes.all.allocated, s.allocated_bytes.all.freed);
        assert!(live.0.lock().unwrap().is_empty());
        alloc.lock(0).unwrap().check_invariants().unwrap_or_else(|e| panic!("{conf:?}: {e}"));
        assert!(alloc.lane_requests(0).unwrap() > 0, "{conf:?}: no lane served a request");
        // Blocks recorded on stream 99 stay active until their events
        // complete; emptying the cache waits for them.
        alloc.empty_cache().unwrap();
        let s = alloc.stats(0).unwrap();
        assert_eq!((s.active.all.current, s.reserved_bytes.all.current), (0, 0), "{conf:?}");
        assert!(device.violations().is_empty(), "{:?}", device.violations());
    }
}

/// Peaks stay exact with several lanes out: eight threads on streams of
/// their own each hold eight 2 MiB blocks at once (a barrier makes sure
/// all 64 are live together) and free them; after a first round has
/// cached the blocks and the peaks were reset, the second round's peaks
/// are exactly 64 allocations and 128 MiB, its current values zero, and
/// its totals 64 each way.
#[test]
fn peaks_are_exact_with_many_lanes_out() {
    const THREADS: usize = 8;
    const EACH: usize = 8;
    for conf in MODES {
        let device = Arc::new(MockDevice::new(8 << 30, 2 * MIB));
        let alloc = CachingAllocator::new(vec![device as Arc<dyn Device>], Config::parse(conf).unwrap());
        for round in 0..3 {
            alloc.reset_peak_stats(0).unwrap();
            let before = alloc.stats(0).unwrap();
            let served = alloc.lane_requests(0).unwrap();
            let barrier = Barrier::new(THREADS);
            std::thread::scope(|scope| {
                for t in 0..THREADS {
                    let (alloc, barrier) = (&alloc, &barrier);
                    scope.spawn(move || {
                        let stream = StreamId(100 + t as u64);
                        let held: Vec<u64> = (0..EACH).map(|_| alloc.malloc(0, 2 * MIB, stream).unwrap()).collect();
                        barrier.wait();
                        held.into_iter().for_each(|p| alloc.free(0, p).unwrap());
                    });
                }
            });
            let s = alloc.stats(0).unwrap();
            let total = (THREADS * EACH) as i64;
            assert_eq!(
                (s.allocation.all.peak, s.allocated_bytes.all.peak),
                (total, total * 2 * MIB as i64),
                "{conf:?}"
            );
            assert_eq!((s.allocation.all.current, s.allocated_bytes.all.current), (0, 0));
            assert_eq!(s.allocation.all.allocated - before.allocation.all.allocated, total);
            assert_eq!(s.allocation.all.freed - before.allocation.all.freed, total);
            assert_eq!(s.allocated_bytes.large_pool.peak, total * 2 * MIB as i64);
            if round > 0 {
                // The blocks were cached: every request a lane's.
                assert_eq!(alloc.lane_requests(0).unwrap() - served, 2 * total as u64, "{conf:?} round {round}");
            }
        }
    }
}
