//! Combining (`combining.rs`): threads that find the device locked post
//! their mallocs and frees, and the thread holding the lock runs them.
//! Each test makes the contention happen on purpose (one thread holds the
//! lock while the others post), so what it checks does not depend on
//! scheduling luck.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use expanse_core::{AllocError, CachingAllocator, Config, Device, OomInfo, StreamId};
use expanse_mock::MockDevice;

const MIB: u64 = 1 << 20;

fn allocator(capacity: u64) -> Arc<CachingAllocator> {
    let d: Arc<dyn Device> = Arc::new(MockDevice::new(capacity, 2 * MIB));
    Arc::new(CachingAllocator::new(vec![d], Config::default()))
}

/// Wait until `n` requests are posted on device 0 (at most 20 s).
fn wait_posted(a: &CachingAllocator, n: usize) {
    let start = Instant::now();
    while a.combining_counts(0).unwrap().0 < n {
        assert!(start.elapsed() < Duration::from_secs(20), "only {:?} of {n} requests posted", a.combining_counts(0));
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Six threads post mallocs while the lock is held; once it is released,
/// all six are run from their slots, and each thread gets a block of its
/// own (no two overlap), as the statistics say.
#[test]
fn posted_mallocs_and_frees_are_run_for_their_threads() {
    let a = allocator(1 << 30);
    let guard = a.lock(0).unwrap();
    let sizes: Vec<u64> = (1..=6).map(|i| i * 3 * MIB + 512 * i).collect();
    let workers: Vec<_> = sizes
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            let a = Arc::clone(&a);
            std::thread::spawn(move || a.malloc(0, size, StreamId(i as u64 + 1)))
        })
        .collect();
    wait_posted(&a, 6);
    assert_eq!(a.combining_counts(0).unwrap(), (6, 0), "six posted, none run while the lock is held");
    drop(guard);
    let ptrs: Vec<u64> = workers.into_iter().map(|w| w.join().unwrap().unwrap()).collect();
    assert_eq!(a.combining_counts(0).unwrap(), (0, 5), "the first to take the lock ran the other five");
    let mut ranges: Vec<(u64, u64)> = ptrs.iter().zip(&sizes).map(|(&p, &s)| (p, p + s)).collect();
    ranges.sort_unstable();
    assert!(ranges.windows(2).all(|w| w[0].1 <= w[1].0), "blocks overlap: {ranges:x?}");
    let st = a.stats(0).unwrap();
    assert_eq!(st.requested_bytes.all().current, sizes.iter().sum::<u64>() as i64);
    a.lock(0).unwrap().check_invariants().unwrap();

    // The same for frees, with one double free among them: exactly one
    // of the two frees of that block fails, for its own thread only.
    let guard = a.lock(0).unwrap();
    let frees: Vec<_> = ptrs
        .iter()
        .chain(std::iter::once(&ptrs[2]))
        .map(|&p| {
            let a = Arc::clone(&a);
            std::thread::spawn(move || a.free(0, p))
        })
        .collect();
    wait_posted(&a, 7);
    drop(guard);
    let results: Vec<_> = frees.into_iter().map(|f| f.join().unwrap()).collect();
    let failed: Vec<_> = results.iter().enumerate().filter(|(_, r)| r.is_err()).collect();
    assert_eq!(failed.len(), 1, "{results:?}");
    let (i, r) = failed[0];
    assert!(i == 2 || i == 6, "the failure is not one of the block's two frees: {results:?}");
    assert!(matches!(r, Err(AllocError::Misuse { .. })), "{r:?}");
    assert_eq!(a.combining_counts(0).unwrap(), (0, 5 + 6));
    let st = a.stats(0).unwrap();
    assert_eq!(st.allocated_bytes.all().current, 0);
    a.lock(0).unwrap().check_invariants().unwrap();
}

/// A malloc that fails while run by another thread's combiner still tells
/// the out-of-memory observer in the thread that asked, after the lock.
#[test]
fn a_failed_posted_malloc_tells_the_observer_in_its_own_thread() {
    let a = allocator(1 << 30);
    let seen: Arc<Mutex<Vec<(ThreadId, u64)>>> = Arc::default();
    let s = Arc::clone(&seen);
    let a2 = Arc::clone(&a);
    a.add_oom_observer(Arc::new(move |info: &OomInfo| {
        // The lock is free while an observer runs: it may call the allocator.
        let _ = a2.stats(0).unwrap();
        s.lock().unwrap().push((std::thread::current().id(), info.alloc_size));
    }));
    let guard = a.lock(0).unwrap();
    let workers: Vec<_> = (0..4u64)
        .map(|i| {
            let a = Arc::clone(&a);
            std::thread::spawn(move || {
                let r = a.malloc(0, (2 + i) << 30, StreamId(i + 1));
                (std::thread::current().id(), r)
            })
        })
        .collect();
    wait_posted(&a, 4);
    drop(guard);
    let mut failed = Vec::new();
    for w in workers {
        let (id, r) = w.join().unwrap();
        assert!(matches!(r, Err(AllocError::OutOfMemory { .. })), "{r:?}");
        failed.push(id);
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 4, "one notice per failure: {seen:?}");
    for id in &failed {
        assert_eq!(seen.iter().filter(|(t, _)| t == id).count(), 1, "observer not told in the failing thread");
    }
    assert_eq!(a.combining_counts(0).unwrap(), (0, 3), "one thread ran the other three");
}

/// Eight threads on eight streams allocate and free at once, handing some
/// blocks to another thread to free: no block is given twice, nothing is
/// lost, and the state is whole at the end.
#[test]
fn eight_threads_on_eight_streams_lose_nothing() {
    let a = allocator(64 << 30);
    // Live blocks of every thread, to check that none is given twice.
    let live: Arc<Mutex<BTreeMap<u64, u64>>> = Arc::default();
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    let rx = Arc::new(Mutex::new(rx));
    let workers: Vec<_> = (0..8u64)
        .map(|t| {
            let (a, live, tx, rx) = (Arc::clone(&a), Arc::clone(&live), tx.clone(), Arc::clone(&rx));
            std::thread::spawn(move || {
                let mut s = 42 + t;
                let mut mine: Vec<u64> = Vec::new();
                for step in 0..3000u64 {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let base = 1u64 << (9 + (s >> 33) % 16);
                    let size = base + (s >> 40) % base;
                    let p = a.malloc(0, size, StreamId(t + 1)).unwrap();
                    {
                        let mut l = live.lock().unwrap();
                        if let Some((&q, &e)) = l.range(..p + size).next_back() {
                            assert!(e <= p || q >= p + size, "{p:#x}+{size} overlaps {q:#x}..{e:#x}");
                        }
                        l.insert(p, p + size);
                    }
                    mine.push(p);
                    if mine.len() > 32 {
                        let q = mine.swap_remove((s >> 20) as usize % mine.len());
                        live.lock().unwrap().remove(&q);
                        if step % 3 == 0 {
                            tx.send(q).unwrap();
                        } else {
                            a.free(0, q).unwrap();
                        }
                    }
                    // Free what other threads handed over.
                    while let Ok(q) = rx.lock().unwrap().try_recv() {
                        a.free(0, q).unwrap();
                    }
                }
                for q in mine {
                    live.lock().unwrap().remove(&q);
                    a.free(0, q).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    for w in workers {
        w.join().unwrap();
    }
    while let Ok(q) = rx.lock().unwrap().try_recv() {
        a.free(0, q).unwrap();
    }
    assert!(live.lock().unwrap().is_empty());
    let st = a.stats(0).unwrap();
    assert_eq!(st.allocated_bytes.all().current, 0, "every block freed");
    assert_eq!(st.allocation.all().allocated, 8 * 3000, "{:?}", st.allocation.all());
    a.lock(0).unwrap().check_invariants().unwrap();
    assert_eq!(a.combining_counts(0).unwrap().0, 0, "nothing left posted");
}
