//! Property tests: random operation sequences, decoded from bytes (the
//! same decoder the fuzzer uses), on the strict mock device under every
//! mode. After every operation: no overlap with the shadow model, stats
//! agree, invariants hold, the device contract is kept. At the end,
//! everything freed and `empty_cache` leave nothing reserved or leaked.

use std::sync::Arc;

use expanse_core::ops::{decode, Runner, Step};
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
        // length at the free).
        let mut freed: Vec<(u64, u64, StreamId, usize)> = Vec::new();
        for (i, op) in decode(bytes, 300 * MIB).into_iter().enumerate() {
            if let Err(e) = r.step(&mut a, op) {
                return Err(TestCaseError::fail(format!("op {i} {op:?}: {e}")));
            }
            prop_assert!(d.violations().is_empty(), "op {} {:?}: {:?}", i, op, d.violations());
            match r.last {
                Some(Step { addr, size, stream, allocated: false }) => {
                    freed.push((addr, size, stream, d.ordering().len()))
                }
                Some(Step { addr: ptr, size, stream, allocated: true }) => {
                    // Memory another stream used must not be handed out
                    // before that stream's work is ordered first: a wait of
                    // this stream on it, or a host synchronization.
                    let log = d.ordering();
                    for &(fa, fs, fstream, at) in &freed {
                        if fa < ptr + size && ptr < fa + fs && fstream != stream {
                            let ordered = log[at..].iter().any(|o| match *o {
                                Ordering::Wait { waiter, on } => waiter == stream && on == fstream,
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
}
