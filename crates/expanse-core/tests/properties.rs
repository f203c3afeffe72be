//! Property tests: random operation sequences, decoded from bytes (the
//! same decoder the fuzzer uses), on the strict mock device under every
//! mode. After every operation: no overlap with the shadow model, stats
//! agree, invariants hold, the device contract is kept. At the end,
//! everything freed and `empty_cache` leave nothing reserved or leaked.

use std::collections::HashMap;
use std::sync::Arc;

use expanse_core::ops::{decode, random_config, Runner, Step, CONFIG_BYTES};
use expanse_core::{Config, DeviceAllocator};
use expanse_device::Device;
use expanse_device::StreamId;
use expanse_mock::{MockDevice, Ordering};
use proptest::prelude::*;

const MIB: u64 = 1 << 20;

/// Per stream, the latest log position of its work that is ordered first.
type Follows = HashMap<StreamId, usize>;

/// What the device's ordering log (`MockDevice::ordering`) orders each
/// stream, and the host, after. Stream order is transitive: a wait on an
/// event orders the waiter after every piece of work the recording stream
/// was itself ordered after when it recorded the event, as on CUDA. Work is
/// named by the log's length when it was queued: `(s, p)` is every piece of
/// `s`'s work queued while the log was at most `p` long.
#[derive(Default)]
struct Order {
    /// Log entries folded in.
    seen: usize,
    /// Per stream, the latest position of each other stream's work it follows.
    follows: HashMap<StreamId, Follows>,
    /// Per stream, what it followed from each log length on: (length, follows).
    history: HashMap<StreamId, Vec<(usize, Follows)>>,
    /// Per stream, its work the host knows complete.
    host: HashMap<StreamId, usize>,
    /// The log's length at the last synchronization of the whole device.
    all: Option<usize>,
}

impl Order {
    /// Fold in the log's entries not seen yet.
    fn fold(&mut self, log: &[Ordering]) {
        for (j, o) in log.iter().enumerate().skip(self.seen) {
            match *o {
                Ordering::Wait { waiter, on, recorded_at } => {
                    let carried = self.carried(on, recorded_at);
                    let mine = self.follows.entry(waiter).or_default();
                    let mut changed = false;
                    for (s, p) in carried {
                        if s != waiter && mine.get(&s).is_none_or(|&q| q < p) {
                            mine.insert(s, p);
                            changed = true;
                        }
                    }
                    if changed {
                        let now = mine.clone();
                        self.history.entry(waiter).or_default().push((j + 1, now));
                    }
                }
                Ordering::Completed { on, recorded_at } => {
                    for (s, p) in self.carried(on, recorded_at) {
                        let h = self.host.entry(s).or_default();
                        *h = (*h).max(p);
                    }
                }
                Ordering::SyncStream(on) => {
                    for (s, p) in self.carried(on, j) {
                        let h = self.host.entry(s).or_default();
                        *h = (*h).max(p);
                    }
                }
                Ordering::SyncAll => self.all = Some(j),
            }
        }
        self.seen = log.len();
    }

    /// What an event recorded on `on` when the log was `at` long orders a
    /// waiter after: `on`'s own work so far, and what `on` followed then.
    fn carried(&self, on: StreamId, at: usize) -> Vec<(StreamId, usize)> {
        let then = self.history.get(&on).and_then(|h| h.iter().rev().find(|(len, _)| *len <= at));
        let mut out: Vec<(StreamId, usize)> =
            then.map(|(_, f)| f.iter().map(|(&s, &p)| (s, p)).collect()).unwrap_or_default();
        out.push((on, at));
        out
    }

    /// Whether `stream`'s coming work is ordered after `other`'s work queued
    /// while the log was at most `at` long.
    fn ordered(&self, stream: StreamId, other: StreamId, at: usize) -> bool {
        self.all.is_some_and(|j| j >= at)
            || self.host.get(&other).is_some_and(|&p| p >= at)
            || self.follows.get(&stream).and_then(|f| f.get(&other)).is_some_and(|&p| p >= at)
    }
}

#[test]
fn the_ordering_model_is_transitive_and_no_more() {
    let (a, b, c) = (StreamId(1), StreamId(2), StreamId(3));
    // b waits on an event a recorded at 0; c then waits on an event b
    // recorded at 1: c follows a's work through 0, not a's later work.
    let log =
        [Ordering::Wait { waiter: b, on: a, recorded_at: 0 }, Ordering::Wait { waiter: c, on: b, recorded_at: 1 }];
    let mut o = Order::default();
    o.fold(&log);
    assert!(o.ordered(c, a, 0) && o.ordered(c, b, 1) && o.ordered(b, a, 0));
    assert!(!o.ordered(c, a, 1), "a's work after the event is not ordered");
    assert!(!o.ordered(a, b, 0) && !o.ordered(a, c, 0), "waits order only the waiter");
    // An event b recorded before its wait carries nothing of a.
    let log =
        [Ordering::Wait { waiter: c, on: b, recorded_at: 0 }, Ordering::Wait { waiter: b, on: a, recorded_at: 0 }];
    let mut o = Order::default();
    o.fold(&log);
    assert!(!o.ordered(c, a, 0));
    // A completed query, a stream synchronization and a device
    // synchronization order every stream after what they cover.
    let log = [
        Ordering::Wait { waiter: b, on: a, recorded_at: 0 },
        Ordering::Completed { on: b, recorded_at: 1 },
        Ordering::SyncStream(c),
    ];
    let mut o = Order::default();
    o.fold(&log);
    assert!(o.ordered(StreamId(9), a, 0) && o.ordered(StreamId(9), b, 1) && o.ordered(StreamId(9), c, 2));
    assert!(!o.ordered(StreamId(9), c, 3) && !o.ordered(StreamId(9), b, 2));
    o.fold(&[log[0], log[1], log[2], Ordering::SyncAll]);
    assert!(o.ordered(StreamId(9), b, 3));
}

fn run(bytes: &[u8], config: Config, capacity: u64, hold_events: bool) -> Result<(), TestCaseError> {
    let d = Arc::new(MockDevice::new(capacity, 2 * MIB));
    d.hold_events(hold_events);
    {
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, config);
        let mut r = Runner::default();
        // Freed memory: (address, size, stream that used it, ordering-log
        // length when the free began).
        let mut freed: Vec<(u64, u64, StreamId, usize)> = Vec::new();
        let mut order = Order::default();
        for (i, op) in decode(bytes, 300 * MIB).into_iter().enumerate() {
            let began = d.ordering().len();
            if let Err(e) = r.step(&mut a, op) {
                return Err(TestCaseError::fail(format!("op {i} {op:?}: {e}")));
            }
            prop_assert!(d.violations().is_empty(), "op {} {:?}: {:?}", i, op, d.violations());
            match r.last {
                Some(Step { addr, size, stream, allocated: false }) => freed.push((addr, size.max(1), stream, began)),
                Some(Step { addr: ptr, size, stream, allocated: true }) => {
                    // A size-0 allocation still holds its block's first byte.
                    let size = size.max(1);
                    // Memory another stream used must not be handed out
                    // before that stream's work up to the free is ordered
                    // first ([`Order`]): by a chain of waits on events
                    // recorded since the free began, such an event found
                    // complete, or a host synchronization.
                    order.fold(&d.ordering());
                    for &(fa, fs, fstream, at) in &freed {
                        if fa < ptr + size && ptr < fa + fs && fstream != stream {
                            let ordered = order.ordered(stream, fstream, at);
                            prop_assert!(
                                ordered,
                                "op {}: {:#x}+{} reused on {:?} without ordering after {:?}",
                                i,
                                ptr,
                                size,
                                stream,
                                fstream
                            );
                        }
                    }
                    freed.retain(|&(fa, fs, _, _)| !(fa < ptr + size && ptr < fa + fs));
                }
                None => {}
            }
            if hold_events && i % 7 == 0 {
                d.complete_events();
            }
        }
        d.complete_events();
        r.finish(&mut a).map_err(TestCaseError::fail)?;
    }
    prop_assert!(d.leaks().is_empty(), "leaks: {:?}", d.leaks());
    Ok(())
}

fn configs() -> Vec<Config> {
    vec![
        Config::parse("expandable_segments:False").unwrap(),
        Config::parse("expandable_segments:False,max_split_size_mb:64,roundup_power2_divisions:4").unwrap(),
        Config::default(),
        Config::parse("max_split_size_mb:64,garbage_collection_threshold:0.5,per_process_memory_fraction:0.9").unwrap(),
        Config::pytorch_expandable(),
    ]
}

/// Cases per property: `PROPTEST_CASES` when set (a long run:
/// `PROPTEST_CASES=100000 cargo test --release -p expanse-core --test
/// properties`), else 64 to keep CI fast.
fn cases() -> u32 {
    cases_from(std::env::var("PROPTEST_CASES").ok().as_deref())
}

fn cases_from(var: Option<&str>) -> u32 {
    var.and_then(|v| v.trim().parse().ok()).unwrap_or(64)
}

#[test]
fn proptest_cases_knob_is_read() {
    assert_eq!(cases_from(None), 64);
    assert_eq!(cases_from(Some("5000")), 5000);
    assert_eq!(cases_from(Some("junk")), 64);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_keep_every_property(bytes in proptest::collection::vec(any::<u8>(), 0..2400), which in 0usize..5, hold in any::<bool>()) {
        run(&bytes, configs()[which].clone(), 2 << 30, hold)?;
    }

    /// A small device runs out of memory often: every OOM must leave the
    /// allocator consistent and usable.
    #[test]
    fn random_sequences_on_a_tiny_device(bytes in proptest::collection::vec(any::<u8>(), 0..1200), which in 0usize..5) {
        run(&bytes, configs()[which].clone(), 256 * MIB, false)?;
    }

    /// Random configurations, extremes included (`ops::random_config`),
    /// on devices from 64 MiB to 4 GiB.
    #[test]
    fn random_configs_keep_every_property(conf in proptest::collection::vec(any::<u8>(), CONFIG_BYTES), bytes in proptest::collection::vec(any::<u8>(), 0..1600), device in 0usize..3, hold in any::<bool>()) {
        let capacity = [64 * MIB, 512 * MIB, 4 << 30][device];
        run(&bytes, random_config(&conf, capacity), capacity, hold)?;
    }

    /// Every generated configuration prints to a string that parses back
    /// to it (the property the config fuzz target checks on any input).
    #[test]
    fn random_configs_survive_printing(conf in proptest::collection::vec(any::<u8>(), CONFIG_BYTES)) {
        let c = random_config(&conf, 4 << 30);
        prop_assert_eq!(Config::parse(&c.to_conf_string()).unwrap(), c);
    }
}

/// Every key's last value is reachable from [`CONFIG_BYTES`] bytes: two
/// zero bytes pick expanse's mode, then bytes 0xFF set every optional key
/// (odd) to value 255 mod n of its list, the second of each two-valued one
/// (the last keys once read past the 32 bytes the tests generated, and so
/// only ever took their first value).
#[test]
fn random_configs_reach_every_keys_values() {
    let bytes = [[0u8; 2].as_slice(), &[0xFF; CONFIG_BYTES - 2]].concat();
    let c = random_config(&bytes, 4 << 30);
    assert!(c.expandable_segments && !c.pytorch_compat, "expanse mode");
    assert_eq!(c.overshoot_share, 32);
    assert!(c.move_above_peak_only && c.move_whole_first && c.grow_fewest && c.small_from_large);
}

/// The long run (issue 10): `EXPANSE_LONG_OPS` operations (10^7 unless
/// set) decoded from pseudo-random bytes, a fresh random configuration
/// and device every 100,000; the shadow model after every operation,
/// `check_invariants` every 100 and at each end, the mock's contract and
/// leak checks at each end. Prints its figures. Run:
/// `cargo test --release -p expanse-core --test properties long_run -- --ignored --nocapture`
#[test]
#[ignore]
fn long_run() {
    let total: u64 = std::env::var("EXPANSE_LONG_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let start = std::time::Instant::now();
    let (mut done, mut checks, mut rounds) = (0u64, 0u64, 0u64);
    let mut refused: std::collections::BTreeMap<&str, u64> = Default::default();
    while done < total {
        let capacity = [256 * MIB, 2 << 30, 16 << 30][(next() % 3) as usize];
        let conf: Vec<u8> = (0..CONFIG_BYTES).map(|_| next() as u8).collect();
        let config = random_config(&conf, capacity);
        let d = Arc::new(MockDevice::new(capacity, 2 * MIB));
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, config.clone());
        let mut r = Runner::default();
        r.check_invariants = false;
        let n = 100_000.min(total - done);
        let bytes: Vec<u8> = (0..n * 4 / 8 + 1).flat_map(|_| next().to_le_bytes()).collect();
        for (i, op) in decode(&bytes[..(n * 4) as usize], capacity / 4).into_iter().enumerate() {
            r.step(&mut a, op).unwrap_or_else(|e| panic!("round {rounds} op {i} {op:?} ({config:?}): {e}"));
            if i % 100 == 99 {
                a.check_invariants().unwrap_or_else(|e| panic!("round {rounds} op {i}: {e}"));
                checks += 1;
            }
        }
        assert!(d.violations().is_empty(), "{:?}", d.violations());
        r.finish(&mut a).unwrap_or_else(|e| panic!("round {rounds} finish: {e}"));
        checks += 1;
        for (k, v) in &r.refused {
            *refused.entry(k).or_default() += v;
        }
        drop(a);
        assert!(d.leaks().is_empty(), "leaks: {:?}", d.leaks());
        done += n;
        rounds += 1;
    }
    println!(
        "long run: {done} operations in {rounds} rounds (random config and device each), {:.1} s, {checks} invariant checks, refused as expected: {refused:?}",
        start.elapsed().as_secs_f64()
    );
}
