//! Lazy merging (`allocator/pending.rs`) against the eager allocator: the
//! same random operations on two allocators over two identical strict mock
//! devices, one with lazy merging (the default) and one without. After
//! every operation both must have returned the same (addresses, errors),
//! and have the same statistics and allocation history; both keep their
//! invariants; at snapshot operations (which complete a pending merge)
//! the snapshots are equal. The operations favour the pattern lazy merging
//! serves (a split block freed and asked for again at once), and the test
//! checks that pending merges were left and served.

use std::sync::Arc;

use expanse_core::{Config, DeviceAllocator, TraceEntry};
use expanse_device::{Device, StreamId};
use expanse_mock::MockDevice;
use proptest::prelude::*;

const MIB: u64 = 1 << 20;

/// One side: device, allocator and its live allocations (in order).
struct Side {
    device: Arc<MockDevice>,
    alloc: DeviceAllocator,
    live: Vec<u64>,
}

impl Side {
    fn new(config: &Config, capacity: u64, lazy: bool, hold_events: bool) -> Self {
        let device = Arc::new(MockDevice::new(capacity, 2 * MIB));
        device.hold_events(hold_events);
        let mut alloc = DeviceAllocator::new(Arc::clone(&device) as Arc<dyn Device>, config.clone());
        alloc.set_lazy_merge(lazy);
        // History with a clock that never moves: entries compare whole.
        alloc.record_history_with_clock(1 << 20, expanse_core::Clock::Custom(Box::new(|| 0)));
        Side { device, alloc, live: Vec::new() }
    }
}

/// A size: mostly a few repeated ones (small pool, large pool, over
/// `max_split_size` in one of the configurations), sometimes any.
fn size_of(b: u8, raw: u64) -> u64 {
    match b % 10 {
        0 => 512,
        1 => 1000,
        2 => 64 << 10,
        3 => MIB,
        4 => 3 * MIB,
        5 => 8 * MIB,
        6 => 70 * MIB,
        7 => raw % (2 * MIB) + 1,
        8 => raw * 1024 + 1,
        _ => raw % 2048,
    }
}

/// Apply the operation coded by `c` to one side; what it returned, as text.
fn apply(s: &mut Side, c: &[u8]) -> String {
    let b = |i: usize| c.get(i).copied().unwrap_or(0);
    let raw = u64::from(b(1)) << 8 | u64::from(b(2));
    let stream = StreamId(u64::from(b(3) % 4 / 3));
    let pick = |n: usize| usize::from(b(2)) % n.max(1);
    match b(0) % 17 {
        0..=4 => {
            let r = s.alloc.malloc(size_of(b(1), raw), stream);
            if let Ok(a) = r {
                s.live.push(a);
            }
            format!("{r:?}")
        }
        5..=7 => {
            // The hot pair, several times.
            let mut out = String::new();
            for _ in 0..1 + b(2) % 4 {
                let r = s.alloc.malloc(size_of(b(1), raw), stream);
                out += &format!("{r:?} ");
                if let Ok(a) = r {
                    out += &format!("{:?} ", s.alloc.free(a));
                }
            }
            out
        }
        8..=10 if !s.live.is_empty() => {
            let a = s.live.pop().expect("live");
            format!("{:?}", s.alloc.free(a))
        }
        11 if !s.live.is_empty() => {
            let a = s.live.remove(pick(s.live.len()));
            format!("{:?}", s.alloc.free(a))
        }
        // Events on two streams: the allocator visits their queues in
        // stream order, so blocks of several streams freed in one go are
        // freed in the same order by both allocators (a hash map's order
        // differed between two allocators, and with it the statistics'
        // peaks and the history's order).
        12 if !s.live.is_empty() => {
            let a = s.live[pick(s.live.len())];
            format!("{:?}", s.alloc.record_stream(a, StreamId(2 + u64::from(b(4) % 2))))
        }
        13 => {
            s.device.complete_events();
            format!("{:?}", s.alloc.empty_cache())
        }
        // Its history is compared after every operation (`history`).
        14 => format!("{:?}", s.alloc.snapshot().segments),
        15 => {
            s.device.complete_events();
            "events completed".into()
        }
        // Two free blocks a malloc chooses between, one of them just freed
        // (left pending): [a][spacer][b], `a` freed first, then `b`, then
        // `b`'s size asked for. Same sizes: the lower address wins; `a`
        // larger: in an expandable segment `b` can reach the unmapped
        // space after it, so best fit takes `a`.
        16 => {
            let x = size_of(b(1), raw);
            let a_size = if b(2) % 2 == 0 { x } else { x + 2 * MIB };
            let mut out = String::new();
            let mut got = Vec::new();
            for size in [a_size, 3 * MIB, x] {
                let r = s.alloc.malloc(size, stream);
                out += &format!("{r:?} ");
                got.push(r);
            }
            if let [Ok(a), Ok(spacer), Ok(b)] = got[..] {
                out += &format!("{:?} {:?} ", s.alloc.free(a), s.alloc.free(b));
                let r = s.alloc.malloc(x, stream);
                out += &format!("{r:?}");
                s.live.push(spacer);
                if let Ok(c) = r {
                    s.live.push(c);
                }
            } else {
                s.live.extend(got.into_iter().flatten());
            }
            out
        }
        // A free of a pointer that is not live changes nothing.
        _ => format!("{:?}", s.alloc.free(1 << 50)),
    }
}

/// The allocation history.
fn history(a: &DeviceAllocator) -> Vec<TraceEntry> {
    a.history().expect("recorded").entries().copied().collect()
}

/// Runs `bytes` on both sides; whether a merge was ever pending, and the
/// mallocs served by a pending merge and by a pending whole block.
fn run(bytes: &[u8], config: &Config, capacity: u64, hold_events: bool) -> Result<(bool, u64, u64), TestCaseError> {
    let mut lazy = Side::new(config, capacity, true, hold_events);
    let mut eager = Side::new(config, capacity, false, hold_events);
    let mut pending_seen = false;
    for (i, c) in bytes.chunks(4).enumerate() {
        let (a, b) = (apply(&mut lazy, c), apply(&mut eager, c));
        prop_assert_eq!(&a, &b, "op {} {:?}: results differ", i, c);
        prop_assert_eq!(lazy.alloc.stats(), eager.alloc.stats(), "op {} {:?}: statistics differ", i, c);
        let (h, g) = (history(&lazy.alloc), history(&eager.alloc));
        let first = h.iter().zip(&g).position(|(x, y)| x != y);
        prop_assert!(
            h == g,
            "op {} {:?}: histories differ from entry {:?}: lazy {:?}, eager {:?}",
            i,
            c,
            first,
            h.iter().skip(first.unwrap_or(0).saturating_sub(2)).take(5).collect::<Vec<_>>(),
            g.iter().skip(first.unwrap_or(0).saturating_sub(2)).take(5).collect::<Vec<_>>()
        );
        lazy.alloc.check_invariants().map_err(|e| TestCaseError::fail(format!("op {i} {c:?}: lazy: {e}")))?;
        eager.alloc.check_invariants().map_err(|e| TestCaseError::fail(format!("op {i} {c:?}: eager: {e}")))?;
        prop_assert_eq!(eager.alloc.pending_merge_counts(), (false, 0, 0), "the eager side never defers");
        pending_seen |= lazy.alloc.pending_merge_counts().0;
    }
    prop_assert_eq!(lazy.alloc.snapshot().segments, eager.alloc.snapshot().segments, "final snapshots differ");
    let (_, merges, whole) = lazy.alloc.pending_merge_counts();
    Ok((pending_seen, merges, whole))
}

fn configs() -> Vec<Config> {
    [
        "expandable_segments:False",
        "expandable_segments:True,pytorch_compat:True",
        "",
        "max_split_size_mb:64,garbage_collection_threshold:0.5,per_process_memory_fraction:0.9",
        "expandable_segments:False,max_split_size_mb:64,roundup_power2_divisions:4",
        "expandable_segments:True,pytorch_compat:True,max_split_size_mb:64",
    ]
    .iter()
    .map(|c| Config::parse(c).unwrap())
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn lazy_merging_decides_and_reports_as_eager_merging(
        bytes in proptest::collection::vec(any::<u8>(), 0..1600),
        which in 0usize..6,
        hold in any::<bool>(),
        small in any::<bool>(),
    ) {
        let capacity = if small { 192 * MIB } else { 2 << 30 };
        run(&bytes, &configs()[which], capacity, hold)?;
    }
}

/// The test above exercises what it is about: over fixed pseudo-random
/// sequences in every configuration, merges and whole blocks are left
/// pending and mallocs are served by both kinds.
#[test]
fn pending_merges_are_left_and_served() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for (n, config) in configs().iter().enumerate() {
        let mut served = 0;
        let mut served_whole = 0;
        let mut seen = false;
        for _ in 0..8 {
            let bytes: Vec<u8> = (0..1200)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let (s, k, w) = run(&bytes, config, 2 << 30, false).unwrap();
            seen |= s;
            served += k;
            served_whole += w;
        }
        assert!(
            seen && served > 10 && served_whole > 10,
            "configuration {n}: pending seen {seen}, served {served} by merges, {served_whole} by whole blocks"
        );
    }
}
