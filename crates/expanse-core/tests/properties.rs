//! Property tests: random operation sequences, decoded from bytes (the
//! same decoder the fuzzer uses), on the strict mock device under every
//! mode. After every operation: no overlap with the shadow model, stats
//! agree, invariants hold, the device contract is kept. At the end,
//! everything freed and `empty_cache` leave nothing reserved or leaked.

use std::sync::Arc;

use expanse_core::ops::{decode, random_config, Runner, Step};
use expanse_core::{Config, DeviceAllocator};
use expanse_device::Device;
use expanse_device::StreamId;
use expanse_mock::{MockDevice, Ordering};
use proptest::prelude::*;

const MIB: u64 = 1 << 20;

fn run(bytes: &[u8], config: Config, capacity: u64, hold_events: bool) -> Result<(), TestCaseError> {
    let d = Arc::new(MockDevice::new(capacity, 2 * MIB));
    d.hold_events(hold_events);
    {
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, config);
        let mut r = Runner::default();
        // Freed memory: (address, size, stream that used it, ordering-log
        // length when the free began).
        let mut freed: Vec<(u64, u64, StreamId, usize)> = Vec::new();
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
                    // before that stream's work is ordered first: a wait of
                    // this stream on an event recorded on it since the free
                    // began, such an event found complete, or a host
                    // synchronization.
                    let log = d.ordering();
                    for &(fa, fs, fstream, at) in &freed {
                        if fa < ptr + size && ptr < fa + fs && fstream != stream {
                            let ordered = log[at..].iter().any(|o| match *o {
                                Ordering::Wait { waiter, on, recorded_at } => {
                                    waiter == stream && on == fstream && recorded_at >= at
                                }
                                Ordering::Completed { on, recorded_at } => on == fstream && recorded_at >= at,
                                Ordering::SyncStream(s) => s == fstream,
                                Ordering::SyncAll => true,
                            });
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
    fn random_configs_keep_every_property(conf in proptest::collection::vec(any::<u8>(), 32), bytes in proptest::collection::vec(any::<u8>(), 0..1600), device in 0usize..3, hold in any::<bool>()) {
        let capacity = [64 * MIB, 512 * MIB, 4 << 30][device];
        run(&bytes, random_config(&conf, capacity), capacity, hold)?;
    }

    /// Every generated configuration prints to a string that parses back
    /// to it (the property the config fuzz target checks on any input).
    #[test]
    fn random_configs_survive_printing(conf in proptest::collection::vec(any::<u8>(), 32)) {
        let c = random_config(&conf, 4 << 30);
        prop_assert_eq!(Config::parse(&c.to_conf_string()).unwrap(), c);
    }
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
        let conf: Vec<u8> = (0..32).map(|_| next() as u8).collect();
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
